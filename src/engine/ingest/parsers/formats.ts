/**
 * What Docent reads, by file extension, and the versions of what its parsers make of a file: the
 * part of the parsers the engine thread needs to plan an import or watch a folder. It imports no
 * parser, so opening a library does not load the parsers' libraries (mammoth, mdast, htmlparser2,
 * pdf.js...): they load in the parse worker, or on first use (index.ts).
 */

/**
 * The version of what the parsers make of a file. Bump it when a parser reads files differently:
 * every document is then read again on its next sync (importer.ts, importSignature), and files
 * that failed are tried again (a failure is remembered only for the parsers it failed with).
 * 2: control characters removed, unreadable PDF pages left out, `...` ends front matter, equal
 * PDF headings are siblings (issue 26).
 */
export const PARSERS_VERSION = 2
// New formats (EPUB; PPTX, ODT, ODS, XLSX; images) need no bump: files of a type that was not read were never imported, and are
// read on the next sync. A format whose files were read before by another parser gets a version of
// its own instead (FORMAT_VERSIONS): only its files are read again.

export type Format =
  'markdown' | 'text' | 'html' | 'pdf' | 'docx' | 'epub' | 'pptx' | 'odt' | 'ods' | 'xlsx' | 'csv' | 'asciidoc' | 'rst' | 'image'

/**
 * Per-format parser versions, on top of PARSERS_VERSION: a format listed here has its version in
 * the signature its documents are stored with (formatSignature, sync/plan.ts), so a change of it
 * reads again the files of that format only. Bump a format's number when only its parser changed.
 * 1: reStructuredText and AsciiDoc get parsers of their own (they were read as plain text, their
 * headings lost); CSV is new (no file of it was imported, listed so that it can be bumped alone).
 * PDF 1: scanned and unreadable pages are read by text recognition, so PDFs refused for having no
 * text are tried again (and only PDFs are read again).
 * Markdown 1: TOML front matter (Hugo, Zola) is metadata, its title and version read (it was text).
 * HTML 1: a built Docusaurus page's version meta is its version.
 */
const FORMAT_VERSIONS: Partial<Record<Format, number>> = { rst: 1, asciidoc: 1, csv: 1, pdf: 1, markdown: 1, html: 1 }

const BY_EXTENSION: Record<string, Format> = {
  '.md': 'markdown',
  '.mdx': 'markdown',
  '.markdown': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.rst': 'rst',
  '.rest': 'rst',
  '.adoc': 'asciidoc',
  '.asciidoc': 'asciidoc',
  '.asc': 'asciidoc',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.html': 'html',
  '.htm': 'html',
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.epub': 'epub',
  '.pptx': 'pptx',
  '.odt': 'odt',
  '.ods': 'ods',
  '.xlsx': 'xlsx',
  // Images of text, read by text recognition (image.ts).
  '.png': 'image',
  '.jpg': 'image',
  '.jpeg': 'image',
  '.tif': 'image',
  '.tiff': 'image',
}

/** File extensions (lower case, with the dot) that Docent can read. */
export const SUPPORTED_EXTENSIONS: readonly string[] = Object.freeze(Object.keys(BY_EXTENSION))

export function extensionOf(relativePath: string): string {
  const base = relativePath.replace(/\\/g, '/').split('/').pop() ?? ''
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot).toLowerCase() : ''
}

export function formatOf(relativePath: string): Format | null {
  return BY_EXTENSION[extensionOf(relativePath)] ?? null
}

/**
 * What the document signature of a file says of its format's own parser version ('' for formats
 * without one), so that a format's new parser reads its files again without re-reading the rest.
 */
export function formatSignature(relativePath: string): string {
  const f = formatOf(relativePath)
  const v = f ? FORMAT_VERSIONS[f] : undefined
  return v === undefined ? '' : `;${f}=${v}`
}

/**
 * Whether reading a file of this type runs code that can take the whole process down rather than
 * fail: PDFs (pdf.js draws scanned pages on a native canvas and decodes their images into memory
 * outside the parser thread's heap limit) and images (tesseract's wasm). A native crash or the
 * system's out-of-memory killer there ends the engine, not only the parser thread; such files are
 * marked while they are read (sync/reading.ts) so the next sync fails the one that did it.
 */
export function mayStopTheProcess(relativePath: string): boolean {
  const f = formatOf(relativePath)
  return f === 'pdf' || f === 'image'
}

/** Whether Docent reads files of this name's type. */
export function isSupportedFile(relativePath: string): boolean {
  return formatOf(relativePath) !== null
}
