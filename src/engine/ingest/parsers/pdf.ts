import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { ParseContext, ParsedDocument, ParsedPage, ParserFn } from '../types'
import { ParseError } from '../types'
import { joinWords } from '../../../shared/words'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { buildSections, dropRunningHeaders, type PdfLine } from './pdf-layout'
import { OCR_PAGE_CAP, pagesToRecognise, recognisePages, scannedPages } from './pdf-ocr'
import { countingPdfWarnings } from './pdf-warnings'
import { isUnreadableText, stripControls } from './textcheck'

/**
 * PDF text with pdfjs-dist (legacy build, which runs in Node). Page by page: each page's text is
 * rebuilt into lines from the positions of its text items (noting which lines are set in a
 * monospace font), the page is cleaned up, and only the lines are kept. `pdf-layout.ts` then drops
 * repeated page headers/footers, tells headings from body text (levels by size) and joins the
 * remaining lines into paragraphs that carry their page number.
 *
 * A page whose text layer is mostly control or private-use characters (a font without a usable
 * ToUnicode map) is unreadable, and a page with no text that draws an image is a scan: both are
 * read by text recognition (pdf-ocr.ts) unless the collection turned it off (ParseContext.ocr),
 * when they are left out, flagged in `pages` and named in a notice. Stray control characters on
 * other pages are removed.
 *
 * Not handled: reading order of multi-column layouts (content order is used), tables (read as
 * lines of text).
 */

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs')

let pdfjsPromise: Promise<PdfJs> | null = null

function loadPdfJs(): Promise<PdfJs> {
  pdfjsPromise ??= (async () => {
    const lib = await import('pdfjs-dist/legacy/build/pdf.mjs')
    // Loading the worker module in this thread sets globalThis.pdfjsWorker, which pdf.js then uses
    // as its "fake worker": no worker file to locate at run time, no extra thread.
    await import('pdfjs-dist/legacy/build/pdf.worker.mjs')
    return lib
  })()
  return pdfjsPromise
}

/** Local folders with pdf.js's CMaps (needed for text in some CJK PDFs) and standard font data. */
function dataDirs(): { cMapUrl?: string; standardFontDataUrl?: string } {
  try {
    const req = createRequire(import.meta.url)
    const root = dirname(req.resolve('pdfjs-dist/package.json'))
    return { cMapUrl: join(root, 'cmaps') + '/', standardFontDataUrl: join(root, 'standard_fonts') + '/' }
  } catch {
    return {}
  }
}

interface TextItemLike {
  str: string
  transform: number[]
  width: number
  height: number
  hasEOL: boolean
  fontName?: string
}

function isTextItem(x: unknown): x is TextItemLike {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (x as { str?: unknown }).str === 'string' &&
    Array.isArray((x as { transform?: unknown }).transform)
  )
}

/** Font styles of a page's text content: pdf.js reports a monospace font as fontFamily 'monospace'. */
type FontStyles = Record<string, { fontFamily?: string } | undefined>

/** Rebuild lines from one page's text items (content order; a new line on EOL or a jump in y). */
function pageLines(items: unknown[], styles: FontStyles, page: number, pageBottom: number, pageHeight: number): PdfLine[] {
  const out: PdfLine[] = []
  let parts: string[] = []
  let y = 0
  let lastEnd = 0
  let sizeChars = new Map<number, number>()
  let monoChars = 0
  let allChars = 0
  const end = () => {
    const text = parts.join('').replace(/\s+/g, ' ').trim()
    if (text) {
      let size = 0
      let best = -1
      for (const [s, c] of sizeChars) if (c > best) [size, best] = [s, c]
      const rel = pageHeight > 0 ? (y - pageBottom) / pageHeight : 0.5
      out.push({ page, y, size, text, rel, mono: allChars > 0 && monoChars * 2 > allChars })
    }
    parts = []
    sizeChars = new Map()
    monoChars = 0
    allChars = 0
  }
  for (const it of items) {
    if (!isTextItem(it)) continue
    const t = it.transform
    const size = Math.round((Math.hypot(t[2] ?? 0, t[3] ?? 0) || it.height || 0) * 10) / 10
    const x = t[4] ?? 0
    const iy = t[5] ?? 0
    // A glyph with no mapping reads as a control character (U+0000 for Chromium's missing glyphs).
    const str = stripControls(it.str)
    if (str === '') {
      if (it.hasEOL) end()
      continue
    }
    if (parts.length > 0 && Math.abs(iy - y) > Math.max(size, 1) * 0.6) end()
    if (parts.length === 0) {
      y = iy
    } else {
      const gap = x - lastEnd
      const prev = parts[parts.length - 1]!
      if (gap > size * 0.15 && !/\s$/.test(prev) && !/^\s/.test(str)) parts.push(' ')
    }
    parts.push(str)
    lastEnd = x + (it.width || 0)
    const chars = str.trim().length
    if (chars) {
      sizeChars.set(size, (sizeChars.get(size) ?? 0) + chars)
      allChars += chars
      if (it.fontName !== undefined && styles[it.fontName]?.fontFamily === 'monospace') monoChars += chars
    }
    if (it.hasEOL) end()
  }
  end()
  return out
}

