import type { VerificationRepair } from '../../shared/trace'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { haystack } from './match'
import { lexicalSupport } from './support'

/**
 * A sentence's citations cut to the passages that say it. A small model cites every passage that
 * looks related: seen with the real 1.5B model on a question scoped to one release, "Mcp-Method
 * header and Mcp-Name header MUST be included in the request [1][2][3][4][5][6]", where two of the
 * six passages say it and four only mention headers. A person opening [5] finds nothing of it.
 *
 * When some of a sentence's cited passages hold every name, number and quoted text it states, a
 * cited passage that lacks one of them is dropped from it; when none holds them all (the sentence
 * joins what two passages say), its citations stay as they are. A passage that holds them all stays
 * cited even when it says the rest in other words: on a held-out question the specification's
 * "Preregistration" section, which says in its own words what a tutorial sentence said, was dropped
 * by a first version of this rule that asked each passage to pass the whole support check alone.
 * The sentence still passes the check against what it cites, since what was dropped added no name
 * it needs. A passage that `keep` protects (an authoritative source the release rules counted) is
 * never dropped. Sentences copied from a passage (`added`) cite just that passage already.
 */
export function tightenCitations(
  kept: KeptSentence[],
  byN: ReadonlyMap<number, PromptPassage>,
  keep: (p: PromptPassage) => boolean,
  repairs: VerificationRepair[],
): void {
  let dropped = 0
  for (const s of kept) {
    if (s.added || s.cites.length < 2) continue
    const alone = s.cites.filter((n) => byN.has(n) && lexicalSupport(s.text, haystack(byN.get(n)!)) === null)
    if (alone.length === 0) continue
    const cites = s.cites.filter((n) => alone.includes(n) || (byN.has(n) && keep(byN.get(n)!)))
    if (cites.length === s.cites.length) continue
    dropped += s.cites.length - cites.length
    s.cites = cites
  }
  if (dropped)
    repairs.push({
      code: 'citations_tightened',
      message: `${dropped} citation${dropped === 1 ? '' : 's'} of passages without a name or number the sentence states ${dropped === 1 ? 'was' : 'were'} dropped; other cited passages hold them all.`,
    })
}
