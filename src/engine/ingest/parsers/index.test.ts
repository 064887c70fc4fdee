import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ParseError } from '../types'
import { makeDocx, makePdf, makeZip } from './__fixtures__/generate'
import { makePptx, makeXlsx, odfParts } from './__fixtures__/office'
import { checkText, parseFile, parserFor, SUPPORTED_EXTENSIONS } from './index'

async function parseError(p: Promise<unknown>): Promise<ParseError> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError)
    return e as ParseError
  }
  throw new Error('expected a ParseError')
}

describe('parserFor / SUPPORTED_EXTENSIONS', () => {
  it('maps extensions (case-insensitive) and returns null for unsupported types', () => {
    for (const p of [
      'a.md',
      'b/c.MDX',
      'x.markdown',
      'n.txt',
      'n.text',
      'r.rst',
      'r.rest',
      'i.adoc',
      'i.asciidoc',
      'i.asc',
      't.csv',
      't.TSV',
      'p.html',
      'p.HTM',
      'd.pdf',
      'w.docx',
      'b.EPUB',
      's.pptx',
      't.ODT',
      'c.ods',
      'x.xlsx',
      'b.png',
      's.JPG',
      's.jpeg',
      't.tif',
      't.tiff',
    ])
      expect(parserFor(p)).not.toBeNull()
    for (const p of ['a.doc', 'b.gif', 'noext', '.md', 'x.md.bak', 'z.xls', 'p.ppt']) expect(parserFor(p)).toBeNull()
    expect([...SUPPORTED_EXTENSIONS].sort()).toEqual([
      '.adoc',
      '.asc',
      '.asciidoc',
      '.csv',
      '.docx',
      '.epub',
      '.htm',
      '.html',
      '.jpeg',
      '.jpg',
      '.markdown',
      '.md',
      '.mdx',
      '.ods',
      '.odt',
      '.pdf',
      '.png',
      '.pptx',
      '.rest',
      '.rst',
      '.text',
      '.tif',
      '.tiff',
      '.tsv',
      '.txt',
      '.xlsx',
    ])
  })
})

describe('checkText', () => {
  it('strips a UTF-8 BOM and accepts UTF-16 with a BOM', () => {
    expect(checkText(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]))).toBe('hi')
    expect(checkText(new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('# Héllo', 'utf16le')])))).toBe(
      '# Héllo',
    )
    const be = Buffer.from('hi', 'utf16le').swap16()
    expect(checkText(new Uint8Array(Buffer.concat([Buffer.from([0xfe, 0xff]), be])))).toBe('hi')
  })

  it('names the first invalid byte', () => {
    expect(() => checkText(new Uint8Array(Buffer.from('caf\xe9 cr\xe8me', 'latin1')))).toThrow(/not valid UTF-8 text \(byte 3\)/)
    expect(() => checkText(new Uint8Array([0x61, 0xe2, 0x82]))).toThrow(/byte 1/) // truncated sequence
    expect(() => checkText(new Uint8Array([0xed, 0xa0, 0x80]))).toThrow(/byte 0/) // surrogate
    expect(() => checkText(new Uint8Array([0xc0, 0xaf]))).toThrow(/byte 0/) // overlong
  })
})