function pdfError(e: unknown): ParseError {
  if (e instanceof ParseError) return e
  const name = (e as { name?: string } | null)?.name ?? ''
  const msg = e instanceof Error ? e.message : String(e)
  if (name === 'PasswordException') return new ParseError('PDF is encrypted (it needs a password to open)')
  if (name === 'InvalidPDFException') return new ParseError(`file is not a valid PDF (${msg})`)
  return new ParseError(`could not read the PDF: ${msg}`)
}

function metaString(v: unknown): string | null {
  if (typeof v !== 'string') return null
  // eslint-disable-next-line no-control-regex
  const t = v.replace(/[\u0000-\u001f]/g, ' ').trim()
  return t || null
}

/** "D:20240102030405Z" -> "2024-01-02T03:04:05Z" (as far as present). */
function pdfDate(v: unknown): string | null {
  const s = metaString(v)
  if (!s) return null
  const m = /^D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?/.exec(s)
  if (!m) return s
  const [, Y, M = '01', D = '01', h, mi, se] = m
  return h ? `${Y}-${M}-${D}T${h}:${mi ?? '00'}:${se ?? '00'}` : `${Y}-${M}-${D}`
}

type PdfDocument = Awaited<ReturnType<PdfJs['getDocument']>['promise']>

interface ReadPages {
  lines: PdfLine[]
  pages: ParsedPage[]
  /** Pages pdf.js could not read at all (damaged), and the last error of one. */
  failedPages: number
  pageError: unknown
}

/** Every page's lines, with what each page's text layer gave; progress after each page. */
async function readPages(doc: PdfDocument, ctx: ParseContext): Promise<ReadPages> {
  const numPages = doc.numPages
  const out: ReadPages = { lines: [], pages: [], failedPages: 0, pageError: null }
  for (let p = 1; p <= numPages; p++) {
    try {
      const page = await doc.getPage(p)
      const y0 = page.view[1] ?? 0
      const y1 = page.view[3] ?? 0
      const tc = await page.getTextContent({ includeMarkedContent: false })
      const raw = tc.items.map((it) => (isTextItem(it) ? it.str : '')).join('')
      if (isUnreadableText(raw)) {
        out.pages.push({ page: p, chars: 0, unreadable: true })
      } else {
        const lines = pageLines(tc.items, tc.styles as FontStyles, p, Math.min(y0, y1), Math.abs(y1 - y0))
        for (const l of lines) out.lines.push(l)
        out.pages.push({ page: p, chars: lines.reduce((n, l) => n + l.text.length, 0), unreadable: false })
      }
      page.cleanup()
    } catch (e) {
      // One damaged page should not lose the rest of the document.
      out.failedPages++
      out.pageError = e
      out.pages.push({ page: p, chars: 0, unreadable: false })
    }
    if (p % 100 === 0) await doc.cleanup().catch(() => undefined)
    ctx.onProgress?.({ stage: 'pages', done: p, total: numPages })
  }
  return out
}

/** "3", "3 and 5", "2-4, 7 and 9": page numbers for a notice, runs joined. */
export function pageList(pages: number[]): string {
  const runs: string[] = []
  for (let i = 0; i < pages.length;) {
    let j = i
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++
    runs.push(j > i ? `${pages[i]}-${pages[j]}` : String(pages[i]))
    i = j + 1
  }
  return joinWords(runs)
}

