import type { RemovedSentence } from '../../shared/answer'
import { namesRelease } from '../../shared/versions'
import type { VerificationRepair } from '../../shared/trace'
import { extractExactTerms } from '../core/exact-terms'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { bestUnit, wantedOf } from './substance'

/**
 * An answer about something else. The question names an exact identifier (an error code, a method,
 * a field, a flag: `-32042`, `tools/call`, `toolChoice`), and neither the answer nor any passage it
 * cites mentions it, while another passage the model was given does. Seen with a 1.5B model on a
 * held-out question: "What is error code -32042?" answered "Invalid cursors SHOULD result in an
 * error with code -32602 [1]", every word of it supported by the pagination passage it cites.
 *
 * The support check cannot see this (each sentence is true of its passage), so it is checked
 * here: the model's sentences are removed, with the reason, and the sentence of the passage that
 * holds the identifier and answers the question best takes their place, in the passage's own
 * words and citing it (`added: 'quote'`). When no passage sentence holds it, the answer is left
 * as it was. Versions named in the question are scope, not subject, and do not count.
 */

/** The exact identifiers a question names, versions aside. */
export function askedIdentifiers(question: string): string[] {
  return extractExactTerms(question).filter((t) => !namesRelease(t))
}

function mentions(text: string, ids: Set<string>): boolean {
  return extractExactTerms(text).some((t) => ids.has(t))
}

export function retarget(
  kept: KeptSentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  repairs: VerificationRepair[],
  removed: RemovedSentence[],
): { kept: KeptSentence[]; retargeted: boolean } {
  const asked = askedIdentifiers(question)
  if (asked.length === 0 || kept.length === 0) return { kept, retargeted: false }
  const ids = new Set(asked)
  if (kept.some((s) => mentions(s.text, ids))) return { kept, retargeted: false }
  const cited = new Set(kept.flatMap((s) => s.cites))
  const passageText = (p: PromptPassage) => `${p.heading}\n${fullText(p)}`
  if (passages.some((p) => cited.has(p.n) && mentions(passageText(p), ids))) return { kept, retargeted: false }
  const holding = passages.filter((p) => !cited.has(p.n) && mentions(passageText(p), ids))
  const pick = bestUnit(holding, fullText, question, wantedOf(question), [], (text) => mentions(text, ids))
  if (!pick) return { kept, retargeted: false }
  const named = asked.map((t) => `"${t}"`).join(', ')
  for (const s of kept.filter((k) => !k.added))
    removed.push({
      text: s.text,
      cited: s.cites,
      code: 'off_target',
      reason: `It does not answer about ${named}, which the question asks about, and neither do the passages it cites.`,
    })
  const added = [pick.unit, ...(pick.follows ? [pick.follows] : [])]
  repairs.push({
    code: 'quote_added',
    message: `The answer was about something other than ${named}; the sentence of passage [${pick.passage.n}] that names it replaced it.`,
  })
  return { kept: added.map((u) => ({ text: u.text, cites: [pick.passage.n], added: 'quote' as const })), retargeted: true }
}
