import { randomUUID } from 'node:crypto'
import type { AbstainReason, AskEvent, AskStage, Citation, ClosestSection } from '../../shared/answer'
import { AskRequest, AskResult } from '../../shared/answer'
import type { SearchHit, SearchMode, SearchResult } from '../../shared/search'
import type { ResolvedScope } from '../retrieve/scope'
import type { RetrievalTrace } from '../retrieve/search'
import { classifySmalltalk, stripGreeting } from './route'
import { looksLikeFollowUp, rewriteFollowUpDeterministic, rewriteFollowUpWithModel } from './followup'
import { decideGate, type GateDecision, type KeywordEvidence } from './gate'
import {
  ANSWER_SCHEMA,
  ANSWER_SYSTEM_PROMPT,
  AnswerDraftExtractor,
  buildAnswerUserPrompt,
  buildCorrectionPrompt,
  CORRECTION_RESERVE_TOKENS,
  fitPassages,
  type PromptPassage,
} from './prompt'
import { verifyCitations, type Verification } from './verify'
import { AnswerStore, type IndexState } from './store'
import type { ChatModelLike, GenerateJsonResult } from './types'

/**
 * The grounded-answer pipeline, as plain orchestration over injected dependencies (retrieval,
 * the chat model, the store), so every branch can be driven by a scripted model in tests:
 *
 *   route (small talk, no retrieval) -> follow-up rewrite -> cache -> hybrid retrieval + rerank
 *   -> relevance gate (abstain without calling the model) -> answer from delimited passages
 *   -> verify citations (one corrective retry) -> final result + trace.
 */

export interface RetrievalOutcome extends SearchResult {
  trace: RetrievalTrace
  /** Models that actually ran (null when the stage did not run). */
  rerankerId: string | null
  embedderId: string | null
}

export interface AskContext {
  resolveScope(scope: { collections: string[]; version: string }): Promise<ResolvedScope>
  retrieve(
    query: string,
    scope: ResolvedScope,
    opts: { k: number; mode: SearchMode; rerank: boolean; signal?: AbortSignal },
  ): Promise<RetrievalOutcome>
  keywordEvidence(query: string, scope: ResolvedScope, topKeywordChunkId: string | null): Promise<KeywordEvidence>
  /** Ids of the retrieval models a search with these options would use (part of the cache key). */
  retrievalModels(opts: { mode: SearchMode; rerank: boolean }): Promise<{ embedder: string | null; reranker: string | null }>
  /** null: no language model installed (or it failed to load): search-only mode. */
  chat: ChatModelLike | null
  chatProblem: string | null
  store: AnswerStore
}

export interface AskOptions {
  /** Passages given to the model (the reranked top). */
  passages?: number
  mode?: SearchMode
  rerank?: boolean
  /** Apply the relevance gate (eval configurations switch it off to measure what it adds). */
  gate?: boolean
  /** Replaces the per-model threshold from gate.ts (calibration runs, tests). */
  gateThreshold?: number | null
  /** One corrective retry when verification fails. */
  correctiveRetry?: boolean
  /** One query-rewrite retry when the gate finds nothing. Off by default: seed 000's rewrite loop fixed nothing. */
  queryRewriteRetry?: boolean
  useCache?: boolean
  /** Reply budget of the answer model. */
  maxAnswerTokens?: number
  onEvent?: (e: AskEvent) => void
  signal?: AbortSignal
}

export const DEFAULT_ASK_OPTIONS = {
  passages: 6,
  mode: 'hybrid' as SearchMode,
  rerank: true,
  gate: true,
  correctiveRetry: true,
  queryRewriteRetry: false,
  useCache: true,
  maxAnswerTokens: 700,
}

/** One language-model call as the trace keeps it. */
interface AttemptTrace {
  attempt: number
  purpose: 'answer' | 'correction'
  raw: string
  tokens_in: number
  tokens_out: number
  stop_reason: string
  ms: number
  verification: Pick<Verification, 'ok' | 'problems' | 'warnings' | 'markers' | 'unsupported_numbers' | 'unsupported_quotes'> & {
    answerable: boolean | null
  }
}

const CLOSEST = 5

