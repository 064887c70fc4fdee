/**
 * A PDF page as an image, for text recognition: pdf.js draws it on an @napi-rs/canvas canvas (the
 * canvas pdf.js itself uses in Node) at about 300 dpi, the resolution tesseract is trained for,
 * but never more than MAX_SIDE pixels a side or MAX_PIXELS in all, so a poster-sized page cannot
 * take gigabytes (it is drawn smaller instead).
 */

export const RENDER_DPI = 300
export const MAX_SIDE = 4000
export const MAX_PIXELS = 16_000_000

interface CanvasLike {
  encode(format: 'png'): Promise<Buffer>
}

/**
 * pdf.js's own canvas factory (PDFDocumentProxy.canvasFactory). pdf.js must draw on a canvas of the
 * @napi-rs/canvas copy it loads itself: a canvas of another copy (the app's, which decodes image
 * files) crashes the process when pdf.js hands it its own Path2D and image objects.
 */
export interface CanvasFactoryLike {
  create(width: number, height: number): { canvas: unknown; context: unknown }
  destroy(c: { canvas: unknown; context: unknown }): void
}

/** What renderPage needs of a pdf.js page. */
export interface RenderablePage {
  view: number[]
  getViewport(p: { scale: number }): { width: number; height: number }
  render(p: { canvasContext: unknown; viewport: unknown; background?: string }): { promise: Promise<void> }
}

/** The scale (pixels per PDF point) a page of `w` x `h` points is drawn at. */
export function renderScale(w: number, h: number): number {
  let scale = RENDER_DPI / 72
  if (w <= 0 || h <= 0) return scale
  scale = Math.min(scale, MAX_SIDE / w, MAX_SIDE / h, Math.sqrt(MAX_PIXELS / (w * h)))
  return scale
}

export interface RenderedPage {
  png: Uint8Array
  width: number
  height: number
}

/** Draws one page on a white background and encodes it as PNG. */
export async function renderPage(page: RenderablePage, factory: CanvasFactoryLike): Promise<RenderedPage> {
  const base = page.getViewport({ scale: 1 })
  const viewport = page.getViewport({ scale: renderScale(base.width, base.height) })
  const width = Math.max(1, Math.floor(viewport.width))
  const height = Math.max(1, Math.floor(viewport.height))
  const c = factory.create(width, height)
  try {
    await page.render({ canvasContext: c.context, viewport, background: 'white' }).promise
    const png = await (c.canvas as CanvasLike).encode('png')
    return { png: new Uint8Array(png.buffer, png.byteOffset, png.byteLength), width, height }
  } finally {
    // Frees the pixels now (a 300 dpi page is ~35 MB) rather than at the next garbage collection.
    factory.destroy(c)
  }
}
