import type { AskResult } from '../../../shared/answer'
import type { SearchHit } from '../../../shared/search'
import type { PromptPassage } from '../prompt'
import type { CacheSlot } from './cache'
import type { Attempt, ModelFailure } from './generate'
import { toCitation, toClosest } from './passages'
import type { AskRun } from './run'

/**
 * The result of a question the model was asked: a verified answer (cached for the next time), or
 * an abstention when the passages do not hold the answer or the citations did not check out, or
 * the passages alone when the model failed.
 */
export async function conclude(
  run: AskRun,
  generated: Attempt | ModelFailure,
  passages: PromptPassage[],
  hits: SearchHit[],
  cache: CacheSlot | null,
): Promise<AskResult> {
  const { ctx, trace, base } = run
  const hitById = new Map(hits.map((h) => [h.chunk_id, h]))
  const hitOf = (p: PromptPassage) => hitById.get(p.chunk_id)!
  if ('failed' in generated) {
    base.notices.push(`The language model failed (${generated.failed}); showing the best passages instead of an answer.`)
    return run.finish(
      {
        ...base,
        answer: null,
        abstained: false,
        reason: null,
        mode: 'search-only',
        citations: passages.map((p) => toCitation(hitOf(p), p.n)),
      },
      'search-only',
    )
  }
  const { v } = generated
  const passageClosest = passages.map((p) => toClosest(hitOf(p)))
  if (v.ok && v.reply && !v.reply.answerable) {
    trace.verification = { result: 'not_in_context' }
    return run.finish(
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
    trace.verification = { result: 'unverifiable_citations', problems: v.problems }
    return run.finish(
      { ...base, answer: null, abstained: true, reason: 'unverifiable_citations', closest: passageClosest, mode: 'answer' },
      'unverifiable_citations',
    )
  }
  const byN = new Map(passages.map((p) => [p.n, p]))
  const citations = v.reply.citations.map((n) => toCitation(hitOf(byN.get(n)!), n))
  trace.verification = { result: 'ok', warnings: v.warnings }
  const result: AskResult = {
    ...base,
    answer: v.reply.answer,
    abstained: false,
    reason: null,
    citations,
    unanswered_parts: v.reply.unanswered_parts,
    warnings: v.warnings.map((w) => w.message),
    // The answer stands, but these are not backed by what it cites: the renderer marks them.
    unverified_claims: [...v.unsupported_numbers, ...v.unsupported_quotes, ...v.unsupported_terms],
    mode: 'answer',
  }
  if (cache) await ctx.store.cachePut(cache.key, { question: run.standalone, state: cache.state, result })
  return run.finish(result, 'answer')
}
