import type { PromptPassage } from './prompt'
import { escapeRegExp } from '../core/regexp'

/**
 * What the words of a claim must find in the passages it cites: numbers (kept whole, grouped
 * digits and number words matched), quoted text, and names a reader would copy (headers, method
 * paths, identifiers). Used by the verifier and by the support check of every sentence
 * (support.ts). Matching is on a normalised view: lower case, straight quotes, plain dashes, no
 * Markdown emphasis or code marks.
 */

// [1], [1, 2], [1;2], [1-3]; not markdown links ([text](url)) and not array indexes (items[0]).
export const MARKER = /(?<![\w`])\[(\d{1,3}(?:\s*(?:[,;]|-|–)\s*\d{1,3})*)\](?!\()/g

export function inlineMarkers(answer: string): number[] {
  const out: number[] = []
  for (const m of answer.matchAll(MARKER)) {
    for (const part of m[1]!.split(/\s*[,;]\s*/)) {
      const range = /^(\d+)\s*[-–]\s*(\d+)$/.exec(part)
      if (range) {
        const a = Number(range[1])
        const b = Number(range[2])
        if (b >= a && b - a <= 20) for (let i = a; i <= b; i++) out.push(i)
        else out.push(a, b)
      } else out.push(Number(part))
    }
  }
  return [...new Set(out)]
}

/** Digit-group separators between digits (1,000 / 1 000 / 1_000) so both spellings compare equal; a plain space is not one. */
const DIGIT_GROUP = /(?<=\d)[,\u00A0\u202F\u2009_](?=\d{3}(?!\d))/g
function ungroup(s: string): string {
  return s.replace(DIGIT_GROUP, '')
}

/** Lower case, straight quotes, plain dashes, no Markdown emphasis or code marks, ungrouped digits, single spaces. */
export function normaliseForMatch(s: string): string {
  return ungroup(s)
    .toLowerCase()
    .replace(/[“”„]/g, '"')
    .replace(/[‘’‚]/g, "'")
    .replace(/[‐‑‒–—−]/g, '-')
    .replace(/…/g, '...')
    .replace(/[*`]|\\(?=[^\w\s])/g, '')
    .replace(/\s+/g, ' ')
    .trim()
}

/**
 * Numbers worth checking: multi-digit numbers, decimals, negative codes and dates/versions kept
 * whole ("2025-03-26", "-32602", "1.5", "1,000"). Single digits are skipped: they are mostly counts
 * and list markers, which passages rarely spell the same way. Tokens are returned as the answer
 * writes them, so the renderer can find and mark them.
 */
export function answerNumbers(answer: string): string[] {
  const text = answer.replace(MARKER, ' ').replace(/^\s*\d+[.)]\s/gm, ' ')
  const out = new Set<string>()
  // Grouped thousands (1,000), plain numbers, dates and versions (2025-03-26, 1.5), and decimals
  // written without the leading zero (FACTOR=.020), which configuration docs are full of.
  const re =
    /(?<![\w.,])-?\d{1,3}(?:[,\u00A0\u202F\u2009_]\d{3})+(?:\.\d+)?(?!\w)|(?<![\w.])-?\d+(?:[.:/-]\d+)*(?!\w)|(?<![\w.])\.\d+(?!\w)/g
  for (const m of text.matchAll(re)) {
    const token = m[0]
    if (/^-?\d$/.test(token)) continue
    out.add(token)
  }
  return [...out]
}

export function answerQuotes(answer: string): string[] {
  const out = new Set<string>()
  for (const m of answer.matchAll(/"([^"\n]{3,200})"|“([^”\n]{3,200})”|`([^`\n]{2,200})`/g)) {
    const q = (m[1] ?? m[2] ?? m[3] ?? '').trim()
    if (q) out.add(q)
  }
  return [...out]
}

/**
 * Names a reader would copy: header and parameter names (Last-Event-ID, Mcp-Session-Id), method
 * paths (tools/call, notifications/cancelled), camelCase and snake_case identifiers. A wrong one
 * sends the person after something that does not exist, so, like numbers, they must come from the
 * cited passages. Plain hyphenated words ("well-known") and single capitalised words are not names.
 */
