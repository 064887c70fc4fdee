import { describe, expect, it } from 'vitest'
import { parseError } from './__fixtures__/errors'
import { makeDocx, makeZip } from './__fixtures__/generate'
import { makePptx, makeXlsx, oleFile, pptxParts } from './__fixtures__/office'
import { documentHtml } from './doc-html'
import { parsePptx } from './pptx'

describe('pptx', () => {
  const deck = () =>
    makePptx(
      [
        { shapes: [{ title: 'Quarterly review', type: 'ctrTitle' }, { body: [{ text: 'Platform team', bullet: 'none' }] }] },
        {
          shapes: [
            { title: 'Goals' },
            { body: ['Ship the importer', { text: 'PPTX and XLSX', level: 1 }, { text: 'Said plainly.', bullet: 'none' }] },
          ],
          notes: 'Remind them of the deadline.',
        },
        {
          shapes: [
            {
              table: [
                ['Format', 'Status'],
                ['ODS', 'done | tested'],
              ],
            },
            {
              body: [
                { text: 'First', bullet: 'auto' },
                { text: 'Second', bullet: 'auto' },
              ],
              placeholder: false,
            },
          ],
        },
        { shapes: [{ title: 'Questions?' }] },
      ],
      { title: 'Review Q3' },
    )

  it('reads slides in presentation order, each a section under its title (or "Slide N"), with tables, lists and notes', async () => {
    const d = await parsePptx(deck(), 'review.pptx')
    expect(d.title).toBe('Review Q3')
    expect(d.sections).toEqual([
      { headings: ['Quarterly review'], level: 1, blocks: [{ kind: 'paragraph', text: 'Platform team' }] },
      {
        headings: ['Goals'],
        level: 1,
        blocks: [
          { kind: 'list', text: '- Ship the importer\n  - PPTX and XLSX' },
          { kind: 'paragraph', text: 'Said plainly.' },
          { kind: 'paragraph', text: 'Speaker notes: Remind them of the deadline.' },
        ],
      },
      {
        headings: ['Slide 3'],
        level: 1,
        blocks: [
          { kind: 'table', text: '| Format | Status |\n| --- | --- |\n| ODS | done \\| tested |' },
          { kind: 'list', text: '1. First\n2. Second' },
        ],
      },
      // A slide holding only its title keeps the title as its text: it would vanish otherwise.
      { headings: ['Questions?'], level: 1, blocks: [{ kind: 'paragraph', text: 'Questions?' }] },
    ])
  })

  it('takes an untitled deck title from its title slide, and renders as HTML for the viewer', async () => {
    const d = await parsePptx(makePptx([{ shapes: [{ title: 'Launch <plan>', type: 'ctrTitle' }] }]), 'x.pptx')
    expect(d.title).toBe('Launch <plan>')
    const html = documentHtml(await parsePptx(deck(), 'review.pptx'))
    expect(html).toContain('<h1>Goals</h1>')
    expect(html).toContain('<ul><li>Ship the importer<ul><li>PPTX and XLSX</li></ul></li></ul>')
    expect(html).toContain('<tr><th>Format</th><th>Status</th></tr><tr><td>ODS</td><td>done | tested</td></tr>')
    expect(documentHtml(d)).toContain('<h1>Launch &lt;plan&gt;</h1>')
  })

  it('refuses old .ppt and password-protected files, saying which', async () => {
    expect((await parseError(parsePptx(oleFile(['PowerPoint Document']), 'old.pptx'))).message).toBe(
      'file is an old-format PowerPoint presentation (.ppt); save it as .pptx',
    )
    expect((await parseError(parsePptx(oleFile(['EncryptionInfo', 'EncryptedPackage']), 'locked.pptx'))).message).toMatch(
      /password-protected PPTX/,
    )
  })

  it('says what a zip is when it is another format, and names a missing part', async () => {
    expect((await parseError(parsePptx(makeDocx([{ text: 'x' }]), 'w.pptx'))).message).toBe(
      'file is not a valid PPTX (it is a Word document (DOCX))',
    )
    expect((await parseError(parsePptx(makeXlsx([{ name: 'S', rows: [['a']] }]), 'x.pptx'))).message).toMatch(/Excel workbook/)
    expect((await parseError(parsePptx(makeZip([{ name: 'a.txt', data: 'hi' }]), 'z.pptx'))).message).toBe(
      'file is not a valid PPTX (no ppt/presentation.xml)',
    )
    const noSlide = pptxParts([{ shapes: [{ title: 'T' }] }]).filter((p) => !p.name.startsWith('ppt/slides/'))
    expect((await parseError(parsePptx(makeZip(noSlide), 'n.pptx'))).message).toMatch(
      /the slide ppt\/slides\/slide1\.xml is missing/,
    )
    expect((await parseError(parsePptx(new TextEncoder().encode('not a zip'), 't.pptx'))).message).toBe(
      'file is not a valid PPTX (not a zip archive)',
    )
  })

  it('refuses a zip bomb as DOCX does', async () => {
    const bomb = makeZip([
      ...pptxParts([{ shapes: [{ title: 'T' }] }]),
      { name: 'ppt/media/a.png', data: 'x', declaredSize: 0xfffffff0 },
    ])
    expect((await parseError(parsePptx(bomb, 'b.pptx'))).message).toMatch(/zip bomb|too large when unpacked/)
    const liar = pptxParts([{ shapes: [{ title: 'T' }] }]).map((p) =>
      p.name === 'ppt/slides/slide1.xml' ? { ...p, data: new Uint8Array(5 * 1024 * 1024), declaredSize: 100 } : p,
    )
    expect((await parseError(parsePptx(makeZip(liar), 'l.pptx'))).message).toMatch(/zip bomb/)
  })
})
