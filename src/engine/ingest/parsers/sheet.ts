import type { ParsedDocument } from '../types'
import { DocBuilder } from './builder'
import { renderTable } from './html'

/**
 * The cells of a spreadsheet (XLSX, ODS) on their way to sections: each sheet a section headed by
 * its name, its rows one Markdown table whose first non-empty row is the header. Only cells with
 * text are kept, by position, so empty rows and columns (trailing or not) cost nothing and
 * vanish from the table. A budget of cells per file keeps a huge or hostile sheet (a million
 * repeated rows) from filling memory; what it leaves out is named in a notice.
 */

/** Cells with text read from one file. */
export const MAX_CELLS = 200_000
/** Columns kept per sheet (Excel 2003 had 256); a cell further right is left out, with a notice. */
export const MAX_COLUMNS = 512
/** Cells of one sheet's table, empty ones included, once laid out in rows and kept columns. */
const MAX_LAID_OUT = 2_000_000

interface Sheet {
  name: string
  /** row number -> (column number -> text), rows in the order first seen. */
  rows: Map<number, Map<number, string>>
  /** Rows left out by the budget: the first one's number (1-based), or null. */
  cutAtRow: number | null
  /** Cells right of MAX_COLUMNS were met. */
  wideCells: number
}

export class SheetCollector {
  private readonly sheets: Sheet[] = []
  private cells = 0
  readonly notices: string[] = []
  /** Sheets never read because the budget ran out. */
  private readonly skipped: string[] = []

  constructor(private readonly maxCells = MAX_CELLS) {}

  get full(): boolean {
    return this.cells >= this.maxCells
  }

  startSheet(name: string): void {
    if (this.full) this.skipped.push(name)
    else this.sheets.push({ name, rows: new Map(), cutAtRow: null, wideCells: 0 })
  }

  /**
   * A cell with text at (row, col), both 0-based, in the sheet started last; `repeat` copies of it
   * to the right (ODS's number-columns-repeated). Returns false once the budget is spent: the
   * caller may stop reading.
   */
  cell(row: number, col: number, text: string, repeat = 1): boolean {
    const sheet = this.sheets[this.sheets.length - 1]
    if (!sheet || sheet.cutAtRow !== null) return !this.full
    const t = text.replace(/\s+/g, ' ').trim()
    if (!t) return true
    for (let i = 0; i < repeat; i++) {
      if (col + i >= MAX_COLUMNS) {
        sheet.wideCells += repeat - i
        break
      }
      if (this.cells >= this.maxCells) {
        sheet.cutAtRow = row + 1
        return false
      }
      let r = sheet.rows.get(row)
      if (!r) sheet.rows.set(row, (r = new Map()))
      if (!r.has(col + i)) this.cells++
      r.set(col + i, t)
    }
    return true
  }

  /** The workbook as a document: its sheets' sections, the file's metadata, notices of what was left out. */
  document(meta: Record<string, unknown>): ParsedDocument {
    const b = new DocBuilder()
    this.render(b)
    const doc: ParsedDocument = { title: typeof meta['title'] === 'string' ? meta['title'] : null, meta, sections: b.finish() }
    if (this.notices.length > 0) doc.notices = this.notices
    return doc
  }

  /** Every sheet as a section (in workbook order); the notices name what the budget left out. */
  private render(b: DocBuilder): void {
    for (const sheet of this.sheets) {
      const used = new Set<number>()
      for (const r of sheet.rows.values()) for (const c of r.keys()) used.add(c)
      const cols = [...used].sort((x, y) => x - y)
      const rowNumbers = [...sheet.rows.keys()].sort((x, y) => x - y)
      const maxRows = Math.max(1, Math.floor(MAX_LAID_OUT / Math.max(1, cols.length)))
      if (rowNumbers.length > maxRows) {
        const cut = rowNumbers[maxRows]! + 1
        sheet.cutAtRow = sheet.cutAtRow === null ? cut : Math.min(sheet.cutAtRow, cut)
        rowNumbers.length = maxRows
      }
      b.heading(1, sheet.name)
      const rows = rowNumbers.map((n) => cols.map((c) => sheet.rows.get(n)!.get(c) ?? ''))
      b.add('table', renderTable(rows))
      if (sheet.cutAtRow !== null)
        this.notices.push(
          `sheet "${sheet.name}": rows from ${sheet.cutAtRow} on were left out (more than ${this.maxCells} cells in the file)`,
        )
      if (sheet.wideCells > 0) this.notices.push(`sheet "${sheet.name}": cells right of column ${MAX_COLUMNS} were left out`)
    }
    if (this.skipped.length > 0)
      this.notices.push(
        `sheets ${this.skipped.map((s) => `"${s}"`).join(', ')} were left out (the file has more than ${this.maxCells} cells)`,
      )
  }
}

/** A spreadsheet column name (A, Z, AA, XFD) as a 0-based number; NaN when it is not one. */
export function columnNumber(letters: string): number {
  let n = 0
  for (const ch of letters.toUpperCase()) {
    const v = ch.charCodeAt(0) - 64
    if (v < 1 || v > 26) return Number.NaN
    n = n * 26 + v
  }
  return n - 1
}