export function answerTerms(answer: string): string[] {
  const text = answer.replace(MARKER, ' ').replace(/`[^`\n]*`|"[^"\n]*"|“[^”\n]*”/g, ' ')
  const out = new Set<string>()
  const re = /(?<![\w/.-])[A-Za-z][A-Za-z0-9]*(?:[-_/.][A-Za-z0-9]+)+(?![\w/-])|(?<![\w/.-])[a-z]+[A-Z][A-Za-z0-9]*(?![\w/-])/g
  for (const m of text.matchAll(re)) {
    const t = m[0].replace(/\.$/, '')
    const parts = t.split(/[-_/.]/)
    const isName =
      /[_/]/.test(t) ||
      /^[a-z]+[A-Z]/.test(t) ||
      (t.includes('-') && parts.filter((p) => /^[A-Z]/.test(p)).length >= 2) ||
      /\d/.test(t)
    if (isName && !/^(?:e\.g|i\.e|etc|and\/or)$/i.test(t)) out.add(t)
  }
  return [...out]
}

const UNITS = ['', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine']
const TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen']
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety']
const NUMBER_WORD = new RegExp(
  `\\b(?:(${TENS.filter(Boolean).join('|')})(?:[- ](${UNITS.filter(Boolean).join('|')}))?|(${TEENS.join('|')})|(?:a |one )?(hundred|thousand))\\b`,
  'g',
)

/** Numbers a passage writes as words ("thirty seconds", "twenty-five"), as digits, so "30" in the answer finds them. */
function numberWordsAsDigits(hay: string): string {
  const digits: string[] = []
  for (const m of hay.matchAll(NUMBER_WORD)) {
    if (m[1]) digits.push(String(TENS.indexOf(m[1]) * 10 + (m[2] ? UNITS.indexOf(m[2]) : 0)))
    else if (m[3]) digits.push(String(10 + TEENS.indexOf(m[3])))
    else if (m[4]) digits.push(m[4] === 'hundred' ? '100' : '1000')
  }
  return digits.join(' ')
}

/**
 * What a passage says, for the support check: its text, heading, path and source kind, and its
 * version, named as one ("version 2025-03-26", "release", "revision"): a passage of a release
 * supports "the release that brought in tool annotations was version 2025-03-26" by its version
 * as much as by its words.
 */
export function haystack(p: Pick<PromptPassage, 'text' | 'heading' | 'path' | 'version' | 'kind'>): string {
  const version = p.version ? `${p.version} version release revision` : ''
  const hay = normaliseForMatch([p.text, p.heading, p.path, version, p.kind ?? ''].join('\n'))
  return `${hay}\n${numberWordsAsDigits(hay)}`
}

export function containsNumber(hay: string, token: string): boolean {
  // "32602" must not count as found inside "132602"; a leading minus may be written as a word.
  const bare = ungroup(token).replace(/^-/, '')
  const re = new RegExp(`(?<![\\d])${escapeRegExp(bare)}(?![\\d])`)
  if (re.test(hay)) return true
  // A range ("10-20") the passage may write as "10 to 20": both ends must be there.
  const range = /^(\d+)[-–](\d+)$/.exec(bare)
  return range !== null && containsNumber(hay, range[1]!) && containsNumber(hay, range[2]!)
}

/** A quote is supported when the cited passages contain it; an elided quote ("a ... b") needs each piece. */
export function containsQuote(hay: string, quote: string): boolean {
  const pieces = normaliseForMatch(quote)
    .split(/\s*(?:\[\.\.\.\]|\.\.\.)\s*/)
    .filter((piece) => piece.length > 0)
  return pieces.length > 0 && pieces.every((piece) => hay.includes(piece))
}

/** The text without its [n] citation markers and the spaces they leave. */
export function stripMarkers(text: string): string {
  return text
    .replace(MARKER, '')
    .replace(/\s+([.,;:!?])/g, '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim()
}
