import type { GateTrace, RetrievalRecord, SearchRewriteTrace } from '../../../shared/trace'
import type { ResolvedScope } from '../../retrieve/scope'
import type { RetrievalOutcome } from '../context'
import { decideGate } from '../gate'
import type { ChatModel } from '../../core/model-ports'
import { errorText, type AskRun } from './run'

/** The passages found for the question, and the gate's verdict on them. */
export interface Retrieved {
  retrieval: RetrievalOutcome
  gate: GateTrace
}

/**
 * Hybrid retrieval in scope, reranked to the top few, then the relevance gate on reranker scores
 * (or the documented fallback) before any model call; optionally one search with a rewritten
 * query when the gate finds nothing. Records why the result is degraded in `base.notices`.
 */
export async function retrieveAndGate(run: AskRun, scope: ResolvedScope, searchOnly: boolean): Promise<Retrieved> {
  const { ctx, opts, trace, base } = run
  run.checkAbort()
  run.stage('search', `Searching ${scope.label}`)
  let retrieval = await search(run, run.standalone, scope)
  trace.retrieval = retrievalRecord(retrieval)

  run.stage('gate', `Checking whether ${retrieval.results.length} passages are related to your question`)
  let gate = await gateFor(run, run.standalone, scope, retrieval)
  trace.gate = gate

  if (!gate.decision.pass && opts.gate && opts.queryRewriteRetry && ctx.chat && !searchOnly) {
    run.stage('rewrite', 'Nothing close enough; trying the search again with different words')
    const rw = await rewriteForSearch(ctx.chat, run.standalone, opts.signal).catch((err: unknown): SearchRewriteTrace => ({
      query: null,
      raw: '',
      problem: errorText(err),
    }))
    trace.query_rewrite = rw
    if (rw.query && rw.query !== run.standalone) {
      run.stage('search', `Searching ${scope.label} again`)
      const second = await search(run, rw.query, scope)
      const secondGate = await gateFor(run, rw.query, scope, second)
      trace.query_rewrite_retrieval = { ...retrievalRecord(second), gate: secondGate }
      if (secondGate.decision.pass) {
        retrieval = second
        gate = secondGate
      }
    }
  }
  base.degraded = retrieval.degraded || gate.decision.basis === 'fallback'
  base.notices = [...retrieval.notices]
  // A fallback model answered (the chosen one could not load): say so.
  if (ctx.chat && ctx.chatProblem) base.notices.push(`Answered with a fallback model: ${ctx.chatProblem}.`)
  if (gate.decision.basis === 'fallback' && opts.gate) {
    base.notices.push('No reranker was available, so relevance was judged from keyword and vector evidence only (less reliable).')
  }
  return { retrieval, gate }
}

function search(run: AskRun, query: string, scope: ResolvedScope): Promise<RetrievalOutcome> {
  const { passages, mode, rerank, signal } = run.opts
  return run.ctx.retrieve(query, scope, { k: passages, mode, rerank, signal })
}

async function gateFor(run: AskRun, query: string, scope: ResolvedScope, retrieval: RetrievalOutcome): Promise<GateTrace> {
  const topKeyword = retrieval.trace.keyword?.[0]?.chunk_id ?? null
  const keyword = scope.collections.length ? await run.ctx.keywordEvidence(query, scope, topKeyword) : null
  const reranked = retrieval.trace.reranked
  const bestReranker = reranked && reranked.length ? Math.max(...reranked.map((r) => r.reranker)) : null
  const vec = retrieval.trace.vector
  const bestCosine = vec && vec.length ? Math.max(...vec.map((r) => r.cosine)) : null
  const decision = decideGate({
    rerankerId: reranked ? retrieval.rerankerId : null,
    bestReranker,
    embedderId: retrieval.embedderId,
    bestCosine,
    keyword,
    thresholdOverride: run.opts.gateThreshold ?? null,
  })
  return { decision, keyword }
}

const SEARCH_REWRITE_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string' } },
  required: ['query'],
  additionalProperties: false,
} as const

async function rewriteForSearch(chat: ChatModel, question: string, signal?: AbortSignal): Promise<SearchRewriteTrace> {
  const res = await chat.generateJson({
    system:
      'Rewrite the question as a short search query for technical documentation: keep exact names, identifiers and error codes; use the words documentation would use. Do not answer it.',
    user: question,
    schema: SEARCH_REWRITE_SCHEMA,
    maxTokens: 60,
    temperature: 0,
    signal,
  })
  const q = (res.parsed as { query?: unknown } | null)?.query
  const query = typeof q === 'string' && q.trim() && q.length <= 300 ? q.trim() : null
  return { query, raw: res.raw, problem: query ? null : 'no usable query' }
}

function retrievalRecord(r: RetrievalOutcome): RetrievalRecord {
  return {
    mode: r.mode,
    rerank: r.rerank,
    degraded: r.degraded,
    notices: r.notices,
    timings_ms: r.timings_ms,
    reranker: r.rerankerId,
    embedder: r.embedderId,
    keyword: r.trace.keyword,
    vector: r.trace.vector,
    fused: r.trace.fused,
    reranked: r.trace.reranked,
    results: r.results.map((h) => h.chunk_id),
  }
}
