import { Parser } from 'htmlparser2'
import type { DocBuilder } from './builder'

/**
 * The HTML walker shared by the HTML, DOCX (via mammoth) and Markdown (raw HTML blocks) parsers,
 * and the small text helpers that shape its output.
 */

/** Elements whose content is never text a person reads on the page (or is site chrome). */
const SKIP = new Set(
  'script style noscript template svg nav footer button select textarea iframe object embed canvas audio video map datalist dialog input link meta base'.split(
    ' ',
  ),
)
const SKIP_ROLES = new Set(['navigation', 'contentinfo', 'search', 'menu', 'menubar', 'toolbar'])

/** Elements that end a paragraph when they open or close. */
const BLOCK = new Set(
  'p div section article main aside header hgroup blockquote figure figcaption details summary dl dt dd address center form fieldset legend hr body html caption tbody thead tfoot tr td th ul ol li table pre h1 h2 h3 h4 h5 h6'.split(
    ' ',
  ),
)

type SinkKind = 'heading' | 'pre' | 'cell' | 'li' | 'title'

interface Sink {
  kind: SinkKind
  parts: string[]
  level?: number
  /** List items: indentation depth and marker ("- " / "3. "). */
  depth?: number
  marker?: string
  /** List items: whether the marker line was already written (nested list started). */
  written?: boolean
}

interface Frame {
  name: string
  skip: boolean
  sink: boolean
  table: boolean
  list: boolean
  quote: boolean
}

interface TableState {
  rows: string[][]
  row: string[] | null
}

interface ListState {
  ordered: boolean
  n: number
  /** A list inside a table cell or heading is flattened into that text. */
  inline: boolean
}

export interface HtmlWalkerResult {
  title: string | null
  meta: Record<string, unknown>
}

/**
 * Streams HTML into a DocBuilder: h1-h6 start sections, <pre> becomes code, tables become Markdown
 * rows, lists become "- item" lines, everything else readable paragraphs. Scripts, styles and site
 * chrome (nav, footer, role=navigation, aria-hidden, hidden) are dropped. Iterative (no recursion),
 * so absurd nesting depths are fine. Nothing is executed or fetched.
 */
export class HtmlWalker {
  private readonly parser: Parser
  private readonly frames: Frame[] = []
  private readonly sinks: Sink[] = []
  private readonly tables: TableState[] = []
  private readonly lists: ListState[] = []
  private listLines: string[] = []
  private para: string[] = []
  private skipDepth = 0
  private quoteDepth = 0
  title: string | null = null
  readonly meta: Record<string, unknown> = {}

  constructor(
    private readonly b: DocBuilder,
    opts: { recognizeSelfClosing?: boolean } = {},
  ) {
    this.parser = new Parser(
      {
        onopentag: (name, attribs) => this.open(name, attribs),
        onclosetag: (name) => this.close(name),
        ontext: (text) => this.text(text),
      },
      {
        decodeEntities: true,
        lowerCaseTags: true,
        lowerCaseAttributeNames: true,
        recognizeSelfClosing: opts.recognizeSelfClosing ?? true,
      },
    )
  }

  write(html: string): void {
    this.parser.write(html)
  }

  end(): void {
    this.parser.end()
    while (this.frames.length > 0) this.close(this.frames[this.frames.length - 1]!.name)
    this.flushPara()
    this.flushList()
  }

  private get sink(): Sink | undefined {
    return this.sinks[this.sinks.length - 1]
  }

  private open(name: string, attribs: Record<string, string>): void {
    const frame: Frame = { name, skip: false, sink: false, table: false, list: false, quote: false }
    this.frames.push(frame)
    if (this.skipDepth === 0 && name === 'meta') this.readMeta(attribs)
    if (this.skipDepth > 0 || isHidden(name, attribs)) {
      frame.skip = true
      this.skipDepth++
      return
    }
    if (name === 'title') {
      this.openTitle(frame)
      return
    }
    const sink = this.sink
    if (sink?.kind === 'pre') {
      if (name === 'br') sink.parts.push('\n')
      return
    }
    if (name === 'br') {
      if (sink) sink.parts.push(' ')
      else this.para.push('\n')
      return
    }
    if (name === 'img') {
      const alt = (attribs.alt ?? '').trim()
      if (alt) this.pushText(` ${alt} `)
      return
    }
    if (this.openBlockElement(name, attribs, frame, sink)) return
    if (BLOCK.has(name)) this.breakText(sink)
  }

