import { constants } from 'node:fs'
import { open, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Engine } from '../engine'
import { SUPPORTED_EXTENSIONS } from '../ingest/parsers/formats'
import type { SourceView } from '../../shared/api'
import { chunkOcrPages } from '../store/passages'
import { passageBoxes } from './ocr-boxes'

/**
 * Opening a cited source. Only chunks in the index can be opened, and only files that really live
 * under their collection's root: the stored relative path is joined to the root and both are
 * resolved through symlinks before comparing, so neither `..` in a stored path nor a symlink inside
 * the collection pointing elsewhere can make Docent read (or hand the OS) a file outside the folder
 * the person imported.
 */

export class SourceError extends Error {
  override readonly name = 'SourceError'
  constructor(
    message: string,
    readonly code: 'not_found' | 'forbidden' | 'failed',
  ) {
    super(message)
  }
}

const MB = 1024 * 1024
/** Text shown in the viewer, and PDF bytes sent to it as base64 (a third larger), are bounded. */
const MAX_TEXT_BYTES = 20 * MB
const MAX_PDF_BYTES = 100 * MB
const MAX_DOCX_BYTES = 50 * MB

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate)
  return rel !== '' && rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel)
}

/** The real path of a stored document, or a SourceError when it is missing or escapes its root. */
export async function resolveInsideRoot(root: string, relativePath: string): Promise<string> {
  if (path.isAbsolute(relativePath) || relativePath.split(/[\\/]/).includes('..')) {
    throw new SourceError('This document path points outside its collection folder; it was not opened.', 'forbidden')
  }
  let realRoot: string
  let realFile: string
  try {
    realRoot = await realpath(root)
  } catch {
    throw new SourceError(`The collection folder ${root} is not there any more; re-import it.`, 'not_found')
  }
  try {
    realFile = await realpath(path.join(realRoot, relativePath))
  } catch {
    throw new SourceError(`${relativePath} is not in ${root} any more; resync the collection.`, 'not_found')
  }
  if (!isInside(realRoot, realFile)) {
    throw new SourceError(`${relativePath} resolves to a file outside its collection folder; it was not opened.`, 'forbidden')
  }
  return realFile
}

type Format = SourceView['format']

/** Formats shown as HTML built from what the parser read (doc-html.ts): the app cannot render their own layout. */
const PARSED_AS_HTML = new Set(['.pptx', '.odt', '.ods', '.xlsx'])
const ASCIIDOC = new Set(['.adoc', '.asciidoc', '.asc'])
const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
}

export function formatOf(relativePath: string): Format {
  const ext = path.extname(relativePath).toLowerCase()
  if (ext === '.md' || ext === '.mdx' || ext === '.markdown') return 'markdown'
  if (ext === '.html' || ext === '.htm' || ext === '.epub' || PARSED_AS_HTML.has(ext)) return 'html'
  // AsciiDoc is shown as Asciidoctor renders it (its headings, tables and listings laid out).
  if (ASCIIDOC.has(ext)) return 'html'
  if (ext === '.pdf') return 'pdf'
  if (ext === '.docx') return 'docx'
  if (IMAGE_TYPES[ext]) return 'image'
  return 'text'
}

// O_NONBLOCK: a file swapped for a FIFO must not hang the engine on open; it is refused right after.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)

/**
 * Reads a regular file up to `max` bytes through one file handle: the handle must be a regular
 * file and the very file `real` names (device and inode), so a swap between resolving the path and
 * opening it cannot make Docent read something else; never more than `max` + 1 bytes are read.
 */
async function readBounded(real: string, max: number): Promise<Buffer> {
  const fh = await open(real, OPEN_FLAGS)
  try {
    const st = await fh.stat()
    if (!st.isFile()) throw new SourceError('This source is not a regular file.', 'forbidden')
    const named = await stat(real)
    if (named.dev !== st.dev || named.ino !== st.ino)
      throw new SourceError('This document changed while it was being opened; try again.', 'failed')
    const tooLarge = (size: number) =>
      new SourceError(`This document is too large to show here (${Math.round(size / MB)} MB); open it in its app.`, 'failed')
    if (st.size > max) throw tooLarge(st.size)
    const buf = Buffer.alloc(st.size + 1)
    let n = 0
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n)
      if (bytesRead === 0) break
      n += bytesRead
    }
    if (n > max) throw tooLarge(n)
    return buf.subarray(0, n)
  } finally {
    await fh.close()
  }
}

function hasSupportedExtension(file: string): boolean {
  return SUPPORTED_EXTENSIONS.includes(path.extname(file).toLowerCase())
}

/**
 * The path to hand the OS for "Open in its app": only a regular file inside its collection root
 * with a type Docent imports, and the joined path (root + stored path), never a link's target: the
 * OS opens what it is given with the app for its type, so a document that is really a link to a
 * script or an app elsewhere must not be opened at all.
 */
