import type { AbstainReason, AskRequest, AskResult } from '../../shared/answer'
import type { SearchHit } from '../../shared/search'
import type { PromptPassage } from './prompt'
import type { AskContext, AskOptions } from './context'
import { scopeInfo } from '../retrieve/scope'
import { stripGreeting } from './route'
import { lookUpCache } from './stages/cache'
import { choosePassages, generateAnswer } from './stages/generate'
import { toCitation, toClosest } from './stages/passages'
import { retrieveAndGate } from './stages/retrieve'
import { rewriteFollowUp } from './stages/rewrite'
import { AskRun } from './stages/run'
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
 * Each stage lives in stages/ and writes its own section of the typed trace (AskTrace).
 */

/** Sections listed when the answer abstains. */
const CLOSEST = 5

export async function runAsk(ctx: AskContext, request: AskRequest, options: AskOptions = {}): Promise<AskResult> {
  const run = await AskRun.begin(ctx, request, options)
  const { req, opts, trace, base } = run
  if (run.smalltalk) {
    const reply = run.smalltalk.reply
    return run.finish({ ...base, answer: reply, abstained: true, reason: 'smalltalk', mode: 'smalltalk' }, 'smalltalk')
  }
  const question = stripGreeting(req.question)
  await rewriteFollowUp(run, question)

  // The standalone question: a follow-up ("and in the latest release?") names its version there too.
  const scope = await ctx.resolveScope({ collections: req.scope.collections, version: req.scope.version }, run.standalone)
  base.scope_label = scope.label
  base.scope = scopeInfo(scope)
  trace.scope = {
    label: scope.label,
    collections: scope.collections,
    versions: scope.versions,
    source: scope.source,
    named: scope.named,
    change_log_first: scope.changeLogFirst,
  }
  const chat = req.searchOnly ? null : ctx.chat
  const searchOnly = !chat

  const cache = await lookUpCache(run, scope, searchOnly)
  if (cache.hit) {
    const { trace_id, thread_id, rewritten_question } = base
    return run.finish({ ...cache.hit.result, trace_id, thread_id, cached: true, rewritten_question }, 'cached')
  }

  const { retrieval, gate } = await retrieveAndGate(run, scope, searchOnly)
  const hits = retrieval.results
  if (opts.gate && !gate.decision.pass) {
    const reason: AbstainReason = gate.decision.refusal ?? 'no_relevant_sources'
    const closest = hits.slice(0, CLOSEST).map((h) => toClosest(h, run.standalone))
    return run.finish(
      { ...base, answer: null, abstained: true, reason, closest, mode: searchOnly ? 'search-only' : 'answer' },
      reason,
    )
  }

  // The release rules that need no model: a release that never mentions what is asked about.
  run.stage('release', `Checking what ${scope.label} says about the terms of your question`)
  const release = await ctx.checkRelease(scope, run.standalone)
  trace.release = release.trace
  if (release.explanation && chat) {
    const closest = hits.slice(0, CLOSEST).map((h) => toClosest(h, run.standalone))
    return run.finish(
      {
        ...base,
        answer: null,
        abstained: true,
        reason: 'no_relevant_sources',
        explanation: release.explanation,
        closest,
        mode: 'answer',
      },
      'no_relevant_sources',
    )
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
    const closest = hits.map((h) => toClosest(h, run.standalone))
    return run.finish(
      { ...base, answer: null, abstained: false, reason: null, mode: 'search-only', passages: ids, citations, closest },
      'search-only',
    )
  }

  const passages = choosePassages(run, chat, hits, scope)
  // The model reads each passage cut to what bears on the question; its sentences are checked
  // against the whole passage, which is what a citation opens.
  const full = wholePassages(passages, hits)
  const generated = await generateAnswer(run, chat, question, passages, full, scope)
  return conclude(run, generated, full, hits, cache.slot, release)
}

function wholePassages(passages: PromptPassage[], hits: SearchHit[]): PromptPassage[] {
  const text = new Map(hits.map((h) => [h.chunk_id, h.text]))
  return passages.map((p) => ({ ...p, text: text.get(p.chunk_id) ?? p.text }))
}
