import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { walkHtml } from './html'
import { checkText } from './textcheck'

/**
 * AsciiDoc, read by Asciidoctor itself (@asciidoctor/core): converted to HTML (body only) and the
 * HTML fed through the walker the HTML and EPUB parsers use, so `==` .. `======` titles become
 * headings of levels 2-6 (the document title, `=`, is level 1), tables Markdown rows, listings code.
 *
 * Safe mode 'secure': include directives are not read at all (each becomes a link to its target),
 * so a document cannot pull /etc/passwd or anything else off the disk or the network into the
 * index; nor are images, docinfo files or stylesheets read. Asciidoctor's warnings (an unresolved
 * reference, a skipped include) go to a logger that drops them: they are about the file's own
 * markup, and a sync is no place to print them.
 *
 * Asciidoctor is big, so it is loaded on the first AsciiDoc file (in the parser's worker thread
 * when there is one), not when the parsers are.
 */

type Asciidoctor = typeof import('@asciidoctor/core')
let loading: Promise<Asciidoctor> | null = null

function asciidoctor(): Promise<Asciidoctor> {
  loading ??= import('@asciidoctor/core').then((m) => {
    m.LoggerManager.setLogger(new m.NullLogger())
    return m
  })
  return loading
}

interface Converted {
  /** The document as HTML: its title as an <h1>, then the body. */
  html: string
  meta: Record<string, unknown>
}

async function convert(text: string): Promise<Converted> {
  const ad = await asciidoctor()
  const doc = await ad.load(text, { safe: 'secure', standalone: false })
  const meta: Record<string, unknown> = {}
  // Only what the file itself says: a version from the header's revision line or a :version: entry.
  const version = doc.getAttribute('revnumber') ?? doc.getAttribute('version')
  if (typeof version === 'string' && version.trim()) meta.version = version.trim()
  const author = doc.getAuthor()
  if (author) meta.author = author
  const description = doc.getAttribute('description')
  if (typeof description === 'string' && description.trim()) meta.description = description.trim()
  // The header's title only (getDocumentTitle would fall back to the first section's); it is
  // converted inline markup, so it goes through the walker with the body to lose its tags.
  const title = doc.hasHeader() ? doc.getDocumentTitle() : null
  const body = unwrapAdmonitions(await doc.convert())
  const html = (typeof title === 'string' && title ? `<h1>${title}</h1>\n` : '') + body
  return { html, meta }
}

const ADMONITION_OPEN =
  /<div class="admonitionblock (\w+)">\s*<table>\s*<tr>\s*<td class="icon">\s*(?:<div class="title">([^<]*)<\/div>|<i [^>]*title="([^"]*)"[^>]*><\/i>)?\s*<\/td>\s*<td class="content">/g

/**
 * Asciidoctor lays an admonition (NOTE:, WARNING: ...) out as a one-row table of its label and its
 * content: as a table it would be indexed as "| Note | ... |". Each becomes a blockquote of the
 * label and the content; the end of its table is found by counting the tables opened inside it.
 */
export function unwrapAdmonitions(html: string): string {
  let out = ''
  let at = 0
  for (const m of html.matchAll(ADMONITION_OPEN)) {
    if (m.index < at) continue
    const label = m[2] ?? m[3] ?? m[1]!
    let depth = 1
    const tags = /<(\/?)table\b[^>]*>/g
    tags.lastIndex = m.index + m[0].length
    let close: RegExpExecArray | null = null
    for (let t = tags.exec(html); t; t = tags.exec(html)) {
      depth += t[1] ? -1 : 1
      if (depth === 0) {
        close = t
        break
      }
    }
    if (!close) break
    const content = html.slice(m.index + m[0].length, close.index).replace(/<\/td>\s*<\/tr>\s*$/, '')
    out += `${html.slice(at, m.index)}<blockquote>${label}: ${content}</blockquote><div>`
    at = close.index + close[0].length
  }
  return out + html.slice(at)
}

/** The document as HTML for the source viewer (the renderer sanitizes it, as every HTML source). */
export async function asciidocHtml(bytes: Uint8Array): Promise<string> {
  return (await convert(checkText(bytes))).html
}

export async function parseAsciidocString(text: string): Promise<ParsedDocument> {
  // `.asc` is also the extension of OpenPGP signatures and keys (ASCII armor), often beside downloads.
  if (/^\s*-----BEGIN PGP [A-Z ]+-----/.test(text))
    throw new ParseError('an OpenPGP signature or key (ASCII armor), not an AsciiDoc document')
  const { html, meta } = await convert(text)
  const b = new DocBuilder()
  walkHtml(html, b)
  const title = b.firstH1
  if (title) meta.title = title
  return { title, meta, sections: b.finish() }
}

export const parseAsciidoc: ParserFn = guarded('AsciiDoc', (bytes) => parseAsciidocString(checkText(bytes)))
