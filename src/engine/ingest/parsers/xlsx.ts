import type { ParserFn } from '../types'
import { ParseError } from '../types'
import { coreProperties } from './docx'
import { guarded } from './guard'
import { openOffice, readPart, relationships, type OfficeKind } from './office'
import { columnNumber, SheetCollector } from './sheet'
import { prefixedAttr, xmlWalk } from './xml'
import type { ZipArchive } from './zip'

/**
 * XLSX (Excel, LibreOffice Calc): every worksheet, in the workbook's order (xl/workbook.xml, its
 * relationships naming each sheet's part), as a section headed by the sheet's name holding one
 * Markdown table (sheet.ts). Cell text: shared strings (rich-text runs joined, phonetic guides
 * left out), inline strings, a formula's cached result, TRUE/FALSE for booleans, numbers as the
 * value stored, except that a number formatted as a date is written as one (2024-03-15): a date's
 * stored value is a day count no one searches for.
 *
 * Not read: charts, pictures, comments, hidden-ness (hidden sheets are read too), number formats
 * other than dates (1234.5 shows as stored, not as "1,234.50").
 */

const KIND: OfficeKind = { label: 'XLSX', main: 'xl/workbook.xml', old: { app: 'Excel workbook', ext: '.xls' } }
const invalid = (reason: string) => new ParseError(`file is not a valid XLSX (${reason})`)

async function sharedStrings(zip: ZipArchive, part: string | undefined): Promise<string[]> {
  const xml = await readPart(zip, part ?? 'xl/sharedStrings.xml', 'XLSX')
  const out: string[] = []
  if (!xml) return out
  let text = ''
  let inT = false
  let phonetic = 0
  xmlWalk(
    xml,
    {
      open(name) {
        if (name === 'si') text = ''
        else if (name === 'rPh') phonetic++
        else if (name === 't') inT = phonetic === 0
      },
      text(t) {
        if (inT) text += t
      },
      close(name) {
        if (name === 't') inT = false
        else if (name === 'rPh') phonetic--
        else if (name === 'si') out.push(text)
      },
    },
    { localNames: true },
  )
  return out
}

/** Built-in number formats that are dates or times (ECMA-376 18.8.30). */
const BUILTIN_DATES = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 30, 36, 45, 46, 47, 50, 57])

/** For each cell style (its `s` index): whether its number format shows a date. */
async function dateStyles(zip: ZipArchive): Promise<boolean[]> {
  const xml = await readPart(zip, 'xl/styles.xml', 'XLSX')
  const out: boolean[] = []
  if (!xml) return out
  const custom = new Map<number, boolean>()
  let inXfs = false
  xmlWalk(
    xml,
    {
      open(name, attrs) {
        if (name === 'numFmt') {
          // A date format has day/month/year/hour letters outside quoted text, escapes and [colour] brackets.
          const code = (attrs['formatCode'] ?? '').replace(/"[^"]*"|\\.|\[[^\]]*\]/g, '')
          custom.set(Number(attrs['numFmtId']), /[dmyhs]/i.test(code) && !/^general$/i.test(code))
        } else if (name === 'cellXfs') inXfs = true
        else if (name === 'xf' && inXfs) {
          const id = Number(attrs['numFmtId'] ?? 0)
          out.push(custom.get(id) ?? BUILTIN_DATES.has(id))
        }
      },
      close(name) {
        if (name === 'cellXfs') inXfs = false
      },
    },
    { localNames: true },
  )
  return out
}

