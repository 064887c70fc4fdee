import type { ParserFn } from '../types'
import { ParseError } from '../types'
import { guarded } from './guard'
import { odfMeta, openOffice, readPart, type OfficeKind } from './office'
import { MAX_CELLS, MAX_COLUMNS, SheetCollector } from './sheet'
import { xmlWalk } from './xml'

/**
 * ODS (LibreOffice Calc, OpenDocument spreadsheet): content.xml's tables, each a sheet, as
 * sections headed by the sheet's name holding one Markdown table (sheet.ts). A cell's text is its
 * stored value for numbers (office:value), dates (office:date-value) and booleans, its paragraphs
 * otherwise. Rows and cells repeated by number-rows-repeated / number-columns-repeated are laid
 * out again only when they hold text, and never past the cell budget: LibreOffice writes
 * rows-repeated="1048576" for a sheet's empty tail, and a hostile file may repeat a full row as often.
 *
 * Not read: charts, pictures, comments (office:annotation), formulas (their cached value is read).
 */

export const ODS_KIND: OfficeKind = {
  label: 'ODS',
  main: 'content.xml',
  mimetype: 'application/vnd.oasis.opendocument.spreadsheet',
}

const repeat = (v: string | undefined) => {
  const n = Number(v ?? 1)
  return Number.isInteger(n) && n > 0 ? n : 1
}

function stored(attrs: Record<string, string>): string | null {
  switch (attrs['office:value-type']) {
    case 'float':
    case 'percentage':
    case 'currency':
      return attrs['office:value'] ?? null
    case 'date':
      return attrs['office:date-value'] ?? null
    case 'boolean':
      return attrs['office:boolean-value'] === 'true' ? 'TRUE' : attrs['office:boolean-value'] === 'false' ? 'FALSE' : null
    default:
      return null
  }
}

/** Reads the sheets of content.xml into `out`. */
export function readOdsContent(xml: string, out: SheetCollector): void {
  let tableDepth = 0
  let row = 0
  let rowRepeat = 1
  let col = 0
  /** The row being read: its cells with text, to be laid out rowRepeat times. */
  let cells: { col: number; text: string; repeat: number }[] = []
  let cell: { value: string | null; parts: string[]; repeat: number; paragraphs: number } | null = null
  let skip = 0
  let stop = false
  xmlWalk(xml, {
    open(name, attrs) {
      if (stop) return
      if (skip > 0 || name === 'office:annotation') {
        skip++
        return
      }
      if (name === 'table:table') {
        // A table inside a cell (a sub-table) is read as that cell's text.
        if (tableDepth++ === 0) {
          out.startSheet(attrs['table:name'] ?? 'Sheet')
          row = 0
        }
      } else if (tableDepth === 1 && name === 'table:table-row') {
        rowRepeat = repeat(attrs['table:number-rows-repeated'])
        col = 0
        cells = []
      } else if (tableDepth === 1 && (name === 'table:table-cell' || name === 'table:covered-table-cell')) {
        cell = { value: stored(attrs), parts: [], repeat: repeat(attrs['table:number-columns-repeated']), paragraphs: 0 }
      } else if (cell && (name === 'text:s' || name === 'text:tab' || name === 'text:line-break')) cell.parts.push(' ')
      else if (cell && name === 'text:p' && cell.paragraphs++ > 0) cell.parts.push(' ')
    },
    text(t) {
      if (!stop && skip === 0 && cell) cell.parts.push(t)
    },
    close(name) {
      if (stop) return
      if (skip > 0) {
        skip--
        return
      }
      if (name === 'table:table') {
        tableDepth--
      } else if (tableDepth !== 1) {
        return
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && cell) {
        const text = cell.value ?? cell.parts.join('')
        if (text.trim()) cells.push({ col, text, repeat: cell.repeat })
        col += cell.repeat
        cell = null
      } else if (name === 'table:table-row') {
        // Empty rows (however often repeated) only move the row number; a row with text is laid
        // out again per repeat until the cell budget is spent.
        // Cells right of the kept columns are passed once (for the notice), not once per repeat.
        const kept = cells.filter((c) => c.col < MAX_COLUMNS)
        for (const c of cells) if (c.col >= MAX_COLUMNS) out.cell(row, c.col, c.text, c.repeat)
        const times = kept.length > 0 ? Math.min(rowRepeat, MAX_CELLS + 1) : 0
        for (let r = 0; r < times && !stop; r++)
          for (const c of kept) if (!out.cell(row + r, c.col, c.text, c.repeat)) stop = true
        row += rowRepeat
      }
    },
  })
}

export const parseOds: ParserFn = guarded('ODS', async (bytes) => {
  const zip = await openOffice(bytes, ODS_KIND)
  const xml = await readPart(zip, 'content.xml', 'ODS')
  if (xml === null) throw new ParseError('file is not a valid ODS (no content.xml)')
  if (!/<office:spreadsheet\b/.test(xml)) throw new ParseError('file is not a valid ODS (its content is not a spreadsheet)')
  const cells = new SheetCollector()
  readOdsContent(xml, cells)
  return cells.document(await odfMeta(zip, 'ODS'))
})
