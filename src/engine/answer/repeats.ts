import type { VerificationRepair } from '../../shared/trace'
import type { KeptSentence } from './procedure'

/**
 * A sentence the answer says twice is shown once. A 1.5B model sometimes writes its paragraph
 * twice (seen on "who issues the access tokens?": four sentences, then the same four again), and
 * a copied line can repeat one the model wrote. The repeat is dropped and its citations join the
 * first sentence's, so no source is lost; a repair names it in the trace.
 */

/** The words of a sentence as a reader compares them: no list marker, case, spacing or closing stop. */
const said = (text: string) =>
  text
    .replace(/^\s*(?:(?:[-*+]|\d{1,3}[.)])\s+)+/, '')
    .replace(/\s+/g, ' ')
    .replace(/[\s.!?:;]+$/, '')
    .toLowerCase()

export function dropRepeats(kept: readonly KeptSentence[], repairs: VerificationRepair[]): KeptSentence[] {
  const first = new Map<string, KeptSentence>()
  const out: KeptSentence[] = []
  let dropped = 0
  for (const s of kept) {
    const key = said(s.text)
    const earlier = key ? first.get(key) : undefined
    if (!earlier) {
      const copy = { ...s, cites: [...s.cites] }
      if (key) first.set(key, copy)
      out.push(copy)
      continue
    }
    for (const n of s.cites) if (!earlier.cites.includes(n)) earlier.cites.push(n)
    dropped++
  }
  if (dropped)
    repairs.push({
      code: 'repeat_dropped',
      message: `${dropped === 1 ? 'A sentence' : `${dropped} sentences`} the answer had already said ${dropped === 1 ? 'was' : 'were'} shown once.`,
    })
  return out
}
