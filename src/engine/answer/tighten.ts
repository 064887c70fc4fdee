import type { VerificationRepair } from '../../shared/trace'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { checkSentence } from './support'

/**
 * A sentence's citations cut to the passages that say it. A small model cites every passage that
 * looks related: seen with the real 1.5B model on a question scoped to one release, "Mcp-Method
 * header and Mcp-Name header MUST be included in the request [1][2][3][4][5][6]", where two of the
 * six passages say it and four only mention headers. A person opening [5] finds nothing of it.
 *
 * When some of a sentence's cited passages support it on their own (the support check, on that
 * passage alone), the others are dropped from it; when none does alone (the sentence joins what two
 * passages say), its citations stay as they are. So every sentence still passes the check against
 * what it cites. A passage that `keep` protects (an authoritative source the release rules counted)
 * is never dropped. Sentences copied from a passage (`added`) cite just that passage already.
 */
export async function tightenCitations(
  kept: KeptSentence[],
  byN: ReadonlyMap<number, PromptPassage>,
  question: string,
  keep: (p: PromptPassage) => boolean,
  repairs: VerificationRepair[],
): Promise<void> {
  let dropped = 0
  for (const s of kept) {
    if (s.added || s.cites.length < 2) continue
    const alone: number[] = []
    for (const n of s.cites) {
      const p = byN.get(n)
      if (p && (await checkSentence(s.text, [p], { question })).ok) alone.push(n)
    }
    if (alone.length === 0) continue
    const cites = s.cites.filter((n) => alone.includes(n) || (byN.has(n) && keep(byN.get(n)!)))
    if (cites.length === s.cites.length) continue
    dropped += s.cites.length - cites.length
    s.cites = cites
  }
  if (dropped)
    repairs.push({
      code: 'citations_tightened',
      message: `${dropped} citation${dropped === 1 ? '' : 's'} of passages that do not say the sentence on their own ${dropped === 1 ? 'was' : 'were'} dropped; each sentence cites the passages that say it.`,
    })
}