/** What the person is told about pages left out. */
function pageNotices(read: ReadPages, ocr: Ocr): string[] {
  const out: string[] = []
  const off = ocr.off ? ', and text recognition is off for this collection' : ', nor did text recognition find any'
  const unreadable = read.pages.filter((p) => p.unreadable && !p.ocr).map((p) => p.page)
  if (unreadable.length > 0) {
    const one = unreadable.length === 1
    out.push(
      `${one ? 'page' : 'pages'} ${pageList(unreadable)} ${one ? 'has' : 'have'} no readable text (${one ? 'its font has' : 'their fonts have'} no usable character map${off}) and ${one ? 'was' : 'were'} left out of the index`,
    )
  }
  if (ocr.off && ocr.scanned.length > 0) {
    const one = ocr.scanned.length === 1
    out.push(
      `${one ? 'page' : 'pages'} ${pageList(ocr.scanned)} ${one ? 'is a scanned image' : 'are scanned images'} and text recognition is off for this collection: left out of the index`,
    )
  }
  if (ocr.tooLarge.length > 0) {
    const one = ocr.tooLarge.length === 1
    out.push(
      `${one ? 'page' : 'pages'} ${pageList(ocr.tooLarge)} ${one ? 'holds a scanned image' : 'hold scanned images'} too large to read (${tooLargeWhy}) and ${one ? 'was' : 'were'} left out`,
    )
  }
  if (ocr.capped.length > 0) {
    const one = ocr.capped.length === 1
    out.push(
      `${one ? 'page' : 'pages'} ${pageList(ocr.capped)} ${one ? 'was' : 'were'} not read by text recognition: at most ${ocr.cap} pages of one file are recognised, so that one long scan does not hold up the rest of the folder (split the file to have ${one ? 'it' : 'them'} read)`,
    )
  }
  if (ocr.failed.length > 0)
    out.push(`text recognition failed on ${ocr.failed.length === 1 ? 'page' : 'pages'} ${pageList(ocr.failed)}: left out`)
  if (read.failedPages > 0)
    out.push(
      `${read.failedPages === 1 ? 'one page' : `${read.failedPages} pages`} could not be read (damaged) and ${read.failedPages === 1 ? 'was' : 'were'} left out`,
    )
  return out
}

/** Document metadata from the Info dictionary and XMP, as strings. */
async function readMeta(doc: PdfDocument): Promise<Record<string, unknown>> {
  let info: Record<string, unknown> = {}
  let xmpTitle: string | null = null
  try {
    const md = await doc.getMetadata()
    info = (md.info ?? {}) as Record<string, unknown>
    xmpTitle = metaString(md.metadata?.get('dc:title'))
  } catch {
    // No metadata (a damaged Info dictionary): the text is what matters.
  }
  const meta: Record<string, unknown> = {}
  const put = (k: string, v: string | null) => {
    if (v) meta[k] = v
  }
  put('title', metaString(info.Title) ?? xmpTitle)
  put('author', metaString(info.Author))
  put('subject', metaString(info.Subject))
  put('keywords', metaString(info.Keywords))
  put('creator', metaString(info.Creator))
  put('producer', metaString(info.Producer))
  put('created', pdfDate(info.CreationDate))
  put('modified', pdfDate(info.ModDate))
  return meta
}

/** What text recognition did for a PDF: off, or which pages it recognised and which failed. */
interface Ocr {
  off: boolean
  /** Scanned pages (no text, an image); when off, those it would have read (of the first OFF_CHECK_PAGES). */
  scanned: number[]
  failed: number[]
  /** Pages with no text whose image pdf.js left out as too large (MAX_IMAGE_PIXELS). */
  tooLarge: number[]
  /** Pages left unexamined past the page cap (pdf-ocr.ts OCR_PAGE_CAP). */
  capped: number[]
  cap: number
  /** The last failure's reason. */
  error?: unknown
}

function noTextError(read: ReadPages, numPages: number, ocr: Ocr): ParseError {
  if (numPages === 0) return new ParseError('PDF has no pages')
  // Nothing was read, and recognition failed on a page: that failure is the reason.
  if (ocr.failed.length > 0) {
    const reason = ocr.error instanceof Error ? ocr.error.message : String(ocr.error)
    return new ParseError(`PDF has no text layer and text recognition failed: ${reason}`)
  }
  const why = ocr.off ? 'text recognition is off for this collection' : 'text recognition found no text in them'
  const unreadable = read.pages.filter((p) => p.unreadable).length
  if (unreadable === numPages)
    return new ParseError(
      `PDF has no readable text: ${numPages === 1 ? 'its page is' : `all ${numPages} pages are`} set in fonts without a usable character map (${why})`,
    )
  if (unreadable > 0)
    return new ParseError(
      `PDF has no text to read: ${unreadable} of ${numPages} pages are set in fonts without a usable character map and the rest have no text (${why})`,
    )
  if (ocr.tooLarge.length > 0)
    return new ParseError(
      `PDF has no text to read: its scanned ${ocr.tooLarge.length === 1 ? 'image is' : 'images are'} too large to read (${tooLargeWhy})`,
    )
  if (ocr.off && ocr.scanned.length > 0) return new ParseError(`PDF has no text to read: its pages are scanned images and ${why}`)
  return new ParseError(
    ocr.off
      ? 'PDF has no text to read (it may be scanned images; text recognition is off for this collection)'
      : 'PDF has no text to read',
  )
}

