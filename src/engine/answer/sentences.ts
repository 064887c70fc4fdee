import { STOPWORDS, stem, WORD } from '../../shared/excerpt'
import { extractExactTerms } from '../core/exact-terms'

/**
 * Passages and answers cut into the units a claim can rest on: prose sentences, list items (with
 * their list and place in it, so a procedure can be kept whole), table rows, code blocks and
 * headings. Passage text is Markdown as the chunker keeps it; the cuts are approximate on purpose
 * (no full sentence segmenter): they decide what the model reads and which passage sentence a
 * claim is compared with, never what is stored.
 */

export type UnitKind = 'prose' | 'list' | 'table' | 'code' | 'heading'

export interface TextUnit {
  text: string
  kind: UnitKind
  /** Character range in the source text. */
  start: number
  end: number
  /** Units of one list share an id; `ordinal` is the item's place in an ordered list (1-based), else null. */
  list: number | null
  ordinal: number | null
}

const FENCE = /^\s*(```|~~~)/
const LIST_ITEM = /^(\s*)(?:[-*+]|(\d{1,3})[.)])\s+/
/** A list item's marker at the start of a text ("- ", "9. ", "2) "). */
export const LIST_MARKER = /^\s*(?:[-*+]|\d{1,3}[.)])\s+/
const TABLE_ROW = /^\s*\|/
const HEADING = /^\s*#{1,6}\s/
// A sentence ends at . ! or ? followed by space and something that starts a sentence; not after
// the usual abbreviations, not inside a number (1.5), not after a single capital (an initial).
const SENTENCE_END = /(?<!\b(?:e\.g|i\.e|etc|vs|cf|Fig|No|approx|incl))(?<!\b[A-Z])([.!?])(["')\]]*)\s+(?=[A-Z0-9`"'(*[_<])/g

/** The units of a text, in order. */
export function splitUnits(text: string): TextUnit[] {
  const units: TextUnit[] = []
  const lines = text.split('\n')
  let offset = 0
  let listId = 0
  let inList = false
  let paragraph: { start: number; lines: string[] } | null = null
  const flushParagraph = () => {
    if (!paragraph) return
    const body = paragraph.lines.join('\n')
    for (const s of splitProse(body, paragraph.start)) units.push(s)
    paragraph = null
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const lineStart = offset
    offset += line.length + 1
    if (FENCE.test(line)) {
      flushParagraph()
      inList = false
      const fence = FENCE.exec(line)![1]!
      let j = i + 1
      let end = offset
      while (j < lines.length && !lines[j]!.trim().startsWith(fence)) end += lines[j++]!.length + 1
      if (j < lines.length) end += lines[j]!.length + 1
      units.push({ text: text.slice(lineStart, end).trimEnd(), kind: 'code', start: lineStart, end, list: null, ordinal: null })
      offset = end
      i = j
      continue
    }
    if (!line.trim()) {
      flushParagraph()
      continue
    }
    if (HEADING.test(line)) {
      flushParagraph()
      inList = false
      units.push({ text: line.trim(), kind: 'heading', start: lineStart, end: offset, list: null, ordinal: null })
      continue
    }
    if (TABLE_ROW.test(line)) {
      flushParagraph()
      inList = false
      units.push({ text: line.trim(), kind: 'table', start: lineStart, end: offset, list: null, ordinal: null })
      continue
    }
    const item = LIST_ITEM.exec(line)
    if (item) {
      flushParagraph()
      if (!inList) listId++
      inList = true
      const ordinal = item[2] ? Number(item[2]) : null
      units.push({ text: line.trim(), kind: 'list', start: lineStart, end: offset, list: listId, ordinal })
      continue
    }
    const last = units[units.length - 1]
    // An indented line right after a list item continues it.
    if (inList && last?.kind === 'list' && /^\s+\S/.test(line) && !paragraph) {
      last.text += ' ' + line.trim()
      last.end = offset
      continue
    }
    inList = false
    if (!paragraph) paragraph = { start: lineStart, lines: [] }
    paragraph.lines.push(line)
  }
  flushParagraph()
  return units
}

/** The sentences of one piece of prose (a list item or a row can hold several), as splitUnits cuts them. */
export function sentencesIn(text: string): string[] {
  return splitProse(text, 0).map((u) => u.text)
}

function splitProse(body: string, base: number): TextUnit[] {
  const out: TextUnit[] = []
  let from = 0
  const push = (to: number) => {
    const raw = body.slice(from, to)
    const lead = raw.length - raw.trimStart().length
    const t = raw.trim()
    if (t)
      out.push({
        text: t.replace(/\s+/g, ' '),
        kind: 'prose',
        start: base + from + lead,
        end: base + to,
        list: null,
        ordinal: null,
      })
  }
  for (const m of body.matchAll(SENTENCE_END)) {
    const to = m.index + m[1]!.length + m[2]!.length
    push(to)
    from = to
  }
  push(body.length)
  return out
}

/** A code block a sentence introduces is said with it when it is at most this many lines. */
export const MAX_CODE_LINES = 12

/**
 * The short code block that unit `i` introduces ("…SHOULD send a notification:" then the JSON),
 * which a sentence copied from a passage brings along; null when there is none.
 */
export function codeIntroducedBy(units: readonly TextUnit[], i: number): TextUnit | null {
  const next = units[i + 1]
  return /:\s*$/.test(units[i]!.text) && next?.kind === 'code' && next.text.split('\n').length <= MAX_CODE_LINES ? next : null
}

/** The words of a text that carry its content: stemmed, lower case, no stop words or single letters, identifiers kept whole. */
export function contentWords(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(WORD)) {
    const w = m[0].toLowerCase()
    if (w.length < 2 || STOPWORDS.has(w) || EXTRA_STOPWORDS.has(w)) continue
    out.push(/[/_.:-]/.test(w) || /^-?\d/.test(w) ? w : stem(w))
  }
  return out
}

