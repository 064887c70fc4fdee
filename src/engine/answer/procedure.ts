import type { VerificationRepair } from '../../shared/trace'
import type { PromptPassage, ReplySentence } from './prompt'
import { contentWords, splitUnits, type TextUnit } from './sentences'

/**
 * A procedure stops only where its source stops. When the answer follows the numbered steps of a
 * passage it cites and stops before the last, the remaining steps are copied from that passage, as
 * the passage writes them, citing it: grounded by construction, and marked as added by the engine
 * (`added: 'procedure'`). Seen with a 1.5B model: a calibration answer stopped before the step
 * that measures and computes the value.
 */

/** Share of a step's content words a sentence must hold to count as giving that step. */
const STEP_COVERED = 0.5
/** At most this many steps are copied; a longer tail is left to the source, which is one click away. */
const MAX_ADDED = 8

export type KeptSentence = ReplySentence & { added?: 'procedure' }

export function completeProcedures(
  kept: ReplySentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  repairs: VerificationRepair[],
): KeptSentence[] {
  const out: KeptSentence[] = [...kept]
  for (const p of passages) {
    const citing = out.map((s, i) => (s.cites.includes(p.n) && !(s as KeptSentence).added ? i : -1)).filter((i) => i >= 0)
    if (citing.length === 0) continue
    for (const steps of orderedLists(fullText(p))) {
      const covered = steps.map((step) => citing.some((i) => covers(out[i]!.text, step.text)))
      const last = covered.lastIndexOf(true)
      const count = covered.filter(Boolean).length
      // The answer follows this list (two steps, or the first one) and stops before its end.
      if (last < 0 || last === steps.length - 1 || (count < 2 && !covered[0])) continue
      const rest = steps.slice(last + 1, last + 1 + MAX_ADDED)
      const at = Math.max(...citing) + 1
      out.splice(at, 0, ...rest.map((s) => ({ text: s.text, cites: [p.n], added: 'procedure' as const })))
      repairs.push({
        code: 'procedure_completed',
        message: `The answer stopped at step ${last + 1} of ${steps.length} of passage [${p.n}]; the remaining ${rest.length} step${rest.length === 1 ? ' was' : 's were'} copied from it.`,
      })
      break
    }
  }
  return out
}

function covers(sentence: string, step: string): boolean {
  const stepWords = [...new Set(contentWords(step))]
  if (stepWords.length === 0) return false
  const have = new Set(contentWords(sentence))
  return stepWords.filter((w) => have.has(w)).length / stepWords.length >= STEP_COVERED
}

/** The ordered lists of a text (at least two numbered items each), in order. */
function orderedLists(text: string): TextUnit[][] {
  const lists = new Map<number, TextUnit[]>()
  for (const u of splitUnits(text)) {
    if (u.list === null || u.ordinal === null) continue
    lists.set(u.list, [...(lists.get(u.list) ?? []), u])
  }
  return [...lists.values()].filter((l) => l.length >= 2)
}
