import { describe, expect, it } from 'vitest'
import type { FileProgress } from '../types'
import { ParseError } from '../types'
import { makeScannedPdf, scanImage } from './__fixtures__/scan'
import { parsePdf } from './pdf'
import { MAX_PIXELS, MAX_SIDE, renderScale } from './pdf-render'

// Real pdf.js rendering on @napi-rs/canvas and real tesseract: a PDF of page images, no text layer.
const PAGE_1 = ['Chapter One', 'Scanned manuals are read by text recognition.']
const PAGE_2 = ['The second page mentions the word hovercraft', 'and a few more ordinary words.']

async function scannedPdf(): Promise<Uint8Array> {
  return makeScannedPdf([await scanImage(PAGE_1), await scanImage(PAGE_2)])
}

describe('scanned PDF pages', () => {
  it('imports a fully scanned PDF: recognised text on its pages, confidence and word boxes, progress per page', async () => {
    const progress: FileProgress[] = []
    const d = await parsePdf(await scannedPdf(), 'scan.pdf', { onProgress: (p) => progress.push(p) })
    const blocks = d.sections.flatMap((s) => s.blocks)
    expect(
      blocks
        .filter((b) => b.page === 1)
        .map((b) => b.text)
        .join(' '),
    ).toBe(PAGE_1.join(' '))
    expect(
      blocks
        .filter((b) => b.page === 2)
        .map((b) => b.text)
        .join(' '),
    ).toBe(PAGE_2.join(' '))
    expect(d.pageCount).toBe(2)
    for (const p of d.pages!) {
      expect(p.ocr!.confidence).toBeGreaterThan(80)
      expect(p.chars).toBeGreaterThan(30)
    }
    const hover = d.pages![1]!.ocr!.words.find((w) => w.text === 'hovercraft')!
    expect(hover.box[0]).toBeGreaterThan(0.3)
    expect(hover.box[3]).toBeLessThan(0.3)
    expect(d.notices).toBeUndefined()
    expect(progress.filter((p) => p.stage === 'ocr')).toEqual([
      { stage: 'ocr', done: 0, total: 2 },
      { stage: 'ocr', done: 1, total: 2 },
      { stage: 'ocr', done: 2, total: 2 },
    ])
  }, 60_000)

  it('recognises at most ocrPageCap pages of one file, names the rest in a notice, and does not hold the parse on them', async () => {
    const progress: FileProgress[] = []
    const pdf = makeScannedPdf([
      '',
      await scanImage(['The first scanned page about herons.']),
      await scanImage(['The second scanned page about egrets.']),
      await scanImage(['The third scanned page about bitterns.']),
      await scanImage(['The fourth scanned page about storks.']),
    ])
    const d = await parsePdf(pdf, 'long-scan.pdf', { onProgress: (p) => progress.push(p), ocrPageCap: 2 })
    // The blank first page costs no recognition and does not count.
    expect(d.sections.flatMap((s) => s.blocks).map((b) => b.page)).toEqual([2, 3])
    expect(d.pages!.filter((p) => p.ocr).map((p) => p.page)).toEqual([2, 3])
    expect(d.notices).toEqual([
      'pages 4-5 were not read by text recognition: at most 2 pages of one file are recognised, so that one long scan does not hold up the rest of the folder (split the file to have them read)',
    ])
    expect(progress.filter((p) => p.stage === 'ocr').at(-1)).toEqual({ stage: 'ocr', done: 5, total: 5 })
  }, 120_000)

  it('reads a mixed PDF: typed pages from their text layer, the scanned one recognised, a blank one skipped, in page order', async () => {
    const progress: FileProgress[] = []
    const pdf = makeScannedPdf([
      'A typed first page about otters.',
      await scanImage(['A scanned second page about beavers.']),
      'A typed third page about voles.',
      '',
    ])
    const d = await parsePdf(pdf, 'mixed.pdf', { onProgress: (p) => progress.push(p) })
    expect(d.sections.flatMap((s) => s.blocks).map((b) => [b.page, b.text])).toEqual([
      [1, 'A typed first page about otters.'],
      [2, 'A scanned second page about beavers.'],
      [3, 'A typed third page about voles.'],
    ])
    expect(d.pages!.map((p) => !!p.ocr)).toEqual([false, true, false, false])
    expect(d.notices).toBeUndefined()
    // Both text-less pages are announced (before either is looked at); the blank one is not read.
    expect(progress.filter((p) => p.stage === 'ocr').map((p) => [p.done, p.total])).toEqual([
      [0, 2],
      [1, 2],
      [2, 2],
    ])
  }, 60_000)

  it('leaves scanned pages of a mixed PDF out when text recognition is off, and says which', async () => {
    const pdf = makeScannedPdf(['A typed first page about otters.', await scanImage(['A scanned second page.'])])
    const d = await parsePdf(pdf, 'mixed.pdf', { ocr: false })
    expect(d.sections.flatMap((s) => s.blocks).map((b) => b.page)).toEqual([1])
    expect(d.notices).toEqual([
      'page 2 is a scanned image and text recognition is off for this collection: left out of the index',
    ])
  })

  it('refuses a scanned PDF when text recognition is off, saying so', async () => {
    const e = await parsePdf(await scannedPdf(), 'scan.pdf', { ocr: false }).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(ParseError)
    expect((e as Error).message).toBe(
      'PDF has no text to read: its pages are scanned images and text recognition is off for this collection',
    )
  })

  it('renders at 300 dpi, smaller for a page too large', () => {
    expect(renderScale(612, 792)).toBeCloseTo(300 / 72)
    const s = renderScale(2000, 3000)
    expect(3000 * s).toBeLessThanOrEqual(MAX_SIDE)
    expect(2000 * s * 3000 * s).toBeLessThanOrEqual(MAX_PIXELS + 1)
  })
})
