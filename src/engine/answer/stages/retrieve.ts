import type { GateTrace, RetrievalRecord, SearchRewriteTrace } from '../../../shared/trace'
import type { ResolvedScope } from '../../retrieve/scope'
import type { RetrievalOutcome } from '../context'
import { decideGate } from '../gate'
import { withBridges } from '../../retrieve/bridge'
import type { ChatModel } from '../../core/model-ports'
import { errorText, type AskSections, type StageEnv } from './run'

/** The passages found for the question, the gate's verdict on them, and what the trace and the result say of it. */
export interface Retrieved {
  retrieval: RetrievalOutcome
  gate: GateTrace
  trace: Pick<AskSections, 'retrieval' | 'gate' | 'query_rewrite' | 'query_rewrite_retrieval'>
  /** The answer rests on weaker evidence than it should (a retriever or the reranker was missing). */
  degraded: boolean
  /** Why the result is degraded, in words for the person asking. */
  notices: string[]
}

/**
 * Hybrid retrieval in scope, reranked to the top few, then the relevance gate on reranker scores
 * (or the documented fallback) before any model call; optionally one search with a rewritten
 * query when the gate finds nothing.
 */
export async function retrieveAndGate(
  env: StageEnv,
  standalone: string,
  scope: ResolvedScope,
  searchOnly: boolean,
): Promise<Retrieved> {
  const { ctx, opts } = env
  env.checkAbort()
  env.stage('search', `Searching ${scope.label}`)
  let retrieval = await search(env, standalone, scope)
  const trace: Retrieved['trace'] = { retrieval: retrievalRecord(retrieval) }

  env.stage('gate', `Checking whether ${retrieval.results.length} passages are related to your question`)
  let gate = await gateFor(env, standalone, scope, retrieval)
  trace.gate = gate

  if (!gate.decision.pass && opts.gate && opts.queryRewriteRetry && ctx.chat && !searchOnly) {
    env.stage('rewrite', 'Nothing close enough; trying the search again with different words')
    const rw = await rewriteForSearch(ctx.chat, standalone, opts.signal).catch((err: unknown): SearchRewriteTrace => ({
      query: null,
      raw: '',
      problem: errorText(err),
    }))
    trace.query_rewrite = rw
    if (rw.query && rw.query !== standalone) {
      env.stage('search', `Searching ${scope.label} again`)
      const second = await search(env, rw.query, scope)
      const secondGate = await gateFor(env, rw.query, scope, second)
      trace.query_rewrite_retrieval = { ...retrievalRecord(second), gate: secondGate }
      if (secondGate.decision.pass) {
        retrieval = second
        gate = secondGate
      }
    }
  }
  const notices = [...retrieval.notices]
  // A fallback model answered (the chosen one could not load): say so.
  if (ctx.chat && ctx.chatProblem) notices.push(`Answered with a fallback model: ${ctx.chatProblem}.`)
  if (gate.decision.basis === 'fallback' && opts.gate) {
    notices.push('No reranker was available, so relevance was judged from keyword and vector evidence only (less reliable).')
  }
  return { retrieval, gate, trace, degraded: retrieval.degraded || gate.decision.basis === 'fallback', notices }
}

function search(env: StageEnv, query: string, scope: ResolvedScope): Promise<RetrievalOutcome> {
  const { passages, mode, rerank, signal } = env.opts
  return env.ctx.retrieve(query, scope, { k: passages, mode, rerank, signal })
}

async function gateFor(env: StageEnv, query: string, scope: ResolvedScope, retrieval: RetrievalOutcome): Promise<GateTrace> {
  const topKeyword = retrieval.trace.keyword?.[0]?.chunk_id ?? null
  // The gate weighs the words keyword search read: a word no passage holds, as its bridge
  // (retrieve/bridge.ts). A bridge is the embedder's guess at what the word means, so whether the
  // question is off topic is still judged by its own words ("science" is not "discovery").
  const bridged = retrieval.trace.bridged ?? []
  let keyword = scope.collections.length ? await env.ctx.keywordEvidence(withBridges(query, bridged), scope, topKeyword) : null
  if (keyword && bridged.length > 0)
    keyword = { ...keyword, known_share: (await env.ctx.keywordEvidence(query, scope, topKeyword)).known_share }
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
    thresholdOverride: env.opts.gateThreshold ?? null,
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
    ...(r.trace.bridged ? { bridged: r.trace.bridged } : {}),
    results: r.results.map((h) => h.chunk_id),
  }
}
