import { describe, expect, it } from 'vitest'
import { parseError } from './__fixtures__/errors'
import { makeZip } from './__fixtures__/generate'
import { odfParts } from './__fixtures__/office'
import { parseOds } from './ods'
import { MAX_CELLS } from './sheet'

const cell = (text: string, attrs = '') =>
  `<table:table-cell office:value-type="string"${attrs}><text:p>${text}</text:p></table:table-cell>`
const row = (cells: string, attrs = '') => `<table:table-row${attrs}>${cells}</table:table-row>`
const ods = (body: string, opts: { title?: string; manifest?: string } = {}) => makeZip(odfParts('spreadsheet', body, opts))

describe('ods', () => {
  it('makes each table a section headed by its name, with stored values and an empty tail skipped', async () => {
    const sheet1 =
      '<table:table table:name="Releases"><table:table-column table:number-columns-repeated="1024"/>' +
      row('<table:table-cell/>', ' table:number-rows-repeated="2"') +
      row(cell('Version') + cell('Date') + cell('Share') + cell('Stable')) +
      row(
        cell('1.2 | LTS') +
          '<table:table-cell office:value-type="date" office:date-value="2024-03-15"><text:p>03/15/24</text:p></table:table-cell>' +
          '<table:table-cell office:value-type="percentage" office:value="0.25"><text:p>25%</text:p></table:table-cell>' +
          '<table:table-cell office:value-type="boolean" office:boolean-value="true"><text:p>TRUE</text:p></table:table-cell>' +
          '<table:table-cell table:number-columns-repeated="16380"/>',
      ) +
      row(
        cell('two<text:s text:c="3"/>words<text:line-break/>here') +
          '<table:covered-table-cell/>' +
          cell('x', ' table:number-columns-repeated="2"'),
      ) +
      row('<table:table-cell table:number-columns-repeated="16384"/>', ' table:number-rows-repeated="1048570"') +
      '</table:table>'
    const sheet2 = `<table:table table:name="Notes">${row(cell('Note<office:annotation><text:p>a comment</text:p></office:annotation>'))}</table:table>`
    const d = await parseOds(ods(sheet1 + sheet2, { title: 'Releases' }), 'r.ods')
    expect(d.title).toBe('Releases')
    expect(d.sections).toEqual([
      {
        headings: ['Releases'],
        level: 1,
        blocks: [
          {
            kind: 'table',
            text: '| Version | Date | Share | Stable |\n| --- | --- | --- | --- |\n| 1.2 \\| LTS | 2024-03-15 | 0.25 | TRUE |\n| two words here |  | x | x |',
          },
        ],
      },
      { headings: ['Notes'], level: 1, blocks: [{ kind: 'table', text: '| Note |\n| --- |' }] },
    ])
    expect(d.notices).toBeUndefined()
  })

  it('survives a repeated-rows bomb: a full row repeated a million times stops at the cell budget, with a notice', async () => {
    const wide = cell('boom', ' table:number-columns-repeated="16384"')
    const body = `<table:table table:name="Bomb">${row(cell('h'))}${row(wide, ' table:number-rows-repeated="1048575"')}</table:table>`
    const t0 = Date.now()
    const d = await parseOds(ods(body), 'bomb.ods')
    expect(Date.now() - t0).toBeLessThan(10_000)
    const lines = d.sections[0]!.blocks[0]!.text.split('\n')
    // 512 columns kept per row: the header row (1 cell) plus floor((budget - 1) / 512) full rows, and part of the next.
    expect(lines[0]).toBe(`| h |${'  |'.repeat(511)}`)
    expect(lines.length).toBe(2 + Math.ceil((MAX_CELLS - 1) / 512))
    expect(d.notices?.[0]).toMatch(/^sheet "Bomb": rows from \d+ on were left out \(more than 200000 cells in the file\)$/)
    expect(d.notices?.[1]).toMatch(/cells right of column 512 were left out/)
  })

  it('lays out no repeats of a row whose text is all right of the kept columns', async () => {
    const far = '<table:table-cell table:number-columns-repeated="600"/>' + cell('far', ' table:number-columns-repeated="5000"')
    const body = `<table:table table:name="Far">${row(cell('h'))}${row(far, ' table:number-rows-repeated="1000000"')}</table:table>`
    const t0 = Date.now()
    const d = await parseOds(ods(body), 'far.ods')
    expect(Date.now() - t0).toBeLessThan(2_000)
    expect(d.sections[0]!.blocks[0]!.text).toBe('| h |\n| --- |')
    expect(d.notices).toEqual(['sheet "Far": cells right of column 512 were left out'])
  })

  it('refuses a password-protected file, another OpenDocument type, and a zip without content', async () => {
    const manifest =
      '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data manifest:checksum-type="SHA1/1K"/></manifest:file-entry></manifest:manifest>'
    expect((await parseError(parseOds(ods('', { manifest }), 'p.ods'))).message).toBe(
      'ODS is password-protected (its content is encrypted); remove the password and import it again',
    )
    expect((await parseError(parseOds(makeZip(odfParts('text', '<text:p>x</text:p>')), 't.ods'))).message).toBe(
      'file is not a valid ODS (it is an OpenDocument text (ODT))',
    )
    const noContent = odfParts('spreadsheet', '').filter((p) => p.name !== 'content.xml')
    expect((await parseError(parseOds(makeZip(noContent), 'n.ods'))).message).toBe('file is not a valid ODS (no content.xml)')
    expect((await parseError(parseOds(new TextEncoder().encode('a,b\n1,2'), 'c.ods'))).message).toBe(
      'file is not a valid ODS (not a zip archive)',
    )
  })
})
