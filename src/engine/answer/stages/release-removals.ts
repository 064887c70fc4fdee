import type { ReleaseTrace } from '../../../shared/trace'
import type { ReleaseCheck } from '../release'
import type { Verification } from '../verify'

/** The sentences the release rule removed, for the trace, and what to say when none is left. */
export interface ReleaseRemovals {
  explanation: string
  removed_sentences: NonNullable<ReleaseTrace['removed_sentences']>
}

/**
 * The release rule after the model (release-after.ts), applied to the sentences that passed the
 * support check: a sentence about a feature the scoped release lacks is moved from `v.kept` to
 * `v.removed`, with the release's own words as its reason, and its claim is marked failed. Returns
 * what was removed and the explanation to give when no sentence is left; null when nothing was.
 */
export async function removeReleaseMisses(v: Verification, release: ReleaseCheck): Promise<ReleaseRemovals | null> {
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
  const first = misses[0]!.reason
  return {
    explanation: `${first[0]!.toUpperCase()}${first.slice(1)}.`,
    removed_sentences: misses.map((m) => ({ text: texts[m.index]!, term: m.term, verdict: m.verdict })),
  }
}