describe('parseFile', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'docent-parsers-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  /** Write the bytes to a real file and read them back, as the importer does. */
  async function viaDisk(name: string, data: Uint8Array | string) {
    const p = path.join(dir, name)
    await writeFile(p, data)
    return parseFile(new Uint8Array(await readFile(p)), name)
  }

  it('parses each supported format from disk', async () => {
    expect((await viaDisk('a.md', '# A\n\nText.\n')).sections[0]!.headings).toEqual(['A'])
    expect((await viaDisk('a.mdx', '<Note>Hi</Note>\n')).sections[0]!.blocks[0]!.text).toBe('Note: Hi')
    expect((await viaDisk('a.txt', 'Plain.\n')).sections[0]!.blocks[0]!.text).toBe('Plain.')
    // reStructuredText and AsciiDoc have parsers of their own now: their titles are headings.
    expect((await viaDisk('a.rst', 'Title\n=====\n\nBody.\n')).sections[0]).toMatchObject({
      headings: ['Title'],
      blocks: [{ kind: 'paragraph', text: 'Body.' }],
    })
    expect((await viaDisk('a.adoc', '= Title\n\n== Part\n\nBody.\n')).sections[0]!.headings).toEqual(['Title', 'Part'])
    expect((await viaDisk('a.csv', 'h1,h2\n1,2\n')).sections[0]!.blocks[0]!.kind).toBe('table')
    expect((await viaDisk('a.html', '<title>T</title><h1>H</h1><p>P</p>')).title).toBe('T')
    expect((await viaDisk('a.pdf', makePdf([[{ size: 11, y: 700, text: 'PDF text' }]]))).sections[0]!.blocks[0]).toEqual({
      kind: 'paragraph',
      text: 'PDF text',
      page: 1,
    })
    expect(
      (await viaDisk('a.docx', makeDocx([{ style: 'Heading1', text: 'Doc' }, { text: 'x' }]))).sections[0]!.headings,
    ).toEqual(['Doc'])
    expect((await viaDisk('a.pptx', makePptx([{ shapes: [{ title: 'Deck' }, { body: ['x'] }] }]))).sections[0]!.headings).toEqual(
      ['Deck'],
    )
    expect((await viaDisk('a.xlsx', makeXlsx([{ name: 'S', rows: [['a']] }]))).sections[0]!.blocks[0]!.kind).toBe('table')
  })

  it('refuses a binary file named .md', async () => {
    const e = await parseError(viaDisk('binary.md', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02, 0x00, 0x00, 0xff])))
    expect(e.message).toMatch(/^binary content in a text file/)
  })

  it('refuses invalid UTF-8 with the byte offset', async () => {
    const e = await parseError(viaDisk('latin1.md', Buffer.from('caf\xe9 cr\xe8me br\xfbl\xe9e\n', 'latin1')))
    expect(e.message).toMatch(/^not valid UTF-8 text \(byte 3\)/)
  })

  it('refuses a non-zip .docx and a broken .pdf', async () => {
    expect((await parseError(viaDisk('x.docx', 'plain text pretending to be a docx'))).message).toBe(
      'file is not a valid DOCX (not a zip archive)',
    )
    expect((await parseError(viaDisk('x.pdf', '%PDF-1.7\nthis is not really a pdf\n'))).message).toMatch(/not a valid PDF/)
  })

  it('refuses unsupported types', async () => {
    expect((await parseError(parseFile(new Uint8Array(3), 'x.gif'))).message).toBe('unsupported file type (.gif)')
    expect((await parseError(parseFile(new Uint8Array(3), 'Makefile'))).message).toBe('unsupported file type (no extension)')
  })

  it('only ever throws ParseError on random bytes', async () => {
    let seed = 42
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
    for (let round = 0; round < 20; round++) {
      const bytes = new Uint8Array(64 + Math.floor(rand() * 4000)).map(() => Math.floor(rand() * 256))
      const printable = bytes.map((b) => 0x20 + (b % 0x5f))
      for (const name of ['r.md', 'r.mdx', 'r.txt', 'r.html', 'r.pdf', 'r.docx', 'r.pptx', 'r.odt', 'r.ods', 'r.xlsx']) {
        for (const b of [bytes, printable]) {
          try {
            await parseFile(b, name)
          } catch (e) {
            expect(e).toBeInstanceOf(ParseError)
          }
        }
      }
    }
    // Corrupted real files
    const pdf = makePdf([[{ size: 11, y: 700, text: 'x' }]])
    const docx = makeDocx([{ text: 'x' }])
    const pptx = makePptx([{ shapes: [{ title: 'T' }, { body: ['x'] }], notes: 'n' }])
    const xlsx = makeXlsx([{ name: 'S', rows: [['a', 1]] }])
    const odt = makeZip(odfParts('text', '<text:h>H</text:h><text:p>x</text:p>'))
    const ods = makeZip(
      odfParts(
        'spreadsheet',
        '<table:table table:name="S"><table:table-row><table:table-cell><text:p>x</text:p></table:table-cell></table:table-row></table:table>',
      ),
    )
    for (let i = 0; i < 30; i++) {
      for (const [orig, name] of [
        [pdf, 'c.pdf'],
        [docx, 'c.docx'],
        [pptx, 'c.pptx'],
        [xlsx, 'c.xlsx'],
        [odt, 'c.odt'],
        [ods, 'c.ods'],
      ] as const) {
        const b = new Uint8Array(orig)
        for (let k = 0; k < 8; k++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256)
        try {
          await parseFile(b, name)
        } catch (e) {
          expect(e).toBeInstanceOf(ParseError)
        }
      }
    }
  })
})
