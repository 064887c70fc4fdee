import type { VerificationRepair } from '../../shared/trace'
import type { KeptSentence } from './procedure'
import { LIST_MARKER } from './sentences'

/**
 * A sentence the answer says twice is shown once. A 1.5B model sometimes writes its paragraph
 * twice (seen on "who issues the access tokens?": four sentences, then the same four again), a
 * copied line can repeat one the model wrote, and the model often writes the first half of a
 * change-log line that is then copied whole ("Remove protocol-level sessions and the
 * Mcp-Session-Id header…", then the line with what replaces them). The repeat, or the part, is
 * dropped: the whole sentence stands where the first of them stood, with the citations of both, so
 * no source is lost; a repair names it in the trace.
 */

/** A part must be this long (normalised characters) to be dropped for the whole: "Yes" is in many sentences. */
const MIN_PART = 20

/** The words of a sentence as a reader compares them: no list marker, case, spacing or closing stop. */
function said(text: string): string {
  let t = text
  while (LIST_MARKER.test(t)) t = t.replace(LIST_MARKER, '')
  return t
    .replace(/\s+/g, ' ')
    .replace(/[\s.!?:;]+$/, '')
    .toLowerCase()
}

export function dropRepeats(kept: readonly KeptSentence[], repairs: VerificationRepair[]): KeptSentence[] {
  const keys = kept.map((s) => said(s.text))
  // Each sentence stands for itself, or for the first sentence that says the same, or for the longest that holds it.
  const whole = keys.map((k) => {
    let at = keys.indexOf(k)
    if (k.length < MIN_PART) return at
    keys.forEach((other, j) => {
      if (other.length > keys[at]!.length && other.includes(k)) at = j
    })
    return keys.indexOf(keys[at]!)
  })
  const shown = new Map<number, KeptSentence>()
  const out: KeptSentence[] = []
  kept.forEach((s, i) => {
    const j = whole[i]!
    let target = shown.get(j)
    if (!target) {
      target = { ...kept[j]!, cites: [...kept[j]!.cites] }
      shown.set(j, target)
      out.push(target)
    }
    for (const n of s.cites) if (!target.cites.includes(n)) target.cites.push(n)
  })
  const dropped = kept.length - out.length
  if (dropped)
    repairs.push({
      code: 'repeat_dropped',
      message: `${dropped === 1 ? 'A sentence' : `${dropped} sentences`} the answer already said, or said in full elsewhere, ${dropped === 1 ? 'was' : 'were'} shown once.`,
    })
  return out
}
