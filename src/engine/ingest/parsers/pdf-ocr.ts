import type { ParseContext, ParsedPage } from '../types'
import { Recogniser } from './ocr'
import type { PdfLine } from './pdf-layout'
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

export interface OcrPagesResult {
  lines: PdfLine[]
  /** Pages that could not be rendered or recognised, and the last error. */
  failed: number[]
  error: unknown
}

/** The pages to recognise: unreadable ones, and those with no text that draw an image. */
export async function pagesToRecognise(doc: OcrDoc, pages: ParsedPage[], ops: PdfOps): Promise<ParsedPage[]> {
  const out: ParsedPage[] = []
  for (const p of pages) {
    if (p.unreadable) out.push(p)
    else if (p.chars === 0) {
      const page = await doc.getPage(p.page).catch(() => null)
      if (page && (await drawsImage(page, ops).catch(() => false))) out.push(p)
      page?.cleanup()
    }
  }
  return out
}

/** Recognises `todo` (in page order), setting each page's `ocr` and `chars`; progress per page. */
export async function recognisePages(doc: OcrDoc, todo: ParsedPage[], ctx: ParseContext): Promise<OcrPagesResult> {
  const out: OcrPagesResult = { lines: [], failed: [], error: null }
  if (todo.length === 0) return out
  const rec = new Recogniser()
  try {
    ctx.onProgress?.({ stage: 'ocr', done: 0, total: todo.length })
    for (let i = 0; i < todo.length; i++) {
      const p = todo[i]!
      try {
        const page = await doc.getPage(p.page)
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
