import { createRequire } from 'node:module'
import path from 'node:path'
import type { OcrWord } from '../types'
import { ParseError } from '../types'

/**
 * Text recognition with tesseract.js (English), offline: the wasm core is `require`d from
 * tesseract.js-core and the language data is read from @tesseract.js-data/eng in node_modules
 * (langPath is a folder, gzip on, cacheMethod 'none' so nothing is written beside the app and no
 * CDN is ever asked). tesseract.js runs its own worker_threads worker, which also starts from
 * inside Docent's parser worker thread; terminating the parser worker (time limit, cancel) ends it.
 *
 * The model is 4.0.0_best_int. Measured on the scans of evals/parsers/ocr-scans.test.ts, 4.0.0
 * reads every page word for word the same, in about the same time (tesseract.js's core runs the
 * LSTM engine only, and the two files evidently carry the same network; most of 4.0.0's 10.9 MB is
 * data of the legacy engine), while best_int is 2.9 MB to load.
 */

/** The English model folder under @tesseract.js-data/eng. */
export const OCR_MODEL = '4.0.0_best_int'

/** What one image gave. */
export interface OcrResult {
  /**
   * Paragraphs in reading order, each one string (lines joined, end-of-line hyphens mended), with
   * the top and bottom of its box as fractions of the image's height.
   */
  paragraphs: { text: string; top: number; bottom: number }[]
  /** Tesseract's mean word confidence, 0-100 (0 when nothing was found). */
  confidence: number
  /** Every word with its box as fractions (0..1) of the image's width and height. */
  words: OcrWord[]
}

interface TessWord {
  text: string
  confidence: number
  bbox: { x0: number; y0: number; x1: number; y1: number }
}
interface TessLine {
  text: string
  words: TessWord[]
}
interface TessBlock {
  paragraphs: { lines: TessLine[]; bbox: { y0: number; y1: number } }[]
}
interface TessWorker {
  recognize(
    image: Uint8Array | Buffer,
    opts?: object,
    output?: object,
  ): Promise<{ data: { confidence: number; blocks: TessBlock[] | null } }>
  terminate(): Promise<unknown>
}
type CreateWorker = (langs: string, oem: number, opts: object) => Promise<TessWorker>

function modelDir(req: NodeJS.Require, model: string): string {
  return path.join(path.dirname(req.resolve('@tesseract.js-data/eng/package.json')), model)
}

/** Lines of a paragraph as one string: "exam-" + "ple" is "example", other lines join with a space. */
export function joinLines(lines: string[]): string {
  let out = ''
  for (const raw of lines) {
    const line = raw.replace(/\s+/g, ' ').trim()
    if (!line) continue
    if (!out) out = line
    else if (/[a-z]-$/.test(out) && /^[a-z]/.test(line)) out = out.slice(0, -1) + line
    else out += ' ' + line
  }
  return out
}

/** Tesseract could not read an image it was given (a damaged file); the message says so in words. */
export class OcrImageError extends Error {
  override readonly name = 'OcrImageError'
}

const round = (v: number) => Math.round(v * 10000) / 10000

/**
 * One tesseract worker for one parse, started on first use (a PDF with a text layer never starts
 * it). Always `close()` it in a finally.
 */
export class Recogniser {
  private worker: Promise<TessWorker> | null = null

  /** `model`: another folder of @tesseract.js-data/eng, for measuring (evals/parsers/ocr-scans.test.ts). */
  constructor(private readonly model: string = OCR_MODEL) {}

  private start(): Promise<TessWorker> {
    this.worker ??= (async () => {
      const req = createRequire(import.meta.url)
      let createWorker: CreateWorker
      try {
        createWorker = (req('tesseract.js') as { createWorker: CreateWorker }).createWorker
      } catch (e) {
        throw new ParseError(`text recognition failed to load: ${e instanceof Error ? e.message : String(e)}`)
      }
      // OEM 1: LSTM only, the engine the best_int data holds.
      const opts = {
        langPath: modelDir(req, this.model),
        gzip: true,
        cacheMethod: 'none',
        // Without a handler tesseract.js also throws a failed job's error out of its message
        // listener (an uncaught exception); the job's promise rejects with it anyway.
        errorHandler: () => undefined,
      }
      return await createWorker('eng', 1, opts).catch((e: unknown) => {
        throw new ParseError(`text recognition could not start: ${e instanceof Error ? e.message : String(e)}`)
      })
    })()
    return this.worker
  }

  /** Reads an image (PNG, JPEG, BMP or TIFF bytes) of `width` x `height` pixels. */
  async recognise(image: Uint8Array, width: number, height: number): Promise<OcrResult> {
    const worker = await this.start()
    const { data } = await worker
      .recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength), {}, { blocks: true })
      .catch((e: unknown) => {
        // tesseract.js rejects with a bare string ("Error: Error attempting to read image.").
        const msg = String(e instanceof Error ? e.message : e).replace(/^(Error: )+/, '')
        throw new OcrImageError(/read image/i.test(msg) ? 'the image could not be decoded' : msg)
      })
    const paragraphs: OcrResult['paragraphs'] = []
    const words: OcrWord[] = []
    for (const block of data.blocks ?? []) {
      for (const para of block.paragraphs) {
        const text = joinLines(para.lines.map((l) => l.text))
        if (text) paragraphs.push({ text, top: round(para.bbox.y0 / height), bottom: round(para.bbox.y1 / height) })
        for (const line of para.lines) {
          for (const w of line.words) {
            const t = w.text.trim()
            if (!t) continue
            const b = w.bbox
            words.push({
              text: t,
              box: [round(b.x0 / width), round(b.y0 / height), round(b.x1 / width), round(b.y1 / height)],
              confidence: Math.round(w.confidence),
            })
          }
        }
      }
    }
    return { paragraphs, confidence: words.length ? Math.round(data.confidence) : 0, words }
  }

  async close(): Promise<void> {
    const w = this.worker
    this.worker = null
    if (w) await w.then((x) => x.terminate()).catch(() => undefined)
  }
}
