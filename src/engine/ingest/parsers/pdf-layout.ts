import type { DocBuilder } from './builder'

/**
 * From the lines of a PDF's pages to sections: running headers and footers are dropped, headings
 * are told apart from body text, and the remaining lines are joined into paragraphs that carry
 * their page number.
 *
 * Headings. The body size is the font size carrying the most characters of prose, that is of
 * lines not set in a monospace font: code blocks, which in a configuration reference carry more
 * characters than the prose around them, must not set it, or the prose (larger than the code)
 * would read as headings. A heading is then a short run of at most three lines, larger than the
 * body, set apart from the line above, that does not read as a sentence. A run of larger lines that
 * fails any of these is text, and is kept as a paragraph: no line is ever dropped for not being a
 * heading.
 */

export interface PdfLine {
  page: number
  /** Baseline y in PDF units (origin bottom-left). */
  y: number
  size: number
  text: string
  /** Position on the page: 0 bottom .. 1 top. */
  rel: number
  /** Most of the line's characters are in a monospace font (code). */
  mono: boolean
}

/** Longest run of lines, and of characters, that can still be one heading. */
const HEADING_MAX_LINES = 3
const HEADING_MAX_CHARS = 200

interface SizeStats {
  /** Characters per size, over every line. */
  chars: Map<number, number>
  /** The size carrying the most characters of prose (of every line when there is no prose). */
  body: number
  /** Characters of prose at the body size. */
  most: number
}

function countBySize(lines: PdfLine[]): Map<number, number> {
  const m = new Map<number, number>()
  for (const l of lines) m.set(l.size, (m.get(l.size) ?? 0) + l.text.length)
  return m
}

export function sizeStats(lines: PdfLine[]): SizeStats {
  const prose = lines.filter((l) => !l.mono && /\p{L}/u.test(l.text))
  const basis = countBySize(prose.length > 0 ? prose : lines)
  let body = 0
  let most = -1
  for (const [s, c] of basis) if (c > most) [body, most] = [s, c]
  return { chars: countBySize(lines), body, most: Math.max(0, most) }
}

/**
 * Drop lines repeated at the top or bottom of most pages (running headers, footers, page numbers;
 * digits are ignored when comparing). Lines larger than the body text are kept: a "Chapter N"
 * heading at the top of every page is content.
 */
export function dropRunningHeaders(lines: PdfLine[], numPages: number): PdfLine[] {
  const { body } = sizeStats(lines)
  const inBand = (l: PdfLine) => (l.rel > 0.9 || l.rel < 0.1) && l.size <= body * 1.1
  const key = (l: PdfLine) => `${l.rel > 0.5 ? 'top' : 'bottom'}|${l.text.replace(/\d+/g, '#').toLowerCase()}`
  const pages = new Map<string, Set<number>>()
  for (const l of lines) {
    if (!inBand(l)) continue
    const k = key(l)
    let s = pages.get(k)
    if (!s) pages.set(k, (s = new Set()))
    s.add(l.page)
  }
  const threshold = Math.max(3, Math.ceil(numPages * 0.5))
  const drop = new Set<string>()
  for (const [k, s] of pages) if (s.size >= threshold) drop.add(k)
  if (drop.size === 0) return lines
  return lines.filter((l) => !(inBand(l) && drop.has(key(l))))
}

/** Ends like a sentence or a clause ("... for more information.", "... the", "values,"), not like a title. */
function readsAsSentence(text: string): boolean {
  const words = text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length
  return words >= 3 && /[\p{L}\p{N})"'’”][.,;]$/u.test(text) && !/\.\.\.$|…$/.test(text)
}

/** Ends a paragraph's line the way a finished sentence or a lead-in does. */
const ENDS_CLAUSE = /[.!?:;)\]"'’”]$/u

/**
 * Which lines start a heading and how many lines each heading spans (its wrapped continuation
 * lines). Every other line is text.
 */