/** A date serial (days since 1899-12-30, the 1900 system as written today) as ISO text. */
function serialDate(value: number, date1904: boolean): string {
  if (value < 0 || value > 2_958_465) return String(value) // outside 1900-01-01 .. 9999-12-31
  const ms = Math.round((value + (date1904 ? 1462 : 0)) * 86_400_000) + Date.UTC(1899, 11, 30)
  const iso = new Date(ms).toISOString()
  const time = iso.slice(11, 19)
  if (value < 1) return time
  return time === '00:00:00' ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${time}`
}

interface SheetRef {
  name: string
  part: string
}

async function workbook(zip: ZipArchive): Promise<{ sheets: SheetRef[]; date1904: boolean; shared?: string }> {
  const xml = (await readPart(zip, KIND.main, 'XLSX'))!
  const rels = await relationships(zip, KIND.main, 'XLSX')
  const sheets: SheetRef[] = []
  let date1904 = false
  xmlWalk(
    xml,
    {
      open(name, attrs) {
        if (name === 'workbookPr') date1904 = attrs['date1904'] === '1' || attrs['date1904'] === 'true'
        if (name !== 'sheet') return
        const rel = rels.get(prefixedAttr(attrs, 'id') ?? '')
        if (rel && /\/worksheet$/.test(rel.type))
          sheets.push({ name: attrs['name'] ?? `Sheet ${sheets.length + 1}`, part: rel.target })
      },
    },
    { localNames: true },
  )
  if (sheets.length === 0) throw invalid('its workbook lists no worksheets')
  const shared = [...rels.values()].find((r) => /\/sharedStrings$/.test(r.type))?.target
  return { sheets, date1904, shared }
}

interface CellState {
  row: number
  col: number
  type: string
  style: number
  value: string
  inline: string
  inValue: boolean
  inInline: boolean
}

function readSheet(xml: string, sheet: SheetRef, out: SheetCollector, strings: string[], dates: boolean[], date1904: boolean) {
  let row = -1
  let nextCol = 0
  let c: CellState | null = null
  let stop = false
  const text = (cell: CellState): string => {
    const v = cell.value.trim()
    switch (cell.type) {
      case 's':
        return strings[Number(v)] ?? ''
      case 'inlineStr':
        return cell.inline
      case 'b':
        return v === '1' ? 'TRUE' : v === '0' ? 'FALSE' : v
      case 'str':
      case 'e':
        return cell.value
      default: {
        const n = Number(v)
        return v && dates[cell.style] && Number.isFinite(n) ? serialDate(n, date1904) : v
      }
    }
  }
  out.startSheet(sheet.name)
  xmlWalk(
    xml,
    {
      open(name, attrs) {
        if (stop) return
        if (name === 'row') {
          const r = Number(attrs['r'])
          row = Number.isInteger(r) && r > 0 ? r - 1 : row + 1
          nextCol = 0
        } else if (name === 'c') {
          const ref = /^([A-Za-z]{1,3})\d*$/.exec(attrs['r'] ?? '')
          const col = ref ? columnNumber(ref[1]!) : nextCol
          nextCol = col + 1
          c = {
            row,
            col,
            type: attrs['t'] ?? 'n',
            style: Number(attrs['s'] ?? 0),
            value: '',
            inline: '',
            inValue: false,
            inInline: false,
          }
        } else if (c && name === 'v') c.inValue = true
        else if (c && name === 't') c.inInline = true
      },
      text(t) {
        if (!c) return
        if (c.inValue) c.value += t
        else if (c.inInline) c.inline += t
      },
      close(name) {
        if (!c) return
        if (name === 'v') c.inValue = false
        else if (name === 't') c.inInline = false
        else if (name === 'c') {
          if (!stop && !out.cell(c.row, c.col, text(c))) stop = true
          c = null
        }
      },
    },
    { localNames: true },
  )
}

export const parseXlsx: ParserFn = guarded('XLSX', async (bytes) => {
  const zip = await openOffice(bytes, KIND)
  const book = await workbook(zip)
  const strings = await sharedStrings(zip, book.shared)
  const dates = await dateStyles(zip)
  const cells = new SheetCollector()
  for (const sheet of book.sheets) {
    if (cells.full) {
      cells.startSheet(sheet.name)
      continue
    }
    const xml = await readPart(zip, sheet.part, 'XLSX')
    if (xml === null) throw invalid(`the sheet ${sheet.name} (${sheet.part}) is missing`)
    readSheet(xml, sheet, cells, strings, dates, book.date1904)
  }
  return cells.document(await coreProperties(zip))
})
