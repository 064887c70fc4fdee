import type { ParseContext, ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { parseAsciidoc, parseAsciidocString } from './asciidoc'
import { parseCsv, parseCsvString } from './csv'
import { parseDocx } from './docx'
import { parseEpub } from './epub'
import { decodeHtml, parseHtml, parseHtmlString } from './html'
import { parseImage } from './image'
import { parseMarkdown, parseMarkdownString } from './markdown'
import { parseOds } from './ods'
import { parseOdt } from './odt'
import { parsePdf } from './pdf'
import { parsePptx } from './pptx'
import { parseRst, parseRstString } from './rst'
import { parseText, parseTextString } from './text'
import { checkText, withoutControls } from './textcheck'
import { parseXlsx } from './xlsx'
import { extensionOf, formatOf, type Format } from './formats'

export { checkText, isUnreadableText, stripControls, unreadableShare } from './textcheck'
export { formatSignature, mayStopTheProcess, PARSERS_VERSION, SUPPORTED_EXTENSIONS } from './formats'
export {
  parseAsciidoc,
  parseCsv,
  parseDocx,
  parseEpub,
  parseHtml,
  parseImage,
  parseMarkdown,
  parseOds,
  parseOdt,
  parsePdf,
  parsePptx,
  parseRst,
  parseText,
  parseXlsx,
}

const PARSERS: Record<Format, ParserFn> = {
  markdown: parseMarkdown,
  text: parseText,
  html: parseHtml,
  pdf: parsePdf,
  docx: parseDocx,
  epub: parseEpub,
  pptx: parsePptx,
  odt: parseOdt,
  ods: parseOds,
  xlsx: parseXlsx,
  csv: parseCsv,
  asciidoc: parseAsciidoc,
  rst: parseRst,
  image: parseImage,
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
      case 'rst':
        return parseRstString(checkText(bytes))
      case 'csv':
        return parseCsvString(checkText(bytes), relativePath)
      case 'asciidoc':
        return await parseAsciidocString(checkText(bytes))
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