export function findHeadings(lines: PdfLine[]): Map<number, number> {
  const { chars, body, most } = sizeStats(lines)
  const candidate = (l: PdfLine) =>
    body > 0 &&
    l.size >= body * 1.15 &&
    l.size - body >= 0.5 &&
    l.text.length <= 150 &&
    /\p{L}/u.test(l.text) &&
    (chars.get(l.size) ?? 0) <= most * 0.5
  const out = new Map<number, number>()
  for (let k = 0; k < lines.length; k++) {
    const l = lines[k]!
    if (!candidate(l)) continue
    // The run: following lines of the same size, on the same page, close below it.
    let n = 1
    let text = l.text
    while (k + n < lines.length) {
      const nx = lines[k + n]!
      const last = lines[k + n - 1]!
      if (nx.page !== l.page || Math.abs(nx.size - l.size) > 0.25 || !candidate(nx)) break
      if (last.y - nx.y > l.size * 1.6 || nx.y > last.y) break
      text += ' ' + nx.text
      n++
    }
    const prev = k > 0 ? lines[k - 1]! : null
    const samePage = prev !== null && prev.page === l.page && prev.y > l.y
    // Set apart: a heading does not sit at the line spacing of the text above it.
    const setApart = !samePage || prev.y - l.y >= l.size * 1.15
    // A lower-case start right under an unfinished line of prose continues that line's sentence.
    const continues =
      samePage && !prev.mono && /^\p{Ll}/u.test(l.text) && !ENDS_CLAUSE.test(prev.text) && prev.y - l.y < l.size * 2
    const isHeading =
      n <= HEADING_MAX_LINES && text.length <= HEADING_MAX_CHARS && setApart && !continues && !readsAsSentence(text)
    if (isHeading) out.set(k, n)
    k += n - 1
  }
  return out
}

export function buildSections(lines: PdfLine[], b: DocBuilder): void {
  const headings = findHeadings(lines)
  // Heading levels: distinct heading sizes, largest first (sizes within 1pt share a level).
  const hSizes = [...new Set([...headings.keys()].map((k) => lines[k]!.size))].sort((a, z) => z - a)
  const levels: number[] = []
  for (const s of hSizes) {
    const prev = levels.length ? hSizes[levels.length - 1]! : null
    const prevLevel = levels.length ? levels[levels.length - 1]! : 0
    levels.push(prev !== null && prev - s < 1 ? prevLevel : Math.min(6, prevLevel + 1))
  }
  const levelOf = (size: number) => levels[hSizes.indexOf(size)] ?? 1

  let para: string[] = []
  let paraPage = 0
  let prev: PdfLine | null = null
  const flush = () => {
    if (para.length > 0) b.add('paragraph', para.join(''), paraPage)
    para = []
  }
  for (let k = 0; k < lines.length; k++) {
    const l = lines[k]!
    const span = headings.get(k)
    if (span !== undefined) {
      flush()
      b.heading(
        levelOf(l.size),
        lines
          .slice(k, k + span)
          .map((x) => x.text)
          .join(' '),
      )
      k += span - 1
      prev = null
      continue
    }
    // A line that ends in a hyphen after a letter or digit is continued by the next one.
    const hyphenated = prev !== null && /[\p{L}\p{N}]-$/u.test(prev.text)
    const newPara =
      prev === null ||
      l.page !== prev.page ||
      Math.abs(l.size - prev.size) > 0.5 ||
      prev.y - l.y > Math.max(l.size, prev.size) * 1.75 ||
      l.y > prev.y + 1 ||
      (!hyphenated && /^([•▪◦●■\-–*]|\d{1,3}[.)])\s/.test(l.text))
    if (newPara) {
      flush()
      paraPage = l.page
      para.push(l.text)
    } else {
      const last = para[para.length - 1]!
      // "hyphen-" + "ation" was one word split by hyphenation; "100-" + "continue" and "100-" +
      // "199" keep their hyphen. Either way no space is added.
      if (/\p{L}-$/u.test(last) && /^\p{Ll}/u.test(l.text)) para[para.length - 1] = last.slice(0, -1)
      else if (!(hyphenated && /^[\p{L}\p{N}]/u.test(l.text))) para.push(' ')
      para.push(l.text)
    }
    prev = l
  }
  flush()
}