  /** The elements that shape blocks (code, headings, tables, lists, quotes); false when `name` is none of them here. */
  private openBlockElement(name: string, attribs: Record<string, string>, frame: Frame, sink: Sink | undefined): boolean {
    if (name === 'pre') {
      if (!sink) this.flushPara()
      this.pushSink(frame, { kind: 'pre', parts: [] })
      return true
    }
    if (/^h[1-6]$/.test(name) && !sink && this.lists.length === 0 && this.tables.length === 0) {
      this.flushPara()
      this.pushSink(frame, { kind: 'heading', parts: [], level: Number(name[1]) })
      return true
    }
    if (name === 'table') {
      if (!sink) this.flushPara()
      frame.table = true
      this.tables.push({ rows: [], row: null })
      return true
    }
    const table = this.tables[this.tables.length - 1]
    if (table && (name === 'tr' || name === 'td' || name === 'th')) {
      this.openTablePart(name, table, frame)
      return true
    }
    if (name === 'ul' || name === 'ol' || name === 'menu') {
      this.openList(name, attribs, frame, sink)
      return true
    }
    if (name === 'li') {
      this.openItem(frame, sink)
      return true
    }
    if (name === 'blockquote') {
      frame.quote = true
      if (!sink) this.flushPara()
      this.quoteDepth++
      return true
    }
    return false
  }

  /** Only the document's first <title> outside <body> names it. */
  private openTitle(frame: Frame): void {
    if (this.title === null && this.frames.every((f) => f.name !== 'body')) this.pushSink(frame, { kind: 'title', parts: [] })
  }

  private readMeta(attribs: Record<string, string>): void {
    const key = (attribs.name ?? attribs.property ?? '').toLowerCase()
    const content = attribs.content
    if (content && ['description', 'author', 'keywords', 'version', 'og:title'].includes(key)) this.meta[key] = content
    // A built Docusaurus site names each docs page's version (DocSearch's tag too): its newest
    // release's pages sit at docs/ with no version in the path. Its current docs are "next", as in
    // the source tree (ingest/version-layouts.ts). An explicit version meta still wins.
    if (content?.trim() && (key === 'docusaurus_version' || key === 'docsearch:version') && this.meta.version === undefined) {
      const v = content.split(',')[0]!.trim()
      this.meta.version = v === 'current' ? 'next' : v
    }
  }

  private openTablePart(name: 'tr' | 'td' | 'th', table: TableState, frame: Frame): void {
    if (name === 'tr') {
      this.endRow(table)
      table.row = []
      return
    }
    if (table.row === null) table.row = []
    this.pushSink(frame, { kind: 'cell', parts: [] })
  }

  private openList(name: string, attribs: Record<string, string>, frame: Frame, sink: Sink | undefined): void {
    const inline = sink !== undefined && sink.kind !== 'li'
    if (!inline) {
      if (this.lists.length === 0) this.flushPara()
      if (sink?.kind === 'li') this.writeItem(sink, false)
    } else sink.parts.push(' ')
    frame.list = true
    const start = Number.parseInt(attribs.start ?? '1', 10)
    this.lists.push({ ordered: name === 'ol', n: Number.isFinite(start) ? start : 1, inline })
  }

  private openItem(frame: Frame, sink: Sink | undefined): void {
    const list = this.lists[this.lists.length - 1]
    if (list && !list.inline) {
      const depth = this.lists.filter((l) => !l.inline).length - 1
      const marker = list.ordered ? `${list.n++}. ` : '- '
      this.pushSink(frame, { kind: 'li', parts: [], depth, marker, written: false })
      return
    }
    this.breakText(sink)
  }

  private pushSink(frame: Frame, sink: Sink): void {
    frame.sink = true
    this.sinks.push(sink)
  }

  /** A block boundary: a space inside a sink's text, else the end of the paragraph. */
  private breakText(sink: Sink | undefined): void {
    if (sink) sink.parts.push(' ')
    else this.flushPara()
  }

  private close(name: string): void {
    let frame = this.frames[this.frames.length - 1]
    if (!frame) return
    if (frame.name !== name) {
      // htmlparser2 closes elements in order; be defensive anyway.
      if (!this.frames.some((f) => f.name === name)) return
      while (frame && frame.name !== name) {
        this.close(frame.name)
        frame = this.frames[this.frames.length - 1]
      }
      if (!frame) return
    }
    this.frames.pop()
    if (frame.skip) {
      this.skipDepth--
      return
    }
    if (frame.sink) {
      const sink = this.sinks.pop()!
      this.endSink(sink)
      return
    }
    if (frame.table) {
      const table = this.tables.pop()!
      this.endRow(table)
      const rendered = renderTable(table.rows)
      const outer = this.sink
      if (outer && outer.kind !== 'li') {
        outer.parts.push(' ', table.rows.map((r) => r.join(' ')).join(' '), ' ')
      } else if (rendered) {
        if (outer?.kind === 'li') this.breakList(outer)
        this.b.add('table', rendered)
      }
      return
    }
    if (frame.list) {
      this.lists.pop()
      if (this.lists.every((l) => l.inline) && !this.sinks.some((s) => s.kind === 'li')) this.flushList()
      return
    }
    if (frame.quote) {
      if (!this.sink) this.flushPara()
      this.quoteDepth--
      return
    }
    if (BLOCK.has(name)) this.breakText(this.sink)
  }

