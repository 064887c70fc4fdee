import type { ParseContext, ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { parseDocx } from './docx'
import { parseEpub } from './epub'
import { decodeHtml, parseHtml, parseHtmlString } from './html'
import { parseImage } from './image'
import { parseMarkdown, parseMarkdownString } from './markdown'
import { parsePdf } from './pdf'
import { parseText, parseTextString } from './text'
import { checkText, withoutControls } from './textcheck'

export { checkText, isUnreadableText, stripControls, unreadableShare } from './textcheck'
export { parseDocx, parseEpub, parseHtml, parseImage, parseMarkdown, parsePdf, parseText }

/**
 * The version of what the parsers make of a file. Bump it when a parser reads files differently:
 * every document is then read again on its next sync (importer.ts, importSignature), and files
 * that failed are tried again (a failure is remembered only for the parsers it failed with).
 * 2: control characters removed, unreadable PDF pages left out, `...` ends front matter, equal
 * PDF headings are siblings (issue 26).
 * 3: scanned and unreadable PDF pages read by text recognition (files refused for having no text
 * are tried again).
 */
export const PARSERS_VERSION = 3
// New formats (EPUB) need no bump: files of a type that was not read were never imported, and are
// read on the next sync.

type Format = 'markdown' | 'text' | 'html' | 'pdf' | 'docx' | 'epub' | 'image'

const BY_EXTENSION: Record<string, Format> = {
  '.md': 'markdown',
  '.mdx': 'markdown',
  '.markdown': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.rst': 'text',
  // AsciiDoc (Antora's pages) is read as plain text: its words are searchable, its headings not yet.
  '.adoc': 'text',
  '.html': 'html',
  '.htm': 'html',
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.epub': 'epub',
  // Images of text, read by text recognition (image.ts).
  '.png': 'image',
  '.jpg': 'image',
  '.jpeg': 'image',
  '.tif': 'image',
  '.tiff': 'image',
}

/** File extensions (lower case, with the dot) that Docent can read. */
export const SUPPORTED_EXTENSIONS: readonly string[] = Object.freeze(Object.keys(BY_EXTENSION))

const PARSERS: Record<Format, ParserFn> = {
  markdown: parseMarkdown,
  text: parseText,
  html: parseHtml,
  pdf: parsePdf,
  docx: parseDocx,
  epub: parseEpub,
  image: parseImage,
}

function extensionOf(relativePath: string): string {
  const base = relativePath.replace(/\\/g, '/').split('/').pop() ?? ''
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot).toLowerCase() : ''
}

function formatOf(relativePath: string): Format | null {
  return BY_EXTENSION[extensionOf(relativePath)] ?? null
}

/** The parser for a file, by extension; null when the type is not supported. */
export function parserFor(relativePath: string): ParserFn | null {
  const f = formatOf(relativePath)
  return f ? PARSERS[f] : null
}

/**
 * Parse a file's bytes. Text formats are checked first (valid UTF-8, or UTF-16 with a BOM; no NUL
 * bytes; a UTF-8 BOM is stripped). Every failure is a ParseError whose message says what is wrong.
 * Control characters never leave here (withoutControls), whatever the parser passed on.
 */
export async function parseFile(bytes: Uint8Array, relativePath: string, ctx: ParseContext = {}): Promise<ParsedDocument> {
  return withoutControls(await parseAny(bytes, relativePath, ctx))
}

async function parseAny(bytes: Uint8Array, relativePath: string, ctx: ParseContext): Promise<ParsedDocument> {
  const format = formatOf(relativePath)
  if (!format) {
    const ext = extensionOf(relativePath)
    throw new ParseError(ext ? `unsupported file type (${ext})` : 'unsupported file type (no extension)')
  }
  try {
    switch (format) {
      case 'markdown':
        return parseMarkdownString(checkText(bytes), relativePath)
      case 'text':
        return parseTextString(checkText(bytes))
      case 'html':
        return parseHtmlString(decodeHtml(bytes))
      default:
        return await PARSERS[format](bytes, relativePath, ctx)
    }
  } catch (e) {
    if (e instanceof ParseError) throw e
    // A parser bug or a library failure on odd input: still a readable reason, never a crash.
    throw new ParseError(`could not read the file: ${e instanceof Error ? e.message : String(e)}`)
  }
}
