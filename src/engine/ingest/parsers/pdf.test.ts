import { describe, expect, it } from 'vitest'
import { ParseError } from '../types'
import { makePdf, type PdfText } from './__fixtures__/generate'
import { parsePdf } from './pdf'

const footer = (n: number): PdfText => ({ size: 9, y: 30, text: `Docent Manual - page ${n}` })

/** Three pages, Helvetica at two sizes (20pt headings, 11pt body) plus a running footer. */
const MANUAL = makePdf(
  [
    [
      { size: 20, y: 720, text: 'Installation' },
      { size: 11, y: 690, text: 'Docent runs on your computer and keeps every' },
      { size: 11, y: 676, text: 'document offline. Install it from the release page.' },
      { size: 11, y: 640, text: 'A second paragraph on the first page.' },
      footer(1),
    ],
    [
      { size: 20, y: 720, text: 'Configuration' },
      { size: 11, y: 690, text: 'Settings live in a single file. Hyphen-' },
      { size: 11, y: 676, text: 'ation is joined across lines.' },
      footer(2),
    ],
    [
      { size: 11, y: 720, text: 'Continued text on page three belongs to Configuration.' },
      { size: 20, y: 650, text: 'Troubleshooting' },
      { size: 11, y: 620, text: 'If the index is stale, rebuild it (see "Reindex").' },
      footer(3),
    ],
  ],
  { title: 'Docent Manual' },
)

async function parseError(p: Promise<unknown>): Promise<ParseError> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError)
    return e as ParseError
  }
  throw new Error('expected a ParseError')
}

describe('pdf', () => {
  it('reads text per page, detects headings by font size and keeps page numbers on blocks', async () => {
    const d = await parsePdf(MANUAL, 'manual.pdf')
    expect(d.title).toBe('Docent Manual')
    expect(d.pageCount).toBe(3)
    expect(d.meta).toMatchObject({ title: 'Docent Manual', producer: 'Docent test generator' })
    expect(d.sections).toEqual([
      {
        headings: ['Installation'],
        level: 1,
        blocks: [
          {
            kind: 'paragraph',
            text: 'Docent runs on your computer and keeps every document offline. Install it from the release page.',
            page: 1,
          },
          { kind: 'paragraph', text: 'A second paragraph on the first page.', page: 1 },
        ],
      },
      {
        headings: ['Configuration'],
        level: 1,
        blocks: [
          { kind: 'paragraph', text: 'Settings live in a single file. Hyphenation is joined across lines.', page: 2 },
          { kind: 'paragraph', text: 'Continued text on page three belongs to Configuration.', page: 3 },
        ],
      },
      {
        headings: ['Troubleshooting'],
        level: 1,
        blocks: [{ kind: 'paragraph', text: 'If the index is stale, rebuild it (see "Reindex").', page: 3 }],
      },
    ])
  })

  it('uses one section with paged blocks when no heading stands out, and the first heading as title fallback', async () => {
    const flat = await parsePdf(
      makePdf([[{ size: 11, y: 700, text: 'Only body text here.' }], [{ size: 11, y: 700, text: 'And here.' }]]),
      'flat.pdf',
    )
    expect(flat.title).toBeNull()
    expect(flat.sections).toEqual([
      {
        headings: [],
        level: 0,
        blocks: [
          { kind: 'paragraph', text: 'Only body text here.', page: 1 },
          { kind: 'paragraph', text: 'And here.', page: 2 },
        ],
      },
    ])
    const titled = await parsePdf(
      makePdf([
        [
          { size: 18, y: 700, text: 'Big Heading' },
          { size: 10, y: 670, text: 'Body words that dominate the page text.' },
        ],
      ]),
      'h.pdf',
    )
    expect(titled.title).toBe('Big Heading')
  })

  it('refuses broken, encrypted and text-less PDFs with a reason', async () => {
    expect(
      (await parseError(parsePdf(new TextEncoder().encode('%PDF-1.7\nthis is not really a pdf\n'), 'b.pdf'))).message,
    ).toMatch(/not a valid PDF/)
    expect((await parseError(parsePdf(new TextEncoder().encode('hello'), 'b.pdf'))).message).toMatch(/not a valid PDF/)
    const truncated = MANUAL.subarray(0, Math.floor(MANUAL.length / 2))
    await parseError(parsePdf(truncated, 't.pdf'))
    expect(
      (await parseError(parsePdf(makePdf([[{ size: 11, y: 700, text: 'secret' }]], { encrypted: true }), 'e.pdf'))).message,
    ).toMatch(/PDF is encrypted/)
    expect((await parseError(parsePdf(makePdf([[]]), 'empty.pdf'))).message).toMatch(/no text/)
  })

  it('does not touch the caller’s buffer', async () => {
    const copy = new Uint8Array(MANUAL)
    await parsePdf(copy, 'manual.pdf')
    expect(copy.byteLength).toBe(MANUAL.byteLength)
    expect(Buffer.compare(Buffer.from(copy), Buffer.from(MANUAL))).toBe(0)
  })

  it('parses a 2,000-page PDF with correct page numbers', async () => {
    const pages: PdfText[][] = []
    for (let p = 1; p <= 2000; p++) {
      pages.push([
        { size: 18, y: 720, text: `Chapter ${p}` },
        { size: 11, y: 690, text: `This is the body of page ${p}, with enough words to be the body size.` },
        { size: 11, y: 676, text: `A second line on page ${p} continues the paragraph.` },
      ])
    }
    const d = await parsePdf(makePdf(pages), 'big.pdf')
    expect(d.pageCount).toBe(2000)
    expect(d.sections).toHaveLength(2000)
    for (const [i, s] of d.sections.entries()) {
      const p = i + 1
      expect(s.headings).toEqual([`Chapter ${p}`])
      expect(s.blocks).toEqual([
        {
          kind: 'paragraph',
          text: `This is the body of page ${p}, with enough words to be the body size. A second line on page ${p} continues the paragraph.`,
          page: p,
        },
      ])
    }
  })
})
