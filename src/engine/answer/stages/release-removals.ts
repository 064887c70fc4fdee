import type { ReleaseCheck } from '../release'
import type { Verification } from '../verify'
import type { AskRun } from './run'

/**
 * The release rule after the model (release-after.ts), applied to the sentences that passed the
 * support check: a sentence about a feature the scoped release lacks is moved to `removed`, with
 * the release's own words as its reason, and its claim in the trace is marked failed. Returns the
 * explanation to give when no sentence is left.
 */
export async function removeReleaseMisses(run: AskRun, v: Verification, release: ReleaseCheck): Promise<string | null> {
  if (!release.checkSentences || v.kept.length === 0) return null
  const misses = await release.checkSentences(v.kept.map((s) => s.text))
  if (misses.length === 0) return null
  const byIndex = new Map(misses.map((m) => [m.index, m]))
  const texts = v.kept.map((s) => s.text)
  const kept: Verification['kept'] = []
  v.kept.forEach((s, i) => {
    const miss = byIndex.get(i)
    if (!miss) return void kept.push(s)
    v.removed.push({ text: s.text, cited: s.cites, code: 'not_in_release', reason: miss.reason })
    const claim = v.claims.find((c) => c.ok && c.text === s.text)
    if (claim) Object.assign(claim, { ok: false, failure: 'not_in_release', reason: miss.reason })
  })
  v.kept = kept
  v.markers = [...new Set(kept.flatMap((s) => s.cites))]
  if (run.trace.release)
    run.trace.release.removed_sentences = misses.map((m) => ({ text: texts[m.index]!, term: m.term, verdict: m.verdict }))
  const first = misses[0]!.reason
  return `${first[0]!.toUpperCase()}${first.slice(1)}.`
}