  private text(t: string): void {
    if (this.skipDepth > 0 || !t) return
    const sink = this.sink
    if (sink?.kind === 'pre') {
      sink.parts.push(t)
      return
    }
    this.pushText(t.replace(/[ \t\n\r\f]+/g, ' '))
  }

  private pushText(t: string): void {
    const sink = this.sink
    if (sink) sink.parts.push(t)
    else this.para.push(t)
  }

  private endSink(sink: Sink): void {
    const outer = this.sink
    switch (sink.kind) {
      case 'title': {
        const t = cleanInline(sink.parts.join(''))
        if (t && this.title === null) this.title = t
        return
      }
      case 'heading': {
        const t = cleanHeading(sink.parts.join(''))
        if (t) this.b.heading(sink.level ?? 1, t)
        return
      }
      case 'pre': {
        let code = sink.parts.join('').replace(/\r\n?/g, '\n')
        if (code.startsWith('\n')) code = code.slice(1)
        if (outer && outer.kind !== 'li') {
          outer.parts.push(' ', code.replace(/\s+/g, ' '), ' ')
          return
        }
        if (outer?.kind === 'li') this.breakList(outer)
        this.b.add('code', code)
        return
      }
      case 'cell': {
        const table = this.tables[this.tables.length - 1]
        const t = cleanInline(sink.parts.join(''))
        if (table) {
          if (table.row === null) table.row = []
          table.row.push(t)
        }
        return
      }
      case 'li': {
        this.writeItem(sink, true)
        return
      }
    }
  }

  /** Write the list item's text so far as a line (the marker line first, then continuation lines). */
  private writeItem(sink: Sink, final: boolean): void {
    const t = cleanInline(sink.parts.join(''))
    sink.parts = []
    const indent = '  '.repeat(sink.depth ?? 0)
    if (!sink.written) {
      if (t || final) this.listLines.push(`${indent}${sink.marker ?? '- '}${t}`.trimEnd())
      sink.written = true
    } else if (t) {
      this.listLines.push(`${indent}  ${t}`)
    }
  }

  /** A block (code, table) inside a list item: emit the list so far, the caller adds the block, the list continues. */
  private breakList(item: Sink): void {
    this.writeItem(item, false)
    this.flushList()
  }

  private endRow(table: TableState): void {
    if (table.row !== null && table.row.length > 0) table.rows.push(table.row)
    table.row = null
  }

  private flushPara(): void {
    if (this.para.length === 0) return
    const t = cleanInline(this.para.join(''), true)
    this.para = []
    if (t) this.b.add(this.quoteDepth > 0 ? 'quote' : 'paragraph', t)
  }

  private flushList(): void {
    if (this.listLines.length === 0) return
    this.b.add('list', this.listLines.join('\n'))
    this.listLines = []
  }
}

/** Site chrome, scripts and anything marked hidden: skipped with all its content. */
function isHidden(name: string, attribs: Record<string, string>): boolean {
  return (
    SKIP.has(name) ||
    'hidden' in attribs ||
    attribs['aria-hidden'] === 'true' ||
    SKIP_ROLES.has((attribs.role ?? '').toLowerCase())
  )
}

/** Collapse whitespace; non-breaking spaces become plain spaces after collapsing (so &nbsp; indentation survives). */
function cleanInline(s: string, keepNewlines = false): string {
  let t = s.replace(/[ \t\r\f]+/g, ' ')
  t = keepNewlines ? t.replace(/ ?\n ?/g, '\n').replace(/\n{3,}/g, '\n\n') : t.replace(/\n/g, ' ').replace(/ {2,}/g, ' ')
  t = t.replace(/\u00a0/g, ' ')
  return keepNewlines
    ? t
        .split('\n')
        .map((l) => l.trimEnd())
        .join('\n')
        .replace(/^\s*\n|\s+$/g, '')
    : t.trim()
}

/** Heading text without permalink markers that doc generators append (¶, #, §). */
export function cleanHeading(s: string): string {
  return cleanInline(s)
    .replace(/\s*[¶§#🔗]+$/u, '')
    .trim()
}

/** Rows as Markdown table lines; the first row is the header (HTML and DOCX tables rarely mark one reliably). */
export function renderTable(rows: string[][]): string {
  const nonEmpty = rows.filter((r) => r.some((c) => c.length > 0))
  if (nonEmpty.length === 0) return ''
  const width = Math.max(...nonEmpty.map((r) => r.length))
  const line = (r: string[]) => {
    const cells: string[] = []
    for (let i = 0; i < width; i++) cells.push((r[i] ?? '').replace(/\|/g, '\\|'))
    return `| ${cells.join(' | ')} |`
  }
  const out = [line(nonEmpty[0]!), `|${' --- |'.repeat(width)}`]
  for (let i = 1; i < nonEmpty.length; i++) out.push(line(nonEmpty[i]!))
  return out.join('\n')
}
