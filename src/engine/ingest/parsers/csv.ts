import { CsvError, parse } from 'csv-parse/sync'
import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { renderTable } from './html-walker'
import { checkText } from './textcheck'

/**
 * CSV and TSV: the first row is the header, the rows go out as Markdown tables of ROWS_PER_BLOCK
 * rows each, every one with the header repeated, so each chunk a table lands in still says what
 * its columns are. The whole file is one section without a heading (as plain text: the title
 * falls back to the file's name where documents are listed). The delimiter of a .csv is sniffed
 * from its first lines (comma, semicolon, tab or bar: spreadsheets in many locales write `;`).
 */

/** Rows per table block (the header row not counted). */
export const ROWS_PER_BLOCK = 50
/** Cells read at most; the rows after are left out, with a notice (a data dump is not documentation). */
export const MAX_CELLS = 200_000

const CANDIDATES = [',', ';', '\t', '|'] as const

/**
 * The delimiter that splits the first lines most consistently: for each candidate, the count per
 * line outside double quotes; the one whose most common count (> 0) covers the most lines wins,
 * ties going to the more columns, then to the order of CANDIDATES (comma first).
 */
export function sniffDelimiter(text: string): string {
  const lines = text.split(/\r\n?|\n/, 20).filter((l) => l.trim() !== '')
  let best: string = ','
  let bestScore = -1
  let bestCols = 0
  for (const d of CANDIDATES) {
    const counts = lines.map((l) => countOutsideQuotes(l, d))
    const freq = new Map<number, number>()
    for (const c of counts) if (c > 0) freq.set(c, (freq.get(c) ?? 0) + 1)
    let mode = 0
    let cover = 0
    for (const [c, n] of freq) if (n > cover || (n === cover && c > mode)) [mode, cover] = [c, n]
    if (cover > bestScore || (cover === bestScore && mode > bestCols)) {
      best = d
      bestScore = cover
      bestCols = mode
    }
  }
  return bestScore > 0 ? best : ','
}

function countOutsideQuotes(line: string, d: string): number {
  let n = 0
  let quoted = false
  for (const ch of line) {
    if (ch === '"') quoted = !quoted
    else if (ch === d && !quoted) n++
  }
  return n
}

/**
 * The line (1-based) of the quote that opens the cell still open at the end of the text: quotes
 * count only at the start of a cell or inside a quoted one (as relax_quotes reads them).
 */
function openQuoteLine(text: string, delimiter: string): number | null {
  let quoted = false
  let line = 1
  let openedAt = 0
  // 'closed' right after a closing quote: a quote there is the second of an escaped "" instead.
  let prev = '\n'
  for (const ch of text) {
    if (ch === '"') {
      if (quoted) {
        quoted = false
        prev = 'closed'
        continue
      }
      const cellStart = prev === delimiter || prev === '\n' || prev === '\r'
      if (prev === 'closed' || cellStart) {
        quoted = true
        if (cellStart) openedAt = line
        prev = '"'
        continue
      }
    }
    if (ch === '\n') line++
    prev = ch
  }
  return quoted ? openedAt : null
}

/** csv-parse's reasons, in words a person can act on. */
function reasonOf(e: CsvError, text: string, delimiter: string): string {
  const last = typeof e['lines'] === 'number' ? (e['lines'] as number) : null
  switch (e.code) {
    case 'CSV_QUOTE_NOT_CLOSED': {
      const opened = openQuoteLine(text, delimiter)
      const where = opened !== null ? ` the quote opening it on line ${opened} runs to the end of the file` : ''
      return `a quoted cell is never closed:${where || ' the file ends inside quotes'}${last !== null ? ` (line ${last})` : ''}`
    }
    default:
      return `${e.message.replace(/^[\w ]+: /, '')}`
  }
}

function parseRows(text: string, delimiter: string, to?: number): string[][] {
  try {
    return parse(text, {
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      bom: true,
      skip_empty_lines: true,
      ...(to !== undefined ? { to } : {}),
    }) as string[][]
  } catch (e) {
    if (e instanceof CsvError) throw new ParseError(`not a valid CSV file: ${reasonOf(e, text, delimiter)}`)
    throw e
  }
}

/** Cells as Markdown table text: line breaks inside a quoted cell become spaces (a table row is one line). */
const cell = (s: string) => s.replace(/\s+/g, ' ').trim()

export function parseCsvString(text: string, relativePath: string): ParsedDocument {
  const delimiter = /\.tsv$/i.test(relativePath) ? '\t' : sniffDelimiter(text)
  const head = parseRows(text, delimiter, 1)
  const width = Math.max(1, head[0]?.length ?? 1)
  const maxRows = Math.max(2, Math.floor(MAX_CELLS / width))
  const rows = parseRows(text, delimiter, maxRows + 1).map((r) => r.map(cell))
  const notices: string[] = []
  if (rows.length > maxRows) {
    rows.length = maxRows
    notices.push(
      `only the first ${maxRows.toLocaleString('en-US')} rows were read (${MAX_CELLS.toLocaleString('en-US')} cells at most); the rows after are left out`,
    )
  }
  const b = new DocBuilder()
  const [header, ...body] = rows
  if (header) {
    if (body.length === 0) b.add('table', renderTable([header]))
    for (let i = 0; i < body.length; i += ROWS_PER_BLOCK)
      b.add('table', renderTable([header, ...body.slice(i, i + ROWS_PER_BLOCK)]))
  }
  const doc: ParsedDocument = { title: null, meta: {}, sections: b.finish() }
  if (notices.length > 0) doc.notices = notices
  return doc
}

export const parseCsv: ParserFn = guarded('CSV', (bytes, relativePath) => parseCsvString(checkText(bytes), relativePath))
