import { describe, expect, it } from 'vitest'
import { parseError } from './__fixtures__/errors'
import { makeDocx, makeZip } from './__fixtures__/generate'
import { makeXlsx, oleFile, xlsxParts } from './__fixtures__/office'
import { documentHtml } from './doc-html'
import { MAX_CELLS } from './sheet'
import { parseXlsx } from './xlsx'

const sheetXml = (rows: string) =>
  `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`

describe('xlsx', () => {
  it('makes each sheet a section of one Markdown table, first non-empty row as header', async () => {
    const d = await parseXlsx(
      makeXlsx(
        [
          {
            name: 'Parts',
            rows: [[], ['Part', 'Price', 'In stock', null], ['Bolt | M3', 0.25, true], ['Nut', 3, false, null], [], []],
          },
          { name: 'Empty', rows: [] },
          { name: 'Notes', rows: [['Checked by'], ['Ana']] },
        ],
        { title: 'Inventory' },
      ),
      'inv.xlsx',
    )
    expect(d.title).toBe('Inventory')
    expect(d.sections).toEqual([
      {
        headings: ['Parts'],
        level: 1,
        blocks: [
          {
            kind: 'table',
            text: '| Part | Price | In stock |\n| --- | --- | --- |\n| Bolt \\| M3 | 0.25 | TRUE |\n| Nut | 3 | FALSE |',
          },
        ],
      },
      { headings: ['Notes'], level: 1, blocks: [{ kind: 'table', text: '| Checked by |\n| --- |\n| Ana |' }] },
    ])
    expect(d.notices).toBeUndefined()
    expect(documentHtml(d)).toContain('<h1>Parts</h1>\n<table><tr><th>Part</th><th>Price</th><th>In stock</th></tr>')
  })

  it('reads rich-text runs, inline strings, formula results and dates, and places cells by reference', async () => {
    const parts = xlsxParts([{ name: 'S', rows: [['x']] }]).map((p) => {
      if (p.name === 'xl/sharedStrings.xml')
        return { ...p, data: '<sst><si><r><t>Hel</t></r><r><rPr><b/></rPr><t>lo</t></r><rPh><t>ハロー</t></rPh></si></sst>' }
      if (p.name === 'xl/worksheets/sheet1.xml')
        return {
          ...p,
          data: sheetXml(
            '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="inlineStr"><is><t>inline</t></is></c></row>' +
              '<row r="3"><c r="A3" t="str"><f>A1&amp;"!"</f><v>Hello!</v></c><c r="B3" s="1"><v>45366</v></c><c r="C3" s="1"><v>45366.5</v></c></row>',
          ),
        }
      return p
    })
    parts.push({
      name: 'xl/styles.xml',
      data: '<styleSheet><numFmts><numFmt numFmtId="165" formatCode="yyyy\\-mm\\-dd"/></numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="165"/></cellXfs></styleSheet>',
    })
    const d = await parseXlsx(makeZip(parts), 'r.xlsx')
    expect(d.sections[0]!.blocks[0]!.text).toBe(
      '| Hello |  | inline |\n| --- | --- | --- |\n| Hello! | 2024-03-15 | 2024-03-15 12:00:00 |',
    )
  })

  it('reads a workbook whose writer prefixes the SpreadsheetML namespace (x:row, x:c)', async () => {
    const ns = 'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    const parts = xlsxParts([{ name: 'S', rows: [['x']] }]).map((p) => {
      if (p.name === 'xl/worksheets/sheet1.xml')
        return {
          ...p,
          data: `<x:worksheet ${ns}><x:sheetData><x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>Name</x:t></x:is></x:c></x:row><x:row r="2"><x:c r="A2"><x:v>7</x:v></x:c></x:row></x:sheetData></x:worksheet>`,
        }
      if (p.name === 'xl/workbook.xml')
        return {
          ...p,
          data: `<x:workbook ${ns} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><x:sheets><x:sheet name="Prefixed" sheetId="1" r:id="rId1"/></x:sheets></x:workbook>`,
        }
      return p
    })
    const d = await parseXlsx(makeZip(parts), 'p.xlsx')
    expect(d.sections).toEqual([
      { headings: ['Prefixed'], level: 1, blocks: [{ kind: 'table', text: '| Name |\n| --- |\n| 7 |' }] },
    ])
  })

  it('caps the cells read from a file and says what was left out', async () => {
    const rows: number[][] = []
    for (let r = 0; r < MAX_CELLS / 4 + 10; r++) rows.push([r, r, r, r])
    const d = await parseXlsx(
      makeXlsx([
        { name: 'Big', rows },
        { name: 'After', rows: [['never read']] },
      ]),
      'big.xlsx',
    )
    const table = d.sections[0]!.blocks[0]!.text
    expect(table.split('\n')).toHaveLength(MAX_CELLS / 4 + 1)
    expect(d.notices).toEqual([
      `sheet "Big": rows from ${MAX_CELLS / 4 + 1} on were left out (more than ${MAX_CELLS} cells in the file)`,
      `sheets "After" were left out (the file has more than ${MAX_CELLS} cells)`,
    ])
  })

  it('keeps a far-away cell from laying out a huge empty table', async () => {
    const parts = xlsxParts([{ name: 'S', rows: [['x']] }]).map((p) =>
      p.name === 'xl/worksheets/sheet1.xml'
        ? { ...p, data: sheetXml('<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row>') }
        : p,
    )
    const d = await parseXlsx(makeZip(parts), 'far.xlsx')
    expect(d.sections[0]!.blocks[0]!.text).toBe('| 1 |\n| --- |')
    expect(d.notices).toEqual(['sheet "S": cells right of column 512 were left out'])
  })

  it('refuses old .xls, encrypted files, other formats and a workbook without its parts', async () => {
    expect((await parseError(parseXlsx(oleFile(['Workbook']), 'old.xlsx'))).message).toBe(
      'file is an old-format Excel workbook (.xls); save it as .xlsx',
    )
    expect((await parseError(parseXlsx(oleFile(['EncryptedPackage']), 'e.xlsx'))).message).toMatch(/password-protected XLSX/)
    expect((await parseError(parseXlsx(makeDocx([{ text: 'x' }]), 'd.xlsx'))).message).toBe(
      'file is not a valid XLSX (it is a Word document (DOCX))',
    )
    expect((await parseError(parseXlsx(makeZip([{ name: 'a', data: 'b' }]), 'z.xlsx'))).message).toBe(
      'file is not a valid XLSX (no xl/workbook.xml)',
    )
    const noSheet = xlsxParts([{ name: 'Gone', rows: [['x']] }]).filter((p) => !p.name.startsWith('xl/worksheets/'))
    expect((await parseError(parseXlsx(makeZip(noSheet), 'n.xlsx'))).message).toBe(
      'file is not a valid XLSX (the sheet Gone (xl/worksheets/sheet1.xml) is missing)',
    )
  })
})