export async function runAsk(ctx: AskContext, request: AskRequest, options: AskOptions = {}): Promise<AskResult> {
  const req = AskRequest.parse(request)
  const opts = { ...DEFAULT_ASK_OPTIONS, ...stripUndefined(options) }
  const started = performance.now()
  const traceId = randomUUID()
  const stages: Record<string, number> = {}
  const trace: Record<string, unknown> = {
    version: 1,
    question: req.question,
    scope_requested: req.scope,
    options: {
      passages: opts.passages,
      mode: opts.mode,
      rerank: opts.rerank,
      gate: opts.gate,
      gate_threshold: opts.gateThreshold ?? null,
      corrective_retry: opts.correctiveRetry,
      query_rewrite_retry: opts.queryRewriteRetry,
      use_cache: opts.useCache,
      search_only: !!req.searchOnly,
    },
    models: { llm: ctx.chat?.id ?? null, llm_problem: ctx.chatProblem },
    stages_ms: stages,
  }
  const emit = (e: AskEvent) => opts.onEvent?.(e)
  let currentStage: { name: string; t0: number } | null = null
  const stage = (name: AskStage, message: string) => {
    endStage()
    currentStage = { name, t0: performance.now() }
    emit({ type: 'stage', stage: name, message })
  }
  const endStage = () => {
    if (!currentStage) return
    stages[currentStage.name] = round((stages[currentStage.name] ?? 0) + performance.now() - currentStage.t0)
    currentStage = null
  }
  const checkAbort = () => {
    if (opts.signal?.aborted)
      throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('The question was cancelled.')
  }

  const threadId = await ctx.store.ensureThread(req.threadId, req.question)
  const base = {
    trace_id: traceId,
    thread_id: threadId,
    cached: false,
    citations: [] as Citation[],
    passages: [] as string[],
    closest: [] as ClosestSection[],
    unanswered_parts: [] as string[],
    warnings: [] as string[],
    notices: [] as string[],
    degraded: false,
    rewritten_question: null as string | null,
    scope_label: '',
  }
  let standalone = req.question
  const finish = async (unordered: AskResult, outcome: string): Promise<AskResult> => {
    // Parsing validates the result and puts its keys in contract order (answer, abstained, reason, ...).
    const result = AskResult.parse(unordered)
    stage('done', result.abstained ? 'Done (no answer from the documents)' : 'Done')
    endStage()
    const ms = round(performance.now() - started)
    trace['result'] = result
    await ctx.store.saveTrace({ id: traceId, thread_id: threadId, question: req.question, outcome, ms, data: trace })
    await ctx.store.appendTurn(threadId, { question: req.question, standalone, result })
    emit({ type: 'final', result })
    return result
  }

  // (a) Route: small talk gets a short reply before any retrieval.
  stage('route', 'Reading your question')
  const smalltalk = classifySmalltalk(req.question)
  trace['route'] = { smalltalk: smalltalk?.kind ?? null }
  if (smalltalk) {
    return finish({ ...base, answer: smalltalk.reply, abstained: true, reason: 'smalltalk', mode: 'smalltalk' }, 'smalltalk')
  }
  const question = stripGreeting(req.question)

  // (b) Follow-ups: rewrite into a standalone question from recent turns, for retrieval only.
  const history = await ctx.store.history(threadId)
  standalone = question
  if (history.length > 0 && looksLikeFollowUp(question)) {
    stage('rewrite', 'Working out what your follow-up refers to')
    const deterministic = rewriteFollowUpDeterministic(question, history)
    let model: Awaited<ReturnType<typeof rewriteFollowUpWithModel>> | null = null
    if (ctx.chat && !req.searchOnly) {
      try {
        model = await rewriteFollowUpWithModel(ctx.chat, question, history, opts.signal)
      } catch (err) {
        checkAbort()
        model = { standalone: null, raw: '', tokensIn: 0, tokensOut: 0, problem: errorText(err) }
      }
    }
    standalone = model?.standalone ?? deterministic ?? question
    trace['rewrite'] = {
      history: history.map((h) => h.standalone),
      deterministic,
      model,
      used: model?.standalone ? 'model' : deterministic ? 'deterministic' : 'none',
    }
    if (standalone !== question) base.rewritten_question = standalone
  }
  trace['standalone_question'] = standalone

  const scope = await ctx.resolveScope({ collections: req.scope.collections, version: req.scope.version })
  base.scope_label = scope.label
  trace['scope'] = { label: scope.label, collections: scope.collections, versions: scope.versions }
  const searchOnly = !!req.searchOnly || !ctx.chat

  // Cache: verified answers to the same question in the same scope, while the index is unchanged.
  let cacheKey: string | null = null
  let state: IndexState = {}
  if (opts.useCache && !searchOnly) {
    stage('cache', 'Checking for a recent answer to the same question')
    state = await ctx.store.indexState(scope.collections)
    const dropped = await ctx.store.dropStale(state)
    cacheKey = AnswerStore.cacheKey({
      question: standalone,
      scope: { collections: [...scope.collections].sort(), versions: scope.versions },
      pipeline: {
        llm: ctx.chat?.id,
        ...(await ctx.retrievalModels({ mode: opts.mode, rerank: opts.rerank })),
        passages: opts.passages,
        mode: opts.mode,
        rerank: opts.rerank,
        gate: opts.gate,
        threshold: opts.gateThreshold ?? null,
        retry: opts.correctiveRetry,
      },
    })
    const hit = await ctx.store.cacheGet(cacheKey, state)
    trace['cache'] = { key: cacheKey, index_state: state, dropped_stale: dropped, hit: !!hit, from_trace: hit?.trace_id ?? null }
    if (hit) {
      return finish(
        { ...hit.result, trace_id: traceId, thread_id: threadId, cached: true, rewritten_question: base.rewritten_question },
        'cached',
      )
    }
  }

  // (c) Hybrid retrieval in scope, reranked to the top few.
  checkAbort()
  stage('search', `Searching ${scope.label}`)
  let retrieval = await ctx.retrieve(standalone, scope, {
    k: opts.passages,
    mode: opts.mode,
    rerank: opts.rerank,
    ...(opts.signal ? { signal: opts.signal } : {}),
  })
  trace['retrieval'] = retrievalTrace(retrieval)

  // (d) Gate on reranker scores (or the documented fallback), before any model call.
  stage('gate', `Checking whether ${retrieval.results.length} passages are related to your question`)
  let gate = await gateFor(ctx, standalone, scope, retrieval, opts)
  trace['gate'] = gate

  // (h) Optional: one query-rewrite retry when the gate finds nothing.
  if (!gate.decision.pass && opts.gate && opts.queryRewriteRetry && ctx.chat && !searchOnly) {
    stage('rewrite', 'Nothing close enough; trying the search again with different words')
    const rw = await rewriteForSearch(ctx.chat, standalone, opts.signal).catch((err) => ({
      query: null,
      raw: '',
      problem: errorText(err),
    }))
    trace['query_rewrite'] = rw
    if (rw.query && rw.query !== standalone) {
      stage('search', `Searching ${scope.label} again`)
      const second = await ctx.retrieve(rw.query, scope, {
        k: opts.passages,
        mode: opts.mode,
        rerank: opts.rerank,
        ...(opts.signal ? { signal: opts.signal } : {}),
      })
      const secondGate = await gateFor(ctx, rw.query, scope, second, opts)
      trace['query_rewrite_retrieval'] = { ...retrievalTrace(second), gate: secondGate }
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
  const hits = retrieval.results
  const closest = hits.slice(0, CLOSEST).map(toClosest)

  if (opts.gate && !gate.decision.pass) {
    const reason: AbstainReason = gate.decision.refusal ?? 'no_relevant_sources'
    return finish(
      { ...base, answer: null, abstained: true, reason, closest, mode: searchOnly ? 'search-only' : 'answer' },
      reason,
    )
  }

  // Search-only: the best passages with citations, no generated text.
  if (searchOnly) {
    if (!ctx.chat && !req.searchOnly)
      base.notices.push(
        `No language model is available (${ctx.chatProblem ?? 'none installed'}); showing the best passages instead of an answer.`,
      )
    trace['passages'] = hits.map((h) => h.chunk_id)
    return finish(
      {
        ...base,
        answer: null,
        abstained: false,
        reason: null,
        mode: 'search-only',
        passages: hits.map((h) => h.chunk_id),
        citations: hits.map((h, i) => toCitation(h, i + 1)),
      },
      'search-only',
    )
  }
  const chat = ctx.chat!

  // (e) The model answers from numbered, delimited, labelled passages.
  const fitted = fitPassages(hits.map(toPromptPassage), {
    contextSize: chat.info.contextSize,
    replyTokens: opts.maxAnswerTokens,
    reserveTokens: opts.correctiveRetry ? CORRECTION_RESERVE_TOKENS : 0,
    ...(chat.countTokens ? { countTokens: (t: string) => chat.countTokens!(t) } : {}),
    question: standalone,
    scopeLabel: scope.label,
  })
  const passages = fitted.passages
  trace['passages'] = passages.map((p) => p.chunk_id)
  trace['passages_fit'] = {
    given: passages.length,
    dropped: fitted.dropped,
    truncated: fitted.truncated,
    prompt_tokens: fitted.prompt_tokens,
    context_size: chat.info.contextSize,
    tokenizer: chat.countTokens ? 'model' : 'estimate',
  }
  if (fitted.dropped > 0)
    base.notices.push(
      `The language model's context holds ${passages.length} of ${hits.length} passages; the lowest-ranked were left out.`,
    )
  base.passages = passages.map((p) => p.chunk_id)
  const hitById = new Map(hits.map((h) => [h.chunk_id, h]))
  stage('read', `Reading ${passages.length} passage${passages.length === 1 ? '' : 's'}`)
  const userPrompt = buildAnswerUserPrompt(
    question === standalone ? question : `${standalone}\n(The person asked: "${question}")`,
    passages,
    scope.label,
  )

  const attempts: AttemptTrace[] = []
  trace['attempts'] = attempts
  const generate = async (
    attempt: number,
    user: string,
    purpose: AttemptTrace['purpose'],
  ): Promise<{ res: GenerateJsonResult; v: Verification }> => {
    stage(
      attempt === 1 ? 'generate' : 'retry',
      attempt === 1 ? 'Writing the answer' : 'The citations did not check out; asking the model to correct them',
    )
    const draft = new AnswerDraftExtractor()
    const t0 = performance.now()
    const res = await chat.generateJson({
      system: ANSWER_SYSTEM_PROMPT,
      user,
      schema: ANSWER_SCHEMA,
      maxTokens: opts.maxAnswerTokens,
      temperature: 0,
      onToken: (text) => {
        const t = draft.push(text)
        if (t) emit({ type: 'token', text: t, attempt })
      },
      ...(opts.signal ? { signal: opts.signal } : {}),
    })
    const ms = round(performance.now() - t0)
    checkAbort()
    stage('verify', 'Checking citations')
    const v = verifyCitations(res.parsed, passages)
    attempts.push({
      attempt,
      purpose,
      raw: res.raw,
      tokens_in: res.tokensIn,
      tokens_out: res.tokensOut,
      stop_reason: res.stopReason,
      ms,
      verification: {
        ok: v.ok,
        answerable: v.reply?.answerable ?? null,
        problems: v.problems,
        warnings: v.warnings,
        markers: v.markers,
        unsupported_numbers: v.unsupported_numbers,
        unsupported_quotes: v.unsupported_quotes,
      },
    })
    return { res, v }
  }

  let outcome: { res: GenerateJsonResult; v: Verification }
  try {
    outcome = await generate(1, userPrompt, 'answer')
  } catch (err) {
    checkAbort()
    // The model failed (out of memory, broken file): the passages are still useful.
    trace['model_error'] = errorText(err)
    base.notices.push(`The language model failed (${errorText(err)}); showing the best passages instead of an answer.`)
    return finish(
      {
        ...base,
        answer: null,
        abstained: false,
        reason: null,
        mode: 'search-only',
        citations: passages.map((p) => toCitation(hitById.get(p.chunk_id)!, p.n)),
      },
      'search-only',
    )
  }
  if (!outcome.v.ok && opts.correctiveRetry) {
    const problems = outcome.v.problems.map((p) => p.message)
    if (outcome.res.stopReason === 'maxTokens')
      problems.push('The reply was cut off because it was too long: answer more briefly.')
    try {
      outcome = await generate(
        2,
        correctionPrompt(chat, userPrompt, outcome.res.raw, problems, passages.length, opts.maxAnswerTokens),
        'correction',
      )
    } catch (err) {
      checkAbort()
      // The first reply already failed verification; without a corrected one there is nothing to show.
      trace['model_error'] = errorText(err)
    }
  }
  trace['tokens'] = { in: attempts.reduce((s, a) => s + a.tokens_in, 0), out: attempts.reduce((s, a) => s + a.tokens_out, 0) }

  const { v } = outcome
  const passageClosest = passages.map((p) => toClosest(hitById.get(p.chunk_id)!))
  if (v.ok && v.reply && !v.reply.answerable) {
    trace['verification'] = { result: 'not_in_context' }
    return finish(
      {
        ...base,
        answer: null,
        abstained: true,
        reason: 'not_in_context',
        closest: passageClosest,
        unanswered_parts: v.reply.unanswered_parts,
        mode: 'answer',
      },
      'not_in_context',
    )
  }
  if (!v.ok || !v.reply) {
    trace['verification'] = { result: 'unverifiable_citations', problems: v.problems }
    return finish(
      { ...base, answer: null, abstained: true, reason: 'unverifiable_citations', closest: passageClosest, mode: 'answer' },
      'unverifiable_citations',
    )
  }
  const byN = new Map(passages.map((p) => [p.n, p]))
  const citations = v.reply.citations.map((n) => toCitation(hitById.get(byN.get(n)!.chunk_id)!, n))
  trace['verification'] = { result: 'ok', warnings: v.warnings }
  const result: AskResult = {
    ...base,
    answer: v.reply.answer,
    abstained: false,
    reason: null,
    citations,
    unanswered_parts: v.reply.unanswered_parts,
    warnings: v.warnings.map((w) => w.message),
    mode: 'answer',
  }
  if (cacheKey) await ctx.store.cachePut(cacheKey, { question: standalone, state, result })
  return finish(result, 'answer')
}

/** The correction prompt, with the quoted previous reply shortened until it fits the context. */
function correctionPrompt(
  chat: ChatModelLike,
  user: string,
  raw: string,
  problems: string[],
  passageCount: number,
  replyTokens: number,
): string {
  let quote = raw
  let prompt = buildCorrectionPrompt(user, quote, problems, passageCount)
  if (!chat.countTokens) return prompt
  const limit = chat.info.contextSize - replyTokens - 96 - chat.countTokens(ANSWER_SYSTEM_PROMPT)
  while (quote.length > 0 && chat.countTokens(prompt) > limit) {
    quote = quote.slice(0, Math.floor(quote.length / 2))
    prompt = buildCorrectionPrompt(user, quote, problems, passageCount)
  }
  return prompt
}

async function gateFor(
  ctx: AskContext,
  query: string,
  scope: ResolvedScope,
  retrieval: RetrievalOutcome,
  opts: { gateThreshold?: number | null },
): Promise<{ decision: GateDecision; keyword: KeywordEvidence | null }> {
  const topKeyword = retrieval.trace.keyword?.[0]?.chunk_id ?? null
  const keyword = scope.collections.length ? await ctx.keywordEvidence(query, scope, topKeyword) : null
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
    thresholdOverride: opts.gateThreshold ?? null,
  })
  return { decision, keyword }
}

