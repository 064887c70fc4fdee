import { contentWords, exactTerms, splitUnits, unitScore, weightedTerms, type TextUnit } from './sentences'

/**
 * Read less: a passage cut down to the units (sentences, list items, rows, code) that bear on the
 * question, with a little context around them, so the model reads a few hundred tokens instead of
 * whole chunks (prefill is compute-bound on a CPU: time to first token only shrinks by reading
 * fewer tokens). Order is kept, and a gap is marked with "…" so the model does not read two
 * sentences as one thought. A step of an ordered list brings its whole list (up to twice the
 * budget), because an answer may only stop a procedure where its source stops.
 */

export interface TrimmedPassage {
  text: string
  /** The units kept, in order, with whether each matched the question (the rest is context). */
  units: { text: string; match: boolean }[]
  tokensBefore: number
  tokensAfter: number
}

export interface TrimOptions {
  /** Most tokens of passage text to keep (a whole list may take up to twice this). */
  budget: number
  countTokens: (text: string) => number
  /** Weights of the question's terms (questionWeights); by default from the question alone. */
  terms?: ReadonlyMap<string, number>
}

/**
 * The question's terms weighted by how rare they are among the passages the model will read: a
 * word every passage has ("server") says little about which sentence answers, a word one passage
 * has says much. Names and numbers keep their triple weight.
 */
export function questionWeights(question: string, passages: readonly string[]): Map<string, number> {
  const base = weightedTerms(question)
  const exact = exactTerms(question)
  const sets = passages.map((p) => ({ words: new Set(contentWords(p)), lower: p.toLowerCase() }))
  const n = Math.max(1, passages.length)
  const out = new Map<string, number>()
  for (const [t, w] of base) {
    const df = sets.filter((s) => s.words.has(t) || (exact.has(t) && s.lower.includes(t))).length
    out.set(t, w * Math.log(1 + n / Math.max(1, df)))
  }
  return out
}

/** The budget of the passage at `rank` (0-based): the best-ranked passage gets the most, the rest less. */
export function budgetAt(first: number, rank: number): number {
  return Math.round(first * Math.max(0.5, 1 - 0.2 * rank))
}

export const GAP = '…'

export function trimPassage(text: string, question: string, opts: TrimOptions): TrimmedPassage {
  const units = splitUnits(text)
  const terms = opts.terms ?? weightedTerms(question)
  const exact = exactTerms(question)
  const scores = units.map((u) => unitScore(new Set(contentWords(u.text)), u.text, terms, exact))
  const tokensBefore = opts.countTokens(text)
  if (tokensBefore <= opts.budget || units.length <= 1) {
    return { text, units: units.map((u, i) => ({ text: u.text, match: scores[i]! > 0 })), tokensBefore, tokensAfter: tokensBefore }
  }
  const cost = units.map((u) => opts.countTokens(u.text) + 1)
  const keep = new Set<number>()
  let used = 0
  const take = (i: number, limit = opts.budget): boolean => {
    if (i < 0 || i >= units.length || keep.has(i)) return false
    if (used + cost[i]! > limit && keep.size > 0) return false
    keep.add(i)
    used += cost[i]!
    return true
  }
  const order = units.map((_, i) => i).filter((i) => scores[i]! > 0)
  order.sort((a, b) => scores[b]! - scores[a]! || a - b)
  for (const i of order) {
    if (!take(i)) continue
    const u = units[i]!
    if (u.list !== null && u.ordinal !== null) takeList(units, u.list, take, opts.budget * 2)
    // A sentence that introduces a numbered list ("To calibrate the sensor:") brings the list.
    const next = units[i + 1]
    if (next && next.list !== null && next.ordinal !== null && u.list !== next.list) takeList(units, next.list, take, opts.budget * 2)
    headingBefore(units, i, take)
    // The sentence before often names the subject; the one after often finishes the thought.
    take(i - 1)
    take(i + 1)
  }
  // Nothing matched: the start of the passage is the best guess at what it is about.
  for (let i = 0; keep.size === 0 || (order.length === 0 && i < units.length); i++) if (!take(i)) break
  return assemble(units, scores, keep, tokensBefore, opts)
}

function takeList(units: TextUnit[], list: number, take: (i: number, limit?: number) => boolean, limit: number): void {
  units.forEach((u, j) => {
    if (u.list === list) take(j, limit)
  })
}

/** The nearest heading above a kept unit, inside the passage: it says which sub-section the unit belongs to. */
function headingBefore(units: TextUnit[], i: number, take: (i: number) => boolean): void {
  for (let j = i - 1; j >= 0; j--) {
    if (units[j]!.kind === 'heading') {
      take(j)
      return
    }
  }
}

function assemble(units: TextUnit[], scores: number[], keep: Set<number>, tokensBefore: number, opts: TrimOptions): TrimmedPassage {
  const kept = [...keep].sort((a, b) => a - b)
  const parts: string[] = []
  const out: TrimmedPassage['units'] = []
  let prev = -1
  for (const i of kept) {
    if (i > prev + 1 && (prev >= 0 || i > 0)) parts.push(GAP)
    const u = units[i]!
    // Prose sentences of one paragraph read best joined on a line; lists, rows and code keep theirs.
    const joinsPrevious = prev === i - 1 && u.kind === 'prose' && units[prev]?.kind === 'prose'
    if (joinsPrevious) parts[parts.length - 1] += ' ' + u.text
    else parts.push(u.text)
    out.push({ text: u.text, match: scores[i]! > 0 })
    prev = i
  }
  if (prev < units.length - 1) parts.push(GAP)
  const text = parts.join('\n')
  return { text, units: out, tokensBefore, tokensAfter: opts.countTokens(text) }
}