export async function indexedDocumentPath(engine: Engine, chunkId: string): Promise<string> {
  const src = await engine.passages.source(chunkId)
  if (!src) throw new SourceError('That passage is not in the index.', 'not_found')
  const real = await resolveInsideRoot(src.root, src.path)
  const st = await stat(real).catch(() => null)
  if (!st?.isFile()) throw new SourceError('This source is not a regular file; it was not opened.', 'forbidden')
  // Both names must be of a type Docent imports: a link named notes.txt leading to run.command is refused.
  if (!hasSupportedExtension(src.path) || !hasSupportedExtension(real))
    throw new SourceError('This source is not a document type Docent opens; it was not opened.', 'forbidden')
  return path.join(await realpath(src.root), ...src.path.split(/[\\/]/))
}

export async function openSource(engine: Engine, chunkId: string): Promise<SourceView> {
  const src = await engine.passages.source(chunkId)
  if (!src) throw new SourceError('That passage is not in the index.', 'not_found')
  const file = await resolveInsideRoot(src.root, src.path)
  const format = formatOf(src.path)
  let content: string | null = null
  let pdfBase64: string | null = null
  let image: { image_base64: string; image_type: string } | null = null
  if (format === 'pdf') {
    pdfBase64 = (await readBounded(file, MAX_PDF_BYTES)).toString('base64')
  } else if (format === 'image') {
    const type = IMAGE_TYPES[path.extname(src.path).toLowerCase()]!
    image = { image_base64: (await readBounded(file, MAX_PDF_BYTES)).toString('base64'), image_type: type }
  } else if (path.extname(src.path).toLowerCase() === '.epub') {
    // Shown as HTML: the chapters' bodies in reading order (sanitized by the renderer).
    try {
      const { epubHtml } = await import('../ingest/parsers/epub')
      content = await epubHtml(await readBounded(file, MAX_DOCX_BYTES))
    } catch (err) {
      throw new SourceError(`This book cannot be shown: ${err instanceof Error ? err.message : String(err)}`, 'failed')
    }
  } else if (PARSED_AS_HTML.has(path.extname(src.path).toLowerCase())) {
    // Parsed again with the import's own parser, which vets the file again (it may have changed).
    try {
      const [{ documentHtml }, { parseFile }] = await Promise.all([
        import('../ingest/parsers/doc-html'),
        import('../ingest/parsers/index'),
      ])
      content = documentHtml(await parseFile(await readBounded(file, MAX_DOCX_BYTES), src.path))
    } catch (err) {
      throw new SourceError(`This document cannot be shown: ${err instanceof Error ? err.message : String(err)}`, 'failed')
    }
  } else if (ASCIIDOC.has(path.extname(src.path).toLowerCase())) {
    // Converted as at import (secure mode: includes are links, never read); sanitized by the renderer.
    try {
      const { asciidocHtml } = await import('../ingest/parsers/asciidoc')
      content = await asciidocHtml(await readBounded(file, MAX_TEXT_BYTES))
    } catch (err) {
      throw new SourceError(`This document cannot be shown: ${err instanceof Error ? err.message : String(err)}`, 'failed')
    }
  } else if (format === 'docx') {
    // Shown as HTML (the renderer sanitizes it, as for every HTML source).
    const bytes = await readBounded(file, MAX_DOCX_BYTES)
    // The same zip-bomb and size checks as at import, before mammoth unpacks anything: the file
    // may have changed since it was imported.
    try {
      const { vetDocxZip } = await import('../ingest/parsers/docx')
      await vetDocxZip(bytes)
    } catch (err) {
      throw new SourceError(`This document cannot be shown: ${err instanceof Error ? err.message : String(err)}`, 'failed')
    }
    const mammoth = await import('mammoth')
    content = (await mammoth.convertToHtml({ buffer: bytes })).value
  } else {
    content = (await readBounded(file, MAX_TEXT_BYTES)).toString('utf8')
  }
  // Recognised pages of the passage (a scan, an image), with where its words are on them.
  const from = src.page_start ?? 1
  // Only scans and images have recognised pages.
  const ocrPages =
    format === 'pdf' || format === 'image' ? await chunkOcrPages(engine.db, src.chunk_id, from, src.page_end ?? from) : []
  return {
    ...(image ?? {}),
    ...(ocrPages.length ? { ocr: passageBoxes(src.text, ocrPages) } : {}),
    chunk_id: src.chunk_id,
    collection: src.collection,
    path: src.path,
    format,
    heading: src.heading,
    version: src.version,
    page: src.page_start,
    page_end: src.page_end,
    passage: src.text,
    content,
    pdf_base64: pdfBase64,
  }
}