const SEARCH_REWRITE_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string' } },
  required: ['query'],
  additionalProperties: false,
} as const

async function rewriteForSearch(
  chat: ChatModelLike,
  question: string,
  signal?: AbortSignal,
): Promise<{ query: string | null; raw: string; problem: string | null }> {
  const res = await chat.generateJson({
    system:
      'Rewrite the question as a short search query for technical documentation: keep exact names, identifiers and error codes; use the words documentation would use. Do not answer it.',
    user: question,
    schema: SEARCH_REWRITE_SCHEMA,
    maxTokens: 60,
    temperature: 0,
    ...(signal ? { signal } : {}),
  })
  const q = (res.parsed as { query?: unknown } | null)?.query
  const query = typeof q === 'string' && q.trim() && q.length <= 300 ? q.trim() : null
  return { query, raw: res.raw, problem: query ? null : 'no usable query' }
}

function retrievalTrace(r: RetrievalOutcome): Record<string, unknown> {
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

export function toPromptPassage(h: SearchHit, i: number): PromptPassage {
  return {
    n: i + 1,
    chunk_id: h.chunk_id,
    path: h.path,
    heading: h.heading,
    kind: h.kind,
    version: h.version,
    page: h.page,
    text: h.text,
  }
}

function toCitation(h: SearchHit, n: number): Citation {
  return {
    n,
    chunk_id: h.chunk_id,
    path: h.path,
    heading: h.heading,
    version: h.version,
    page: h.page,
    kind: h.kind,
    collection: h.collection,
  }
}

function toClosest(h: SearchHit): ClosestSection {
  const snippet = h.text.replace(/\s+/g, ' ').trim()
  return {
    chunk_id: h.chunk_id,
    collection: h.collection,
    path: h.path,
    heading: h.heading,
    version: h.version,
    kind: h.kind,
    page: h.page,
    snippet: snippet.length > 240 ? snippet.slice(0, 239) + '…' : snippet,
    scores: h.scores,
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function round(x: number): number {
  return Math.round(x * 100) / 100
}