/** Words that say nothing about what a passage holds when they appear in a claim or a question. */
const EXTRA_STOPWORDS = new Set(
  `one two also must should shall might said says say like well way ways used uses example examples e.g i.e etc
  following follows following value values field fields case cases thing things specific specified work works`.split(/\s+/),
)

/** Question terms with a weight: identifiers and numbers count three times, other content words once. */
export function weightedTerms(question: string): Map<string, number> {
  const terms = new Map<string, number>()
  for (const w of contentWords(question)) terms.set(w, Math.max(terms.get(w) ?? 0, 1))
  for (const t of exactTerms(question)) terms.set(t, 3)
  return terms
}

/** The question's identifiers and numbers (`logging/setlevel`, `ttlms`, `-32002`): the terms matched inside a unit's text, not only as its words. */
export function exactTerms(question: string): Set<string> {
  return new Set(extractExactTerms(question))
}

/**
 * How much of the weighted question a unit holds: a term counts when it is one of the unit's
 * words, or, for an identifier or number (`exact`), when the unit's text holds it ("setlevel" in
 * "logging/setLevel"). A plain word is never matched inside another: "marking" (mark) is not in
 * "markdown".
 */
export function unitScore(
  unitWords: ReadonlySet<string>,
  unitText: string,
  terms: ReadonlyMap<string, number>,
  exact: ReadonlySet<string>,
): number {
  let score = 0
  const lower = unitText.toLowerCase()
  for (const [t, w] of terms) if (unitWords.has(t) || (exact.has(t) && lower.includes(t))) score += w
  return score
}

/**
 * Share of a sentence's and another's content words each must hold of the other for the one to
 * say the other nearly word for word: not merely about it (answer/procedure.ts, answer/verify.ts).
 */
export const RESTATED = 0.8

/** Whether `a` says `b` nearly word for word: each holds at least `RESTATED` of the other's content words. */
export function restates(a: string, b: string): boolean {
  const wa = new Set(contentWords(a))
  const wb = new Set(contentWords(b))
  if (wa.size === 0 || wb.size === 0) return false
  const held = (have: Set<string>, words: Set<string>) => [...words].filter((w) => have.has(w)).length / words.size
  return held(wa, wb) >= RESTATED && held(wb, wa) >= RESTATED
}
