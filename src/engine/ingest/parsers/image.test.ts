import { loadImage } from '@napi-rs/canvas'
import { describe, expect, it } from 'vitest'
import { ParseError } from '../types'
import { makeTiff, scanImage, scanJpeg } from './__fixtures__/scan'
import { parseFile } from './index'
import { forRecognition, tiffInfo } from './image'
import { MAX_PIXELS } from './pdf-render'

const LINES = ['Invoice number 4711 for the walrus', 'delivered on the third of May.']
const TEXT = LINES.join(' ')

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.catch((x: unknown) => x)
  expect(e).toBeInstanceOf(ParseError)
  return (e as Error).message
}

describe('image files (text recognition)', () => {
  it('reads a PNG: one section, page 1, confidence and word boxes', async () => {
    const img = await scanImage(LINES)
    const d = await parseFile(img.png, 'scans/invoice.png')
    expect(d.sections).toHaveLength(1)
    expect(d.sections[0]!.blocks.map((b) => b.text).join(' ')).toBe(TEXT)
    expect(d.sections[0]!.blocks.every((b) => b.page === 1)).toBe(true)
    expect(d.pageCount).toBe(1)
    expect(d.pages![0]!.ocr!.confidence).toBeGreaterThan(80)
    expect(d.pages![0]!.ocr!.words.map((w) => w.text)).toContain('walrus')
    expect(d.meta).toEqual({ width: img.width, height: img.height })
  }, 60_000)

  it('draws an image larger than a rendered page smaller before reading it; its boxes are still fractions of it', async () => {
    // 5000 x 3400 = 17 million pixels, over MAX_PIXELS (16 million).
    const img = await scanImage(['Oversized poster about the capybara'], 5000, 3400, 120)
    const small = await forRecognition(img.png, {
      width: 5000,
      height: 3400,
      pages: 1,
      decoded: await loadImage(Buffer.from(img.png)),
    })
    expect(small.width * small.height).toBeLessThanOrEqual(MAX_PIXELS)
    expect(small.width / small.height).toBeCloseTo(5000 / 3400, 2)
    const d = await parseFile(img.png, 'poster.png')
    expect(d.sections[0]!.blocks.map((b) => b.text).join(' ')).toBe('Oversized poster about the capybara')
    expect(d.meta).toEqual({ width: 5000, height: 3400 })
    const word = d.pages![0]!.ocr!.words.find((w) => w.text === 'Oversized')!
    // Drawn at x = 60 px and baseline y = 80 px of the 5000 x 3400 original.
    expect(word.box[0]).toBeCloseTo(60 / 5000, 2)
    expect(word.box[3]).toBeCloseTo(80 / 3400, 1)
  }, 60_000)

  it('reads a JPEG', async () => {
    const d = await parseFile(await scanJpeg(LINES), 'invoice.JPG')
    expect(d.sections[0]!.blocks.map((b) => b.text).join(' ')).toBe(TEXT)
  }, 60_000)

  it('reads the first page of a multi-page TIFF and says the rest were not read', async () => {
    const a = await scanImage(LINES)
    const b = await scanImage(['A second page that is not read.'])
    const tiff = makeTiff([a, b])
    expect(tiffInfo(tiff)).toEqual({ width: a.width, height: a.height, pages: 2 })
    const d = await parseFile(tiff, 'fax.tif')
    expect(d.sections[0]!.blocks.map((x) => x.text).join(' ')).toBe(TEXT)
    expect(d.notices).toEqual(['only the first of its 2 pages was read (text recognition reads one page of a TIFF)'])
    const words = d.pages![0]!.ocr!.words
    for (const w of words) expect(w.box[2]).toBeLessThanOrEqual(1)
  }, 60_000)

  it('refuses what is not an image, a damaged one, a blank one, and any when text recognition is off', async () => {
    expect(await refusal(parseFile(new TextEncoder().encode('not an image'), 'x.png'))).toMatch(/not a PNG, JPEG or TIFF/)
    const png = (await scanImage(LINES)).png
    expect(await refusal(parseFile(png.subarray(0, 200), 'cut.png'))).toMatch(/^PNG image is damaged/)
    expect(await refusal(parseFile(new Uint8Array([0x49, 0x49, 42, 0, 200, 0, 0, 0]), 'bad.tiff'))).toMatch(/^TIFF is damaged/)
    expect(await refusal(parseFile((await scanImage([], 300, 200)).png, 'blank.png'))).toBe(
      'image has no text that text recognition could read',
    )
    expect(await refusal(parseFile(png, 'x.png', { ocr: false }))).toBe(
      'file is an image and text recognition is off for this collection',
    )
  }, 60_000)
})
