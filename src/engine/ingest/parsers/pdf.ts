import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'

/**
 * PDF text with pdfjs-dist (legacy build, which runs in Node). Page by page: each page's text is
 * rebuilt into lines from the positions of its text items, the page is cleaned up, and only the
 * lines are kept. Then: repeated page headers/footers are dropped, the body font size is the most
 * common size (by characters), lines markedly larger than it become headings (levels by size),
 * and the remaining lines are joined into paragraphs that carry their page number.
 *
 * Not handled: reading order of multi-column layouts (content order is used), tables (read as
 * lines of text), scanned pages (no text layer: the file is refused with a reason).
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

interface PdfLine {
  page: number
  /** Baseline y in PDF units (origin bottom-left). */
  y: number
  size: number
  text: string
  /** Position on the page: 0 bottom .. 1 top. */
  rel: number
}

interface TextItemLike {
  str: string
  transform: number[]
  width: number
  height: number
  hasEOL: boolean
}

function isTextItem(x: unknown): x is TextItemLike {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (x as { str?: unknown }).str === 'string' &&
    Array.isArray((x as { transform?: unknown }).transform)
  )
}

/** Rebuild lines from one page's text items (content order; a new line on EOL or a jump in y). */
function pageLines(items: unknown[], page: number, pageBottom: number, pageHeight: number): PdfLine[] {
  const out: PdfLine[] = []
  let parts: string[] = []
  let y = 0
  let lastEnd = 0
  let sizeChars = new Map<number, number>()
  const end = () => {
    const text = parts.join('').replace(/\s+/g, ' ').trim()
    if (text) {
      let size = 0
      let best = -1
      for (const [s, c] of sizeChars) if (c > best) [size, best] = [s, c]
      const rel = pageHeight > 0 ? (y - pageBottom) / pageHeight : 0.5
      out.push({ page, y, size, text, rel })
    }
    parts = []
    sizeChars = new Map()
  }
  for (const it of items) {
    if (!isTextItem(it)) continue
    const t = it.transform
    const size = Math.round((Math.hypot(t[2] ?? 0, t[3] ?? 0) || it.height || 0) * 2) / 2
    const x = t[4] ?? 0
    const iy = t[5] ?? 0
    if (it.str === '') {
      if (it.hasEOL) end()
      continue
    }
    if (parts.length > 0 && Math.abs(iy - y) > Math.max(size, 1) * 0.6) end()
    if (parts.length === 0) {
      y = iy
    } else {
      const gap = x - lastEnd
      const prev = parts[parts.length - 1]!
      if (gap > size * 0.15 && !/\s$/.test(prev) && !/^\s/.test(it.str)) parts.push(' ')
    }
    parts.push(it.str)
    lastEnd = x + (it.width || 0)
    if (it.str.trim()) sizeChars.set(size, (sizeChars.get(size) ?? 0) + it.str.length)
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

export const parsePdf: ParserFn = guarded('PDF', async (bytes) => {
  if (bytes.length < 8 || !new TextDecoder('latin1').decode(bytes.subarray(0, 1024)).includes('%PDF-')) {
    throw new ParseError('file is not a valid PDF (no %PDF header)')
  }
  let lib: PdfJs
  try {
    lib = await loadPdfJs()
  } catch (e) {
    throw new ParseError(`PDF support failed to load: ${e instanceof Error ? e.message : String(e)}`)
  }
  const task = lib.getDocument({
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
    verbosity: 0,
    ...dataDirs(),
  })
  try {
    let doc: Awaited<typeof task.promise>
    try {
      doc = await task.promise
    } catch (e) {
      throw pdfError(e)
    }
    const numPages = doc.numPages
    const lines: PdfLine[] = []
    let failedPages = 0
    let pageError: unknown = null
    for (let p = 1; p <= numPages; p++) {
      try {
        const page = await doc.getPage(p)
        const y0 = page.view[1] ?? 0
        const y1 = page.view[3] ?? 0
        const tc = await page.getTextContent({ includeMarkedContent: false })
        for (const l of pageLines(tc.items, p, Math.min(y0, y1), Math.abs(y1 - y0))) lines.push(l)
        page.cleanup()
      } catch (e) {
        // One damaged page should not lose the rest of the document.
        failedPages++
        pageError = e
      }
      if (p % 100 === 0) await doc.cleanup().catch(() => undefined)
    }
    if (numPages > 0 && failedPages === numPages) throw pdfError(pageError)
    let info: Record<string, unknown> = {}
    let xmpTitle: string | null = null
    try {
      const md = await doc.getMetadata()
      info = (md.info ?? {}) as Record<string, unknown>
      xmpTitle = metaString(md.metadata?.get('dc:title'))
    } catch {
      info = {}
    }
    const b = new DocBuilder()
    buildSections(dropRunningHeaders(lines, numPages), b)
    const sections = b.finish()
    if (sections.length === 0) {
      throw new ParseError('PDF has no text to read (it may be scanned images; text recognition is not supported)')
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
    if (failedPages > 0) meta.unreadablePages = failedPages
    const title =
      (meta.title as string | undefined) ?? b.firstH1 ?? sections.find((s) => s.headings.length > 0)?.headings[0] ?? null
    const result: ParsedDocument = { title, meta, sections, pageCount: numPages }
    return result
  } catch (e) {
    throw pdfError(e)
  } finally {
    await task.destroy().catch(() => undefined)
  }
})

/** Characters per font size, and the body size (the size carrying the most characters). */
function sizeStats(lines: PdfLine[]): { chars: Map<number, number>; body: number; most: number } {
  const chars = new Map<number, number>()
  for (const l of lines) chars.set(l.size, (chars.get(l.size) ?? 0) + l.text.length)
  let body = 0
  let most = -1
  for (const [s, c] of chars) if (c > most) [body, most] = [s, c]
  return { chars, body, most }
}

/**
 * Drop lines repeated at the top or bottom of most pages (running headers, footers, page numbers;
 * digits are ignored when comparing). Lines larger than the body text are kept: a "Chapter N"
 * heading at the top of every page is content.
 */
function dropRunningHeaders(lines: PdfLine[], numPages: number): PdfLine[] {
  const { body } = sizeStats(lines)
  const inBand = (l: PdfLine) => (l.rel > 0.9 || l.rel < 0.1) && l.size <= body * 1.1
  const key = (l: PdfLine) => `${l.rel > 0.5 ? 'top' : 'bottom'}|${l.text.replace(/\d+/g, '#').toLowerCase()}`
  const pages = new Map<string, Set<number>>()
  for (const l of lines) {
    if (!inBand(l)) continue
    const k = key(l)
    let s = pages.get(k)
    if (!s) pages.set(k, (s = new Set()))
    s.add(l.page)
  }
  const threshold = Math.max(3, Math.ceil(numPages * 0.5))
  const drop = new Set<string>()
  for (const [k, s] of pages) if (s.size >= threshold) drop.add(k)
  if (drop.size === 0) return lines
  return lines.filter((l) => !(inBand(l) && drop.has(key(l))))
}

function buildSections(lines: PdfLine[], b: DocBuilder): void {
  const { chars, body, most } = sizeStats(lines)
  const isHeadingLine = (l: PdfLine) =>
    body > 0 &&
    l.size >= body * 1.15 &&
    l.size - body >= 1 &&
    l.text.length <= 150 &&
    /\p{L}/u.test(l.text) &&
    (chars.get(l.size) ?? 0) <= most * 0.5
  // Heading levels: distinct heading sizes, largest first (sizes within 1pt share a level).
  const hSizes = [...new Set(lines.filter(isHeadingLine).map((l) => l.size))].sort((a, z) => z - a)
  const levels: number[] = []
  for (const s of hSizes) {
    const prev = levels.length ? hSizes[levels.length - 1]! : null
    const prevLevel = levels.length ? levels[levels.length - 1]! : 0
    levels.push(prev !== null && prev - s < 1 ? prevLevel : Math.min(6, prevLevel + 1))
  }
  const levelOf = (size: number) => levels[hSizes.indexOf(size)] ?? 1

  let para: string[] = []
  let paraPage = 0
  let prev: PdfLine | null = null
  const flush = () => {
    if (para.length > 0) b.add('paragraph', para.join(''), paraPage)
    para = []
  }
  for (let k = 0; k < lines.length; k++) {
    const l = lines[k]!
    if (isHeadingLine(l)) {
      flush()
      // A heading wrapped over several lines: same size, same page, close together.
      let text = l.text
      while (k + 1 < lines.length) {
        const nx = lines[k + 1]!
        if (
          nx.page !== l.page ||
          nx.size !== l.size ||
          !isHeadingLine(nx) ||
          Math.abs(l.y - nx.y) > l.size * 1.6 ||
          text.length > 150
        )
          break
        text += ' ' + nx.text
        k++
      }
      b.heading(levelOf(l.size), text)
      prev = null
      continue
    }
    const newPara =
      prev === null ||
      l.page !== prev.page ||
      Math.abs(l.size - prev.size) > 0.5 ||
      prev.y - l.y > Math.max(l.size, prev.size) * 1.75 ||
      l.y > prev.y + 1 ||
      /^([•▪◦●■\-–*]|\d{1,3}[.)])\s/.test(l.text)
    if (newPara) {
      flush()
      paraPage = l.page
      para.push(l.text)
    } else {
      const last = para[para.length - 1]!
      if (/\p{L}-$/u.test(last) && /^\p{Ll}/u.test(l.text)) para[para.length - 1] = last.slice(0, -1)
      else para.push(' ')
      para.push(l.text)
    }
    prev = l
  }
  flush()
}
