import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { HtmlWalker, type HtmlWalkerResult } from './html-walker'
import { checkText } from './textcheck'

export { cleanHeading, renderTable } from './html-walker'

const VOID = new Set('area base br col embed hr img input link meta source track wbr param keygen'.split(' '))
/** Elements htmlparser2 closes implicitly (they do not pile up on its stack). */
const IMPLIED_CLOSE = new Set('p li dt dd tr td th option optgroup thead tbody tfoot rb rt rp'.split(' '))

/**
 * htmlparser2 spends time proportional to the depth of open elements on every tag, so a file of
 * hundreds of thousands of unclosed tags would take minutes. Estimate that work with a linear scan
 * and refuse such files; ordinary pages (and 10,000 nested divs) are far below the limit.
 */
function checkNesting(html: string): void {
  const open = new Map<string, number>()
  let depth = 0
  let maxDepth = 0
  let tags = 0
  let cost = 0
  const re = /<(\/?)([a-zA-Z][\w:-]{0,63})(?:\s[^<>]{0,2000})?(\/?)>/g
  let m: RegExpExecArray | null
  while ((m = re.exec(html))) {
    const name = m[2]!.toLowerCase()
    if (VOID.has(name) || IMPLIED_CLOSE.has(name) || m[3]) continue
    tags++
    if (m[1]) {
      const c = open.get(name) ?? 0
      if (c > 0) {
        open.set(name, c - 1)
        depth--
        cost += 1
      } else cost += depth
    } else {
      open.set(name, (open.get(name) ?? 0) + 1)
      depth++
      if (depth > maxDepth) maxDepth = depth
      cost += depth
    }
  }
  if (cost > 200_000_000 && cost > tags * 500) {
    throw new ParseError(
      `HTML nests elements too deeply to read (${maxDepth.toLocaleString('en-US')} levels of unclosed elements)`,
    )
  }
}

/** Feed an HTML string into a builder; returns the <title> and <meta> found. */
export function walkHtml(html: string, b: DocBuilder, opts: { recognizeSelfClosing?: boolean } = {}): HtmlWalkerResult {
  checkNesting(html)
  const w = new HtmlWalker(b, opts)
  w.write(html)
  w.end()
  return { title: w.title, meta: w.meta }
}

export function parseHtmlString(html: string): ParsedDocument {
  const b = new DocBuilder()
  let res: HtmlWalkerResult
  try {
    res = walkHtml(html, b, { recognizeSelfClosing: false })
  } catch (e) {
    if (e instanceof ParseError) throw e
    throw new ParseError(`could not read the HTML: ${e instanceof Error ? e.message : String(e)}`)
  }
  const meta: Record<string, unknown> = { ...res.meta }
  const title = res.title ?? (typeof meta['og:title'] === 'string' ? (meta['og:title'] as string) : null) ?? b.firstH1
  if (title) meta.title = title
  return { title, meta, sections: b.finish() }
}

/** Windows-1252 characters for bytes 0x80-0x9F ('' where the byte is undefined). */
const CP1252 = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ'

/**
 * Bytes to text for HTML: UTF-8 (or UTF-16 with BOM) like the other text formats, except that a
 * page declaring another charset in <meta> (windows-1252, Shift_JIS, ...) is decoded with it.
 */
export function decodeHtml(bytes: Uint8Array): string {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 2048))
  const m = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)
  const declared = m?.[1]?.toLowerCase()
  if (
    declared &&
    !['utf-8', 'utf8', 'unicode-1-1-utf-8'].includes(declared) &&
    !(bytes[0] === 0xff || bytes[0] === 0xfe || bytes[0] === 0xef)
  ) {
    let dec: InstanceType<typeof TextDecoder> | null
    try {
      dec = new TextDecoder(declared)
    } catch {
      dec = null
    }
    if (dec && dec.encoding !== 'utf-8' && !dec.encoding.startsWith('utf-16')) {
      if (bytes.indexOf(0) !== -1) throw new ParseError('binary content in a text file (it contains NUL bytes)')
      const text = dec.decode(bytes)
      // Node's windows-1252 decoder is really latin1 (0x80-0x9F come out as C1 controls): fix those up.
      return dec.encoding === 'windows-1252' ? text.replace(/[\u0080-\u009f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80] ?? c) : text
    }
  }
  return checkText(bytes)
}

export const parseHtml: ParserFn = guarded('HTML', (bytes) => parseHtmlString(decodeHtml(bytes)))
