import { askResultBase, type AbstainReason, type AskRequest, type AskResult, type AskResultBase } from '../../shared/answer'
import type { AskOutcome, ScopeTrace } from '../../shared/trace'
import type { SearchHit } from '../../shared/search'
import type { ChatModel } from '../core/model-ports'
import type { PromptPassage } from './prompt'
import type { AskContext, AskOptions } from './context'
import { scopeInfo, type ResolvedScope } from '../retrieve/scope'
import { stripGreeting } from './route'
import { lookUpCache, type CacheSlot } from './stages/cache'
import { choosePassages, generateAnswer } from './stages/generate'
import { withReleaseSource } from './stages/release-source'
import { toCitation, toClosest } from './stages/passages'
import { retrieveAndGate } from './stages/retrieve'
import { rewriteFollowUp } from './stages/rewrite'
import { AskRun, type AskSections } from './stages/run'
import { conclude } from './stages/verdict'

export { DEFAULT_ASK_OPTIONS, type AskContext, type AskOptions, type RetrievalOutcome } from './context'

/**
 * The grounded-answer pipeline, as plain orchestration over injected dependencies (retrieval,
 * the chat model, the store), so every branch can be driven by a scripted model in tests:
 *
 *   route (small talk, no retrieval) -> follow-up rewrite -> cache -> hybrid retrieval + rerank
 *   -> relevance gate (abstain without calling the model) -> release rules (a release that never
 *   mentions what is asked about, before the model) -> answer from delimited, trimmed passages
 *   -> verify every sentence against its citations (one corrective retry) -> final result + trace.
 *
 * Each stage lives in stages/ and returns what it found, with its sections of the typed trace
 * (AskTrace); the pipeline alone assembles the trace and the result from them.
 */

/** Sections listed when the answer abstains. */
const CLOSEST = 5

/** What the pipeline has assembled of a question so far, and how it ends the question with it. */
interface Assembly {
  run: AskRun
  /** The trace's sections, in the order the stages found them. */
  trace: AskSections
  /** The fields every result of this question shares, as the stages learn them. */
  base: AskResultBase
  /** The question as asked, without a greeting, and as retrieval uses it (a follow-up rewritten). */
  question: string
  standalone: string
  finish(result: AskResult, outcome: AskOutcome): Promise<AskResult>
}

export async function runAsk(ctx: AskContext, request: AskRequest, options: AskOptions = {}): Promise<AskResult> {
  const run = await AskRun.begin(ctx, request, options)
  const { req, opts } = run
  const base = askResultBase(run.ids)
  if (run.smalltalk) {
    const result: AskResult = { ...base, answer: run.smalltalk.reply, abstained: true, reason: 'smalltalk', mode: 'smalltalk' }
    return run.finish({}, result, 'smalltalk', req.question)
  }
  const question = stripGreeting(req.question)
  const chat = req.searchOnly ? null : ctx.chat
  const searchOnly = !chat
  const rewritten = await rewriteFollowUp(run, chat, question, base.thread_id)
  const standalone = rewritten.standalone
  const trace: AskSections = rewritten.trace ? { rewrite: rewritten.trace } : {}
  trace.standalone_question = standalone
  if (standalone !== question) base.rewritten_question = standalone
  const finish = (result: AskResult, outcome: AskOutcome) => run.finish(trace, result, outcome, standalone)
  const assembled: Assembly = { run, trace, base, question, standalone, finish }

  // The standalone question: a follow-up ("and in the latest release?") names its version there too.
  const scope = await ctx.resolveScope({ collections: req.scope.collections, version: req.scope.version }, standalone)
  base.scope_label = scope.label
  base.scope = scopeInfo(scope)
  trace.scope = scopeTrace(scope)

  const cache = await lookUpCache(run, standalone, scope, searchOnly)
  if (cache.trace) trace.cache = cache.trace
  if (cache.hit) {
    const { trace_id, thread_id, rewritten_question } = base
    return finish({ ...cache.hit.result, trace_id, thread_id, cached: true, rewritten_question }, 'cached')
  }

  const found = await retrieveAndGate(run, standalone, scope, searchOnly)
  Object.assign(trace, found.trace)
  base.degraded = found.degraded
  base.notices = found.notices
  const hits = found.retrieval.results
  if (opts.gate && !found.gate.decision.pass) {
    const reason: AbstainReason = found.gate.decision.refusal ?? 'no_relevant_sources'
    const closest = hits.slice(0, CLOSEST).map((h) => toClosest(h, standalone))
    return finish(
      { ...base, answer: null, abstained: true, reason, closest, mode: searchOnly ? 'search-only' : 'answer' },
      reason,
    )
  }
  return answerFromPassages(assembled, chat, scope, hits, cache.slot)
}

