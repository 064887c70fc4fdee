import { describe, expect, it } from 'vitest'
import { ParseError } from '../types'
import { approximateTokenCounter } from '../../core/model-ports'
import { chunkDocument } from '../chunker'
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

  it('takes the body size from prose, not from code blocks that carry more characters', async () => {
    // A configuration reference: 11pt prose, 9pt Courier code with three times its characters.
    const code = (y: number, n: number): PdfText[] =>
      Array.from({ length: n }, (_, i) => ({
        size: 9,
        y: y - i * 11,
        mono: true,
        text: `#option_${i}: value ${i}   # what option ${i} does, in a comment`,
      }))
    const d = await parsePdf(
      makePdf([
        [
          { size: 16, y: 740, text: '[endstop_phase]' },
          { size: 11, y: 715, text: 'Stepper phase adjusted endstops. To use this feature, define a config' },
          { size: 11, y: 700, text: 'section with an endstop_phase prefix followed by the name of the stepper.' },
          { size: 11, y: 670, text: 'See the endstop phases guide for more information.' },
          ...code(640, 20),
          { size: 16, y: 400, text: '[extruder]' },
          { size: 11, y: 375, text: 'The extruder section describes a heater and its temperature sensor.' },
          ...code(350, 20),
        ],
      ]),
      'config.pdf',
    )
    expect(d.sections.map((s) => s.headings)).toEqual([['[endstop_phase]'], ['[extruder]']])
    const first = d.sections[0]!.blocks.map((b) => b.text)
    expect(first[0]).toBe(
      'Stepper phase adjusted endstops. To use this feature, define a config section with an endstop_phase prefix followed by the name of the stepper.',
    )
    expect(first[1]).toBe('See the endstop phases guide for more information.')
    expect(first[2]).toBe(
      Array.from({ length: 20 }, (_, i) => `#option_${i}: value ${i} # what option ${i} does, in a comment`).join(' '),
    )
    expect(d.sections[1]!.blocks[0]!.text).toBe('The extruder section describes a heater and its temperature sensor.')
  })

  it('keeps larger lines as text when they are not a heading: a long run, a sentence, a line packed into a paragraph', async () => {
    const body = (y: number, text: string): PdfText => ({ size: 11, y, text })
    const d = await parsePdf(
      makePdf([
        [
          { size: 20, y: 740, text: 'Safety' },
          // Four 14pt lines at paragraph spacing: a lead paragraph, not a four-line heading.
          { size: 14, y: 710, text: 'Printers heat plastic to over two hundred degrees' },
          { size: 14, y: 693, text: 'and move quickly; keep hands away from the nozzle' },
          { size: 14, y: 676, text: 'and the bed while the printer is on, and never leave' },
          { size: 14, y: 659, text: 'a print running in an empty room' },
          body(630, 'The rest of this chapter lists the safety features of the firmware and'),
          body(616, 'the conditions under which each of them stops a print.'),
          // One 14pt line that reads as a sentence.
          { size: 14, y: 585, text: 'Read the safety notes before you begin.' },
          body(560, 'Thermal runaway protection stops a heater whose temperature does not'),
          // A 14pt line at the spacing of the line above, continuing its sentence.
          { size: 14, y: 547, text: 'rise as expected' },
          body(533, 'after it is switched on, and reports the heater by name.'),
          { size: 20, y: 490, text: 'Setup' },
          body(460, 'Setup starts with the configuration file.'),
          // The same words filling the page so that 11pt is the body size.
          ...Array.from({ length: 12 }, (_, i) =>
            body(440 - i * 14, 'Body text at the body size carries most of the characters on this page.'),
          ),
        ],
      ]),
      'safety.pdf',
    )
    expect(d.sections.map((s) => s.headings)).toEqual([['Safety'], ['Setup']])
    const texts = d.sections[0]!.blocks.map((b) => b.text)
    expect(texts).toEqual([
      'Printers heat plastic to over two hundred degrees and move quickly; keep hands away from the nozzle and the bed while the printer is on, and never leave a print running in an empty room',
      'The rest of this chapter lists the safety features of the firmware and the conditions under which each of them stops a print.',
      'Read the safety notes before you begin.',
      'Thermal runaway protection stops a heater whose temperature does not',
      'rise as expected',
      'after it is switched on, and reports the heater by name.',
    ])
  })

  it('joins a line that ends in a hyphen to the next without a space, dropping only a hyphenation hyphen', async () => {
    const d = await parsePdf(
      makePdf([
        [
          { size: 11, y: 700, text: 'Callback collecting all the info headers (HTTP 100-' },
          { size: 11, y: 686, text: '199) received. It appends the expect: 100-' },
          { size: 11, y: 672, text: 'continue header. Hyphen-' },
          { size: 11, y: 658, text: 'ation is joined.' },
        ],
      ]),
      'h.pdf',
    )
    expect(d.sections[0]!.blocks).toEqual([
      {
        kind: 'paragraph',
        text: 'Callback collecting all the info headers (HTTP 100-199) received. It appends the expect: 100-continue header. Hyphenation is joined.',
        page: 1,
      },
    ])
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
    // pikepdf's newline-buffer-test.pdf has no page: it was said to have 'all 0 pages' in unreadable fonts.
    expect((await parseError(parsePdf(makePdf([]), 'no-pages.pdf'))).message).toBe('PDF has no pages')
  })

  // Issue 26: with no title in the metadata the first heading became the title, and every later
  // chapter's breadcrumb read "Chapter 1 > Chapter 4999".
  it('equal-size headings are siblings: the first of them is not the title of the others', async () => {
    const pages: PdfText[][] = Array.from({ length: 30 }, (_, i) => [
      { size: 20, y: 720, text: `Chapter ${i + 1}` },
      { size: 11, y: 690, text: `The chapter number ${i + 1} tells about topic ${i + 1} in some detail.` },
      { size: 11, y: 676, text: `A second line of chapter ${i + 1}, still body text of the page.` },
    ])
    const d = await parsePdf(makePdf(pages), 'chapters.pdf')
    expect(d.sections.map((s) => s.headings)).toEqual(pages.map((_, i) => [`Chapter ${i + 1}`]))
    expect(d.title).toBeNull()
    const crumbs = chunkDocument(d, approximateTokenCounter).map((c) => c.breadcrumb)
    expect(crumbs).toEqual(pages.map((_, i) => [`Chapter ${i + 1}`]))
    // A title from the metadata still heads them all, as the document's name.
    const titled = await parsePdf(makePdf(pages, { title: 'Field guide' }), 'chapters.pdf')
    expect(chunkDocument(titled, approximateTokenCounter).at(-1)!.breadcrumb).toEqual(['Field guide', 'Chapter 30'])
  })

  // Issue 26: fonts without a usable ToUnicode map filled chunks and search results with C0 controls.
  it('keeps a page of control characters out, flags it and says so; strips stray ones from readable pages', async () => {
    const garbled = (y: number): PdfText => ({ size: 11, y, text: 'garbled words of a broken font', broken: 'controls' })
    const d = await parsePdf(
      makePdf([
        [{ size: 11, y: 700, text: 'A readable first page.' }],
        [garbled(700), garbled(686), garbled(672)],
        [
          { size: 11, y: 700, text: 'A readable third page with an icon' },
          { size: 11, y: 686, text: 'x', broken: 'controls' },
          { size: 11, y: 672, text: 'and boxes', broken: 'nul' },
        ],
        [garbled(700)],
      ]),
      'fonts.pdf',
    )
    expect(d.pages).toEqual([
      { page: 1, chars: 22, unreadable: false },
      { page: 2, chars: 0, unreadable: true },
      { page: 3, chars: 34, unreadable: false },
      { page: 4, chars: 0, unreadable: true },
    ])
    expect(d.notices).toEqual([
      // Text recognition read the rendered pages too: the fixture's broken glyphs draw nothing.
      'pages 2 and 4 have no readable text (their fonts have no usable character map, nor did text recognition find any) and were left out of the index',
    ])
    const blocks = d.sections.flatMap((s) => s.blocks)
    expect(blocks.map((b) => b.page)).toEqual([1, 3])
    // The icon and the two words in the NUL-mapped font are gone; the rest of the page stays.
    expect(blocks[1]!.text).toBe('A readable third page with an icon')
    // eslint-disable-next-line no-control-regex
    for (const b of blocks) expect(b.text).not.toMatch(/[\u0000-\u001f]/)
  })

  it('refuses a PDF whose every page is unreadable, saying why', async () => {
    const e = await parseError(parsePdf(makePdf([[{ size: 11, y: 700, text: 'nothing to read', broken: 'controls' }]]), 'x.pdf'))
    expect(e.message).toMatch(/no readable text: its page is set in fonts without a usable character map/)
  })

  it('reports its progress page by page', async () => {
    const calls: [number, number][] = []
    const pages: PdfText[][] = Array.from({ length: 5 }, (_, i) => [{ size: 11, y: 700, text: `Page ${i + 1}.` }])
    await parsePdf(makePdf(pages), 'p.pdf', {
      onProgress: (p) => {
        expect(p.stage).toBe('pages')
        calls.push([p.done, p.total])
      },
    })
    expect(calls).toEqual([
      [1, 5],
      [2, 5],
      [3, 5],
      [4, 5],
      [5, 5],
    ])
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
