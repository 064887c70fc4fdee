import type { ParseContext, ParsedPage } from '../types'
import { Recogniser } from './ocr'
import type { PdfLine } from './pdf-layout'
import { removedImages } from './pdf-warnings'
import { renderPage, type CanvasFactoryLike, type RenderablePage } from './pdf-render'

/**
 * Text recognition of the PDF pages whose text layer gave nothing: pages with no text that draw
 * an image (a scan), and pages whose text is unreadable (textcheck.ts). Each is rendered
 * (pdf-render.ts) and read by tesseract (ocr.ts); its paragraphs join the document's lines with
 * that page number, so headers repeated on every scanned page are dropped like printed ones and
 * the paragraphs are kept apart. A blank page (no image, no text) is not rendered at all.
 */

interface OcrDoc {
  getPage(n: number): Promise<RenderablePage & { getOperatorList(): Promise<{ fnArray: number[] }>; cleanup(): void }>
  canvasFactory: unknown
}

/** pdf.js's operator codes (its OPS), of which those named paint...Image... draw an image. */
export type PdfOps = Record<string, number>

async function drawsImage(page: { getOperatorList(): Promise<{ fnArray: number[] }> }, ops: PdfOps): Promise<boolean> {
  const wanted = new Set(
    Object.entries(ops)
      .filter(([k]) => /^paint\w*Image/.test(k))
      .map(([, v]) => v),
  )
  const list = await page.getOperatorList()
  return list.fnArray.some((f) => wanted.has(f))
}

/**
 * The most pages of one file read by text recognition in one parse: 3-6 s a page on two cores
 * (docs/parsers.md), so about ten minutes. A scan of thousands of pages would otherwise hold the
 * import, and every file after it, for hours; the pages past it are left out and named.
 */
export const OCR_PAGE_CAP = 100

export interface OcrPagesResult {
  lines: PdfLine[]
  /** Pages with no text whose image pdf.js left out as too large (pdf.ts MAX_IMAGE_PIXELS). */
  tooLarge: number[]
  /** Pages not examined because OCR_PAGE_CAP pages had been recognised. */
  capped: number[]
  /** Pages with no text that draw an image (scans), recognised or not. */
  scanned: number[]
  /** Pages that could not be rendered or recognised, and the last error. */
  failed: number[]
  error: unknown
}

/**
 * The pages that may need recognising: unreadable ones, and those with no text (scanned, or
 * blank: recognisePages tells them apart). Nothing is asked of pdf.js here, so the pool hears how
 * many there are (and extends the file's time limit) before any of them is looked at: telling a
 * scan from a blank page means building its operator list, ~0.1 s a page with its image decoded.
 */
export function pagesToRecognise(pages: ParsedPage[]): ParsedPage[] {
  return pages.filter((p) => p.unreadable || p.chars === 0)
}

/** Pages checked for an image when recognition is off, so a 2,000-page scan is not decoded just to say so. */
export const OFF_CHECK_PAGES = 100

/** Of `pages` (no text, with recognition off), the first OFF_CHECK_PAGES that draw an image. */
export async function scannedPages(doc: OcrDoc, pages: ParsedPage[], ops: PdfOps): Promise<number[]> {
  const out: number[] = []
  for (const p of pages.filter((x) => !x.unreadable).slice(0, OFF_CHECK_PAGES)) {
    const page = await doc.getPage(p.page).catch(() => null)
    if (page && (await drawsImage(page, ops).catch(() => false))) out.push(p.page)
    page?.cleanup()
  }
  return out
}

/** Recognises `todo` (in page order), setting each page's `ocr` and `chars`; progress per page. */
export async function recognisePages(doc: OcrDoc, todo: ParsedPage[], ctx: ParseContext, ops: PdfOps): Promise<OcrPagesResult> {
  const out: OcrPagesResult = { lines: [], tooLarge: [], capped: [], scanned: [], failed: [], error: null }
  if (todo.length === 0) return out
  const cap = ctx.ocrPageCap ?? OCR_PAGE_CAP
  let rendered = 0
  const rec = new Recogniser()
  try {
    ctx.onProgress?.({ stage: 'ocr', done: 0, total: todo.length })
    for (let i = 0; i < todo.length; i++) {
      const p = todo[i]!
      if (rendered >= cap) {
        out.capped = todo.slice(i).map((x) => x.page)
        ctx.onProgress?.({ stage: 'ocr', done: todo.length, total: todo.length })
        break
      }
      try {
        const page = await doc.getPage(p.page)
        // A page with no text and no image is blank: nothing to render or read. One whose image
        // pdf.js left out as too large is named instead.
        const removedBefore = removedImages()
        if (!p.unreadable && !(await drawsImage(page, ops))) {
          if (removedImages() > removedBefore) out.tooLarge.push(p.page)
          page.cleanup()
          ctx.onProgress?.({ stage: 'ocr', done: i + 1, total: todo.length })
          continue
        }
        if (!p.unreadable) out.scanned.push(p.page)
        rendered++
        const img = await renderPage(page, doc.canvasFactory as CanvasFactoryLike)
        page.cleanup()
        const r = await rec.recognise(img.png, img.width, img.height)
        r.paragraphs.forEach((para, k) => {
          // Size 0: never a heading, and far apart (y) so every paragraph stays one. Its middle
          // places it: only a paragraph wholly near the top or bottom can be a running header.
          const rel = 1 - (para.top + para.bottom) / 2
          out.lines.push({ page: p.page, y: -1000 * (k + 1), size: 0, text: para.text, rel, mono: false })
        })
        // A page it found nothing on stays as it was: blank, or left out (pdf.ts says which).
        if (r.paragraphs.length > 0) {
          p.chars = r.paragraphs.reduce((n, x) => n + x.text.length, 0)
          p.ocr = { confidence: r.confidence, words: r.words }
        }
      } catch (e) {
        out.failed.push(p.page)
        out.error = e
      }
      ctx.onProgress?.({ stage: 'ocr', done: i + 1, total: todo.length })
    }
  } finally {
    await rec.close()
  }
  return out
}
