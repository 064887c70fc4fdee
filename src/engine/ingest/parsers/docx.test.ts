import { describe, expect, it } from 'vitest'
import { ParseError } from '../types'
import { docxParts, makeDocx, makeZip } from './__fixtures__/generate'
import { parseDocx } from './docx'

async function parseError(p: Promise<unknown>): Promise<ParseError> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError)
    return e as ParseError
  }
  throw new Error('expected a ParseError')
}

describe('docx', () => {
  it('turns Heading 1/2 paragraphs into sections and tables into Markdown rows', async () => {
    const bytes = makeDocx(
      [
        { text: 'Before any heading.' },
        { style: 'Heading1', text: 'Installation' },
        { text: 'Install it & run.' },
        { style: 'Heading2', text: 'Requirements' },
        {
          table: [
            ['Component', 'Version'],
            ['Node', '20'],
            ['OS', 'Linux | macOS'],
          ],
        },
        { style: 'Heading1', text: 'Usage' },
        { text: 'Use it.' },
      ],
      { title: 'Docent Guide' },
    )
    const d = await parseDocx(bytes, 'guide.docx')
    expect(d.title).toBe('Docent Guide')
    expect(d.meta).toMatchObject({ title: 'Docent Guide', author: 'Test Author' })
    expect(d.sections).toEqual([
      { headings: [], level: 0, blocks: [{ kind: 'paragraph', text: 'Before any heading.' }] },
      { headings: ['Installation'], level: 1, blocks: [{ kind: 'paragraph', text: 'Install it & run.' }] },
      {
        headings: ['Installation', 'Requirements'],
        level: 2,
        blocks: [{ kind: 'table', text: '| Component | Version |\n| --- | --- |\n| Node | 20 |\n| OS | Linux \\| macOS |' }],
      },
      { headings: ['Usage'], level: 1, blocks: [{ kind: 'paragraph', text: 'Use it.' }] },
    ])
  })

  it('uses a Title paragraph as the title when the properties have none', async () => {
    const d = await parseDocx(makeDocx([{ style: 'Title', text: 'Handbook' }, { text: 'Hello.' }]), 'h.docx')
    expect(d.title).toBe('Handbook')
  })

  it('refuses a file that is not a zip', async () => {
    const e = await parseError(parseDocx(new TextEncoder().encode('plain text pretending to be a docx'), 'x.docx'))
    expect(e.message).toBe('file is not a valid DOCX (not a zip archive)')
  })

  it('refuses an old .doc / password-protected (OLE) file', async () => {
    const ole = new Uint8Array(1024)
    ole.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
    expect((await parseError(parseDocx(ole, 'old.docx'))).message).toMatch(/old-format Word document|password-protected/)
  })

  it('refuses a zip that is not a Word document', async () => {
    const e = await parseError(parseDocx(makeZip([{ name: 'hello.txt', data: 'hi' }]), 'x.docx'))
    expect(e.message).toMatch(/not a valid DOCX \(no word\/document\.xml/)
    await parseError(parseDocx(makeDocx([{ text: 'x' }]).subarray(0, 200), 'cut.docx'))
  })

  it('refuses a zip bomb quickly (an entry declaring a huge size)', async () => {
    const bomb = makeZip([
      ...docxParts([{ text: 'x' }]),
      { name: 'word/media/image1.png', data: 'tiny', declaredSize: 0xfffffff0 },
    ])
    const t0 = Date.now()
    const e = await parseError(parseDocx(bomb, 'bomb.docx'))
    expect(Date.now() - t0).toBeLessThan(1000)
    expect(e.message).toMatch(/zip bomb|too large when unpacked/)
  })

  it('refuses a total unpacked size over the limit', async () => {
    const parts = [...docxParts([{ text: 'x' }])]
    // 25 entries of 9 MB each: no single entry looks like a bomb, but together they pass 200 MB.
    for (let i = 0; i < 25; i++)
      parts.push({ name: `word/media/big${i}.bin`, data: 'x', store: true, declaredSize: 9 * 1024 * 1024 })
    expect((await parseError(parseDocx(makeZip(parts), 'big.docx'))).message).toMatch(/too large when unpacked/)
  })

  it('refuses an entry that unpacks to more than it declares', async () => {
    const liar = docxParts([{ text: 'x' }]).map((p) =>
      p.name === 'word/document.xml' ? { ...p, data: new Uint8Array(20 * 1024 * 1024), declaredSize: 1000 } : p,
    )
    const e = await parseError(parseDocx(makeZip(liar), 'liar.docx'))
    expect(e.message).toMatch(/zip bomb/)
  })
})