/** After the gate: the release rules, then the passages alone (search-only) or the model's verified answer. */
async function answerFromPassages(
  assembled: Assembly,
  chat: ChatModel | null,
  scope: ResolvedScope,
  hits: SearchHit[],
  cacheSlot: CacheSlot | null,
): Promise<AskResult> {
  const { run, trace, base, standalone, finish } = assembled
  const { ctx, req } = run
  // The release rules that need no model: a release that never mentions what is asked about.
  run.stage('release', `Checking what ${scope.label} says about the terms of your question`)
  const release = await ctx.checkRelease(scope, standalone, trace.retrieval?.bridged ?? [])
  trace.release = release.trace
  if (release.explanation && chat) {
    const closest = hits.slice(0, CLOSEST).map((h) => toClosest(h, standalone))
    const refusal = { answer: null, abstained: true, reason: 'no_relevant_sources', mode: 'answer' } as const
    const result: AskResult = { ...base, ...refusal, explanation: release.explanation, closest }
    return finish(result, 'no_relevant_sources')
  }
  if (release.explanation) base.notices.push(release.explanation)

  // Search-only: the best passages with citations, no generated text.
  if (!chat) {
    if (!ctx.chat && !req.searchOnly)
      base.notices.push(
        `No language model is available (${ctx.chatProblem ?? 'none installed'}); showing the best passages instead of an answer.`,
      )
    const ids = hits.map((h) => h.chunk_id)
    trace.passages = ids
    const citations = hits.map((h, i) => toCitation(h, i + 1))
    // Each passage's excerpt goes along (as `closest`), so front ends show what it says, not only where it is.
    const closest = hits.map((h) => toClosest(h, standalone))
    const result: AskResult = {
      ...base,
      answer: null,
      abstained: false,
      reason: null,
      mode: 'search-only',
      passages: ids,
      citations,
      closest,
    }
    return finish(result, 'search-only')
  }

  hits = await withReleaseSource(run, release, scope, standalone, hits) // the release's own source, read first
  const chosen = choosePassages(run, chat, standalone, hits, scope)
  Object.assign(trace, chosen.trace)
  if (chosen.notice) base.notices.push(chosen.notice)
  base.passages = chosen.passages.map((p) => p.chunk_id)
  // The model reads each passage cut to what bears on the question; its sentences are checked
  // against the whole passage, which is what a citation opens.
  const full = wholePassages(chosen.passages, hits)
  const generated = await generateAnswer(run, chat, { question: assembled.question, standalone }, chosen.passages, full, scope)
  Object.assign(trace, generated.trace)
  const verdict = await conclude({
    generated: generated.outcome,
    passages: full,
    hits,
    release,
    standalone,
    base,
    history: scope.changeLogFirst,
    quoteShare: run.opts.quoteShare,
    closeness: ctx.closeness,
    closeRule: run.opts.closeRule,
  })
  Object.assign(trace, verdict.trace)
  trace.release = { ...release.trace, ...verdict.release }
  if (verdict.outcome === 'answer' && cacheSlot) {
    const { key, state } = cacheSlot
    await ctx.store.cachePut(key, { question: standalone, state, result: verdict.result })
  }
  return finish(verdict.result, verdict.outcome)
}

function scopeTrace(scope: ResolvedScope): ScopeTrace {
  return {
    label: scope.label,
    collections: scope.collections,
    versions: scope.versions,
    source: scope.source,
    named: scope.named,
    change_log_first: scope.changeLogFirst,
  }
}

function wholePassages(passages: PromptPassage[], hits: SearchHit[]): PromptPassage[] {
  const text = new Map(hits.map((h) => [h.chunk_id, h.text]))
  return passages.map((p) => ({ ...p, text: text.get(p.chunk_id) ?? p.text }))
}
