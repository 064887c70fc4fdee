import { createRequire } from 'node:module'
import type { ParsedDocument } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { OcrImageError, Recogniser } from './ocr'
import { MAX_PIXELS } from './pdf-render'

/**
 * Images of text (PNG, JPEG, TIFF) read by text recognition (ocr.ts): one page, one section, its
 * paragraphs as blocks on page 1. PNG and JPEG are checked and measured by @napi-rs/canvas
 * (loadImage), which also refuses a damaged file with a reason; TIFF, which it cannot decode,
 * goes to tesseract as it is (its Leptonica reads TIFF) and is measured from its header. Of a
 * multi-page TIFF only the first page is read (tesseract.js reads no other), and a notice says so.
 * Huge images are refused rather than decoded: MAX_IMAGE_PIXELS at 4 bytes a pixel is ~400 MB.
 * A PNG or JPEG larger than a rendered PDF page may be (pdf-render.ts, MAX_PIXELS) is drawn smaller
 * first, as such a page is: tesseract's time and memory grow with the pixels, not the text.
 */

export const MAX_IMAGE_PIXELS = 100_000_000

type Kind = 'png' | 'jpeg' | 'tiff'

function kindOf(b: Uint8Array): Kind | null {
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'png'
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg'
  if (
    b.length >= 8 &&
    ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 42 && b[3] === 0) ||
      (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 42))
  )
    return 'tiff'
  return null
}

/** Width, height and page count of a TIFF, from its image file directories (IFDs). */
export function tiffInfo(b: Uint8Array): { width: number; height: number; pages: number } {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const le = b[0] === 0x49
  const u16 = (o: number) => v.getUint16(o, le)
  const u32 = (o: number) => v.getUint32(o, le)
  let width = 0
  let height = 0
  let pages = 0
  const seen = new Set<number>()
  for (let ifd = u32(4); ifd !== 0 && pages < 10_000; pages++) {
    if (ifd + 2 > b.length || seen.has(ifd)) throw new ParseError('TIFF is damaged (an image directory points outside the file)')
    seen.add(ifd)
    const n = u16(ifd)
    if (ifd + 2 + n * 12 + 4 > b.length) throw new ParseError('TIFF is damaged (an image directory is cut short)')
    for (let i = 0; i < n && pages === 0; i++) {
      const e = ifd + 2 + i * 12
      const tag = u16(e)
      const type = u16(e + 2)
      const val = type === 3 ? u16(e + 8) : u32(e + 8)
      if (tag === 256) width = val
      if (tag === 257) height = val
    }
    ifd = u32(ifd + 2 + n * 12)
  }
  if (!width || !height) throw new ParseError('TIFF is damaged (its first image has no width or height)')
  return { width, height, pages }
}

interface Canvas {
  getContext(k: '2d'): { drawImage(img: unknown, x: number, y: number, w: number, h: number): void }
  encode(f: 'png'): Promise<Buffer>
}
interface CanvasLib {
  loadImage: (b: Buffer) => Promise<{ width: number; height: number }>
  createCanvas: (w: number, h: number) => Canvas
}

interface Measured {
  width: number
  height: number
  pages: number
  /** The decoded image (PNG, JPEG), to draw smaller when it is too large. */
  decoded?: { width: number; height: number }
}

async function measure(bytes: Uint8Array, kind: Kind): Promise<Measured> {
  if (kind === 'tiff') return tiffInfo(bytes)
  const { loadImage } = createRequire(import.meta.url)('@napi-rs/canvas') as CanvasLib
  try {
    const img = await loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    return { width: img.width, height: img.height, pages: 1, decoded: img }
  } catch (e) {
    throw new ParseError(`${kind.toUpperCase()} image is damaged (${e instanceof Error ? e.message : String(e)})`)
  }
}

/** The image as tesseract reads it: as it is, or drawn at most MAX_PIXELS large. */
export async function forRecognition(
  bytes: Uint8Array,
  m: Measured,
): Promise<{ image: Uint8Array; width: number; height: number }> {
  if (!m.decoded || m.width * m.height <= MAX_PIXELS) return { image: bytes, width: m.width, height: m.height }
  const scale = Math.sqrt(MAX_PIXELS / (m.width * m.height))
  const width = Math.max(1, Math.floor(m.width * scale))
  const height = Math.max(1, Math.floor(m.height * scale))
  const c = (createRequire(import.meta.url)('@napi-rs/canvas') as CanvasLib).createCanvas(width, height)
  c.getContext('2d').drawImage(m.decoded, 0, 0, width, height)
  return { image: new Uint8Array(await c.encode('png')), width, height }
}

export const parseImage = guarded('image', async (bytes, _relativePath, ctx): Promise<ParsedDocument> => {
  const kind = kindOf(bytes)
  if (!kind) throw new ParseError('file is not a PNG, JPEG or TIFF image (its first bytes are not one of theirs)')
  if (ctx.ocr === false) throw new ParseError('file is an image and text recognition is off for this collection')
  const measured = await measure(bytes, kind)
  const { width, height, pages } = measured
  if (width * height > MAX_IMAGE_PIXELS)
    throw new ParseError(`image is too large to read (${width} x ${height} pixels; at most ${MAX_IMAGE_PIXELS / 1e6} million)`)
  const rec = new Recogniser()
  try {
    ctx.onProgress?.({ stage: 'ocr', done: 0, total: 1 })
    const input = await forRecognition(bytes, measured)
    const r = await rec.recognise(input.image, input.width, input.height).catch((e: unknown) => {
      // Its header was whole (measured above) but its pixels are not.
      if (e instanceof OcrImageError) throw new ParseError(`${kind.toUpperCase()} image is damaged (${e.message})`)
      throw e
    })
    ctx.onProgress?.({ stage: 'ocr', done: 1, total: 1 })
    const b = new DocBuilder()
    for (const p of r.paragraphs) b.add('paragraph', p.text, 1)
    const sections = b.finish()
    if (sections.length === 0) throw new ParseError('image has no text that text recognition could read')
    const chars = r.paragraphs.reduce((n, p) => n + p.text.length, 0)
    const doc: ParsedDocument = {
      title: null,
      meta: { width, height },
      sections,
      pageCount: 1,
      pages: [{ page: 1, chars, unreadable: false, ocr: { confidence: r.confidence, words: r.words } }],
    }
    if (pages > 1) doc.notices = [`only the first of its ${pages} pages was read (text recognition reads one page of a TIFF)`]
    return doc
  } finally {
    await rec.close()
  }
})