/** Reads the scanned and unreadable pages by text recognition (unless off), adding their lines in page order. */
async function recognise(lib: PdfJs, doc: PdfDocument, read: ReadPages, ctx: ParseContext): Promise<Ocr> {
  const todo = pagesToRecognise(read.pages)
  const off = ctx.ocr === false
  const cap = ctx.ocrPageCap ?? OCR_PAGE_CAP
  if (off) return { off, scanned: await scannedPages(doc as never, todo, lib.OPS), failed: [], capped: [], tooLarge: [], cap }
  const got = await recognisePages(doc as never, todo, ctx, lib.OPS)
  if (got.lines.length > 0) {
    read.lines = [...read.lines, ...got.lines].sort((a, z) => a.page - z.page)
  }
  return { off, scanned: got.scanned, failed: got.failed, capped: got.capped, tooLarge: got.tooLarge, cap, error: got.error }
}

/**
 * The largest image pdf.js decodes, in pixels; larger ones are left out of every page they are
 * on. pdf.js decodes an image whole and draws it through a canvas of its full size, four bytes a
 * pixel, none of it on the parser thread's heap (its limit does not see it): one image of 144
 * million pixels, a few hundred kilobytes deflated, took the process to 2.5 GB, and a page of
 * several would have the system's out-of-memory killer end the engine. 72 million is a page of
 * A3 scanned at 600 dpi.
 */
export const MAX_IMAGE_PIXELS = 72_000_000
const tooLargeWhy = `over ${MAX_IMAGE_PIXELS / 1_000_000} million pixels`

function openPdf(lib: PdfJs, bytes: Uint8Array) {
  return lib.getDocument({
    data: new Uint8Array(bytes), // a copy: pdf.js may transfer/detach the buffer it is given
    disableFontFace: true,
    useSystemFonts: false,
    isEvalSupported: false,
    isOffscreenCanvasSupported: false,
    disableAutoFetch: true,
    disableStream: true,
    disableRange: true,
    useWorkerFetch: false,
    stopAtErrors: false,
    maxImageSize: MAX_IMAGE_PIXELS,
    // Warnings, to learn of images left out; pdf-warnings.ts keeps them off the console.
    verbosity: 1,
    ...dataDirs(),
  })
}

export const parsePdf: ParserFn = guarded('PDF', (bytes, _relativePath, ctx) => countingPdfWarnings(() => readPdf(bytes, ctx)))

async function readPdf(bytes: Uint8Array, ctx: ParseContext): Promise<ParsedDocument> {
  if (bytes.length < 8 || !new TextDecoder('latin1').decode(bytes.subarray(0, 1024)).includes('%PDF-')) {
    throw new ParseError('file is not a valid PDF (no %PDF header)')
  }
  let lib: PdfJs
  try {
    lib = await loadPdfJs()
  } catch (e) {
    throw new ParseError(`PDF support failed to load: ${e instanceof Error ? e.message : String(e)}`)
  }
  const task = openPdf(lib, bytes)
  try {
    let doc: PdfDocument
    try {
      doc = await task.promise
    } catch (e) {
      throw pdfError(e)
    }
    const numPages = doc.numPages
    const read = await readPages(doc, ctx)
    if (numPages > 0 && read.failedPages === numPages) throw pdfError(read.pageError)
    const toRecognise = pagesToRecognise(read.pages).length
    if (ctx.ocr !== false && ctx.deferOcrOver !== undefined && toRecognise > ctx.deferOcrOver)
      return { title: null, meta: {}, sections: [], deferredOcrPages: toRecognise }
    const ocr = await recognise(lib, doc, read, ctx)
    const meta = await readMeta(doc)
    const b = new DocBuilder()
    buildSections(dropRunningHeaders(read.lines, numPages), b)
    const sections = b.finish()
    if (sections.length === 0) throw noTextError(read, numPages, ocr)
    if (read.failedPages > 0) meta.unreadablePages = read.failedPages
    // The first top-level heading is the document's title only when it is the only one: of a run
    // of equal chapters ("Chapter 1" ... "Chapter 4999") it is a sibling, and as the title it
    // would head the breadcrumb of every other chapter ("Chapter 1 > Chapter 4999").
    const topHeadings = b.sections.filter((s) => s.level === 1).length
    const title = (meta.title as string | undefined) ?? (topHeadings === 1 ? b.firstH1 : null)
    const notices = pageNotices(read, ocr)
    const result: ParsedDocument = { title, meta, sections, pageCount: numPages, pages: read.pages }
    if (notices.length > 0) result.notices = notices
    return result
  } catch (e) {
    throw pdfError(e)
  } finally {
    await task.destroy().catch(() => undefined)
  }
}
