import { isMap, isScalar, parseDocument } from 'yaml'
import type { BlockKind, ParsedDocument, ParserFn } from '../types'
import { DocBuilder } from './builder'
import { renderTable, walkHtml } from './html'
import { componentLabel, isTitledLabel, joinLabel, reduceInline, type TagEvent } from './inline'
import { scanTag, type AttrValue, type ScannedTag } from './mdx-syntax'
import { guarded } from './guard'
import { checkText } from './textcheck'

/**
 * Markdown (CommonMark + GFM tables) and MDX to sections and blocks.
 *
 * A line-based block parser, written for documentation sites rather than full CommonMark
 * conformance: ATX and setext headings, fenced and indented code, GFM tables, lists (nested,
 * rendered as "- item" lines), block quotes, raw HTML blocks (read with the HTML walker), front
 * matter, and for MDX: import/export lines, `{expressions}` and `{/* comments *\/}` dropped, JSX
 * components reduced to their text (Mintlify components read well: a <Tab title="Python"> adds
 * "Python" to the breadcrumb of headings inside it, <Note> prefixes "Note:", a <Card title> or
 * <Accordion title> prefixes its title, <Tooltip tip> appends the tip).
 */

const FENCE = /^(`{3,}|~{3,})(.*)$/
const ATX = /^(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/
const HR = /^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/
const LIST = /^([-*+]|(\d{1,9})[.)])(?:([ \t]+)(.*))?$/
const LINK_DEF = /^\[[^\]^][^\]]{0,999}\]:[ \t]*\S/
const ESM =
  /^(?:import\s+(?:["']|\{|\*\s+as\s|[\w$]+\s*,|[\w$]+\s+from\s*["'])|export\s+(?:const|let|var|function|default|class|async|\{|\*)(?:\s|$|\{))/
/** CommonMark HTML block type 6: block-level tags, which may interrupt a paragraph. */
const HTML_BLOCK_TAGS = new Set(
  'address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol optgroup option p param search section summary table tbody td tfoot th thead title tr track ul'.split(
    ' ',
  ),
)
const RAW_HTML = /^<(pre|script|style|textarea)(?:\s|>|$)/i
const MAX_CONTAINER_DEPTH = 64
/** Components whose title starts a section of its own (alternatives such as language tabs). */
const TAB_COMPONENTS = new Set(['Tab'])

interface Container {
  name: string
  /** Label not yet shown (prefixes the first block inside), null once used. */
  pending: string | null
  titled: boolean
}

function indentOf(line: string): { ind: number; chars: number } {
  let ind = 0
  let k = 0
  while (k < line.length) {
    const c = line[k]
    if (c === ' ') ind++
    else if (c === '\t') ind += 4 - (ind % 4)
    else break
    k++
  }
  return { ind, chars: k }
}

const isBlank = (l: string) => /^[ \t]*$/.test(l)

/** Remove up to `cols` columns of leading whitespace. */
function stripIndent(line: string, cols: number): string {
  let col = 0
  let k = 0
  while (k < line.length && col < cols) {
    const c = line[k]
    if (c === ' ') col++
    else if (c === '\t') col += 4 - (col % 4)
    else break
    k++
  }
  return line.slice(k)
}

function splitRow(row: string): string[] {
  let t = row.trim()
  if (t.startsWith('|')) t = t.slice(1)
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1)
  const cells: string[] = []
  let cur = ''
  for (let k = 0; k < t.length; k++) {
    const c = t[k]!
    if (c === '\\' && t[k + 1] === '|') {
      cur += '|'
      k++
    } else if (c === '|') {
      cells.push(cur.trim())
      cur = ''
    } else cur += c
  }
  cells.push(cur.trim())
  return cells
}

function isDelimiterRow(line: string): number {
  if (!line.includes('-')) return 0
  const cells = splitRow(line)
  if (!cells.every((c) => /^:?-+:?$/.test(c))) return 0
  if (cells.length === 1 && !line.includes('|')) return 0
  return cells.length
}

export interface FrontMatter {
  meta: Record<string, unknown>
  body: string
}

/** YAML front matter between `---` lines. Invalid YAML is ignored (the body still parses). */
export function splitFrontMatter(text: string): FrontMatter {
  const m = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(text)
  if (!m) return { meta: {}, body: text }
  const body = text.slice(m[0].length)
  const src = m[1]!
  let meta: Record<string, unknown> = {}
  try {
    const doc = parseDocument(src, { uniqueKeys: false, prettyErrors: false })
    if (doc.errors.length === 0 && isMap(doc.contents)) {
      const js: unknown = doc.toJS({ maxAliasCount: 100 })
      if (js && typeof js === 'object' && !Array.isArray(js)) meta = js as Record<string, unknown>
      // `version: 1.10` is the number 1.1 to YAML; keep what the author wrote.
      const v = doc.get('version', true)
      if (isScalar(v) && typeof v.value !== 'string' && v.value !== null && v.range) {
        meta.version = src.slice(v.range[0], v.range[1]).trim()
      }
    }
  } catch {
    meta = {}
  }
  return { meta, body }
}

class MarkdownParser {
  private readonly lines: string[]
  private readonly n: number
  readonly b = new DocBuilder()
  private para: string[] = []
  private readonly containers: Container[] = []

  constructor(
    body: string,
    private readonly mdx: boolean,
  ) {
    this.lines = body.split('\n')
    this.n = this.lines.length
  }

  run(): void {
    let i = 0
    while (i < this.n) i = this.step(i)
    this.flushPara()
    while (this.containers.length > 0) this.popContainerAt(this.containers.length - 1)
  }

  // ---- blocks -------------------------------------------------------------------------------

  private step(i: number): number {
    const line = this.lines[i]!
    if (isBlank(line)) {
      this.flushPara()
      return i + 1
    }
    const { ind, chars } = indentOf(line)
    const rest = line.slice(chars)
    const relaxed = ind <= 3 || this.mdx || this.containers.length > 0
    const inPara = this.para.length > 0

    const fm = FENCE.exec(rest)
    if (fm && relaxed && !(fm[1]![0] === '`' && fm[2]!.includes('`'))) {
      this.flushPara()
      return this.fencedCode(i, ind, fm[1]!)
    }
    if (!this.mdx && ind >= 4 && !inPara && this.containers.length === 0) return this.indentedCode(i)
    if (relaxed && rest[0] === '#') {
      const hm = ATX.exec(rest)
      if (hm) {
        this.flushPara()
        this.heading(hm[1]!.length, hm[2] ?? '')
        return i + 1
      }
    }
    if (inPara && ind <= 3 && /^(?:=+|-+)[ \t]*$/.test(rest)) {
      const text = this.para.join('\n')
      this.para = []
      this.heading(rest[0] === '=' ? 1 : 2, text)
      return i + 1
    }
    if (relaxed && HR.test(rest)) {
      this.flushPara()
      return i + 1
    }
    if (this.mdx && ind === 0 && !inPara && this.containers.length === 0 && ESM.test(rest)) {
      let j = i + 1
      while (j < this.n && !isBlank(this.lines[j]!)) j++
      return j
    }
    if (rest[0] === '<' || (this.mdx && rest[0] === '{')) {
      const next = this.tagLine(i, chars)
      if (next !== null) return next
    }
    if (rest[0] === '>') {
      this.flushPara()
      return this.blockQuote(i)
    }
    const lm = relaxed ? LIST.exec(rest) : null
    if (lm && (!inPara || ((lm[4] ?? '').trim() !== '' && (lm[2] === undefined || lm[2] === '1')))) {
      this.flushPara()
      return this.list(i)
    }
    if (rest.includes('|') && i + 1 < this.n) {
      const cols = isDelimiterRow(this.lines[i + 1]!)
      if (cols > 0 && splitRow(rest).length === cols) {
        this.flushPara()
        return this.table(i)
      }
    }
    if (!inPara && LINK_DEF.test(rest)) return i + 1
    const fn = /^\[\^([^\]\s]{1,50})\]:[ \t]*(.*)$/.exec(rest)
    if (fn) {
      this.flushPara()
      this.para.push(`[${fn[1]}] ${fn[2]}`)
      return i + 1
    }
    this.para.push(rest)
    return i + 1
  }

  private fencedCode(i: number, ind: number, fence: string): number {
    const ch = fence[0]!
    const closing = new RegExp(`^\\${ch}{${fence.length},}$`)
    const body: string[] = []
    let j = i + 1
    while (j < this.n) {
      const l = this.lines[j]!
      const t = l.trim()
      if (t.length >= fence.length && t[0] === ch && closing.test(t)) break
      body.push(stripIndent(l, ind))
      j++
    }
    this.emit('code', body.join('\n'))
    return Math.min(j + 1, this.n)
  }

  private indentedCode(i: number): number {
    const body: string[] = []
    let j = i
    while (j < this.n) {
      const l = this.lines[j]!
      if (isBlank(l)) body.push('')
      else if (indentOf(l).ind >= 4) body.push(stripIndent(l, 4))
      else break
      j++
    }
    this.emit('code', body.join('\n'))
    return j
  }

  private heading(level: number, raw: string): void {
    const text = reduceInline(raw.replace(/[ \t]*\{#[\w:.-]+\}[ \t]*$/, ''), { mdx: this.mdx }).text
    if (!text) return
    for (const c of this.containers) c.pending = null
    this.b.heading(level, text)
  }

  private blockQuote(i: number): number {
    let j = i
    const inner: string[] = []
    while (j < this.n) {
      const l = this.lines[j]!
      const m = /^[ \t]{0,3}>/.exec(l)
      if (!m) break
      inner.push(l.replace(/^(?:[ \t]{0,3}>[ \t]?)+/, ''))
      j++
    }
    let label: string | null = null
    const alert = /^\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*$/i.exec(inner[0] ?? '')
    if (alert) {
      const a = alert[1]!.toLowerCase()
      label = a[0]!.toUpperCase() + a.slice(1)
      inner.shift()
    }
    let buf: string[] = []
    const flush = () => {
      const t = reduceInline(buf.join('\n'), { mdx: this.mdx }).text
      buf = []
      if (!t) return
      this.emit('quote', label ? joinLabel(label, t) : t)
      label = null
    }
    for (let k = 0; k < inner.length; k++) {
      const l = inner[k]!
      const fm = FENCE.exec(l.trim())
      if (fm) {
        flush()
        const code: string[] = []
        k++
        while (k < inner.length && !inner[k]!.trim().startsWith(fm[1]!)) code.push(inner[k++]!)
        this.emit('code', code.join('\n'))
        continue
      }
      if (isBlank(l)) flush()
      else buf.push(l)
    }
    flush()
    return j
  }

  private table(i: number): number {
    const rows: string[][] = [splitRow(this.lines[i]!)]
    let j = i + 2
    while (j < this.n) {
      const l = this.lines[j]!
      if (isBlank(l) || !l.includes('|')) break
      const t = l.trim()
      if (t.startsWith('#') || FENCE.test(t) || t.startsWith('>')) break
      rows.push(splitRow(l))
      j++
    }
    const cleaned = rows.map((r) => r.map((c) => reduceInline(c, { mdx: this.mdx }).text))
    this.emit('table', renderTable(cleaned))
    return j
  }

  private list(i: number): number {
    const out: string[] = []
    const stack: { markerInd: number; contentInd: number }[] = []
    let cur: { prefix: string; parts: string[] } | null = null
    const events: TagEvent[] = []
    let blankSeen = false
    const flushItem = () => {
      if (!cur) return
      const r = reduceInline(cur.parts.join('\n'), { mdx: this.mdx })
      events.push(...r.events)
      if (r.text || cur.prefix.trim()) out.push(`${cur.prefix}${r.text}`.trimEnd())
      cur = null
    }
    const flushList = () => {
      flushItem()
      if (out.length > 0) this.emit('list', out.join('\n'))
      out.length = 0
    }
    let j = i
    while (j < this.n) {
      const line = this.lines[j]!
      if (isBlank(line)) {
        blankSeen = true
        j++
        continue
      }
      const { ind, chars } = indentOf(line)
      const rest = line.slice(chars)
      const base = stack[0]?.contentInd ?? 0
      const lm = HR.test(rest) ? null : LIST.exec(rest)
      if (lm) {
        flushItem()
        while (stack.length > 0 && ind < stack[stack.length - 1]!.contentInd) {
          const top = stack.pop()!
          if (ind >= top.markerInd || stack.length === 0) break
        }
        const depth = stack.length
        const pad = lm[3] ?? ' '
        const padCols = pad.length > 4 ? 1 : Math.max(1, indentOf(pad + 'x').ind)
        stack.push({ markerInd: ind, contentInd: ind + lm[1]!.length + padCols })
        const marker = lm[2] !== undefined ? `${lm[2]}. ` : '- '
        cur = { prefix: '  '.repeat(depth) + marker, parts: [lm[4] ?? ''] }
        blankSeen = false
        j++
        continue
      }
      const fm = FENCE.exec(rest)
      if (fm) {
        if (blankSeen && ind < base) break
        flushList()
        j = this.fencedCode(j, ind, fm[1]!)
        blankSeen = false
        continue
      }
      const blockStart = (rest[0] === '#' && ATX.test(rest)) || HR.test(rest) || rest[0] === '>' || this.isTagOnlyLine(rest)
      if (blankSeen) {
        if (ind < base || blockStart) break
        flushItem()
        let depth = stack.length - 1
        while (depth > 0 && ind < stack[depth]!.contentInd) depth--
        cur = { prefix: '  '.repeat(depth) + '  ', parts: [rest] }
        blankSeen = false
        j++
        continue
      }
      if (blockStart && ind < base + 4) break
      if (rest.includes('|') && j + 1 < this.n && isDelimiterRow(this.lines[j + 1]!) > 0) {
        flushList()
        j = this.table(j)
        continue
      }
      if (!cur) cur = { prefix: '  '.repeat(Math.max(0, stack.length - 1)) + '  ', parts: [] }
      ;(cur as { parts: string[] }).parts.push(rest)
      j++
    }
    flushList()
    this.applyEvents(events)
    return j
  }

  /** A line consisting only of JSX/HTML tags (one line; used to end lists). */
  private isTagOnlyLine(rest: string): boolean {
    if (rest[0] !== '<' && !(this.mdx && rest[0] === '{')) return false
    let p = 0
    let any = false
    while (p < rest.length) {
      while (p < rest.length && (rest[p] === ' ' || rest[p] === '\t')) p++
      if (p >= rest.length) break
      const t = scanTag(rest, p, 4000, this.mdx)
      if (!t) return false
      any = true
      p = t.end
    }
    return any
  }

  /**
   * A line starting with "<" or (MDX) "{". Returns the next line index when handled, or null when
   * the line is ordinary text (e.g. "<3", an autolink, or inline HTML continuing a paragraph).
   */
  private tagLine(i: number, chars: number): number | null {
    const first = this.lines[i]!
    const rest = first.slice(chars)
    // Gather following lines so that multi-line tags can be scanned (bounded).
    const parts = [first]
    let total = first.length
    let k = i + 1
    while (k < this.n && k < i + 80 && total < 8000) {
      parts.push(this.lines[k]!)
      total += this.lines[k]!.length + 1
      k++
    }
    const buf = parts.join('\n')
    const lineOf = (pos: number) => {
      let line = i
      let off = first.length
      let idx = 1
      while (pos > off && idx < parts.length) {
        off += 1 + parts[idx]!.length
        line++
        idx++
      }
      return line
    }

    if (rest.startsWith('<!--')) {
      this.flushPara()
      for (let j = i; j < this.n; j++) {
        const l = this.lines[j]!
        const at = j === i ? l.indexOf('-->', chars + 4) : l.indexOf('-->')
        if (at !== -1) {
          const after = l.slice(at + 3)
          if (!isBlank(after)) {
            this.lines[j] = after
            return j
          }
          return j + 1
        }
      }
      return this.n
    }

    const isJsx = /^<\/?(?:[A-Z]|[a-z][\w-]*\.[\w.]|>)/.test(rest) || rest[0] === '{'
    if (!isJsx) {
      const tag = scanTag(buf, chars, 4000, false)
      if (!tag || tag.kind === 'expr') return null
      const name = tag.name.toLowerCase()
      const rawType = RAW_HTML.exec(rest)
      if (this.para.length > 0 && !rawType && !HTML_BLOCK_TAGS.has(name)) return null
      this.flushPara()
      return this.htmlBlock(i, rawType ? rawType[1]!.toLowerCase() : null)
    }

    // JSX: a run of tags; structural when nothing but tags (and whitespace) is on the line(s).
    const tags: ScannedTag[] = []
    let p = chars
    let mixed = false
    for (;;) {
      while (p < buf.length && (buf[p] === ' ' || buf[p] === '\t')) p++
      if (p >= buf.length || buf[p] === '\n') break
      if (buf[p] === '<' || (this.mdx && buf[p] === '{')) {
        const t = scanTag(buf, p, 4000, this.mdx)
        if (t) {
          tags.push(t)
          p = t.end
          continue
        }
      }
      mixed = true
      break
    }
    if (tags.length === 0) return null
    const endLine = lineOf(p)
    if (mixed) {
      // Text follows the tags: the whole thing is paragraph text with inline JSX.
      if (endLine === i) return null
      for (let j = i; j <= endLine; j++) this.para.push(this.lines[j]!.trimStart())
      return endLine + 1
    }
    for (const t of tags) this.structuralTag(t)
    return endLine + 1
  }

  private structuralTag(t: ScannedTag): void {
    if (t.kind === 'comment' || t.kind === 'expr' || t.kind === 'decl') return
    const isComponent = /^[A-Z]/.test(t.name) || t.name.includes('.') || t.name === ''
    if (t.kind !== 'self' && !isComponent) return // stray HTML tags between components
    if (t.kind === 'open') {
      this.flushPara()
      this.pushContainer(t.name || 'Fragment', t.attrs, false)
      return
    }
    if (t.kind === 'close') {
      this.flushPara()
      this.popContainer(t.name || 'Fragment')
      return
    }
    // self-closing
    if (!isComponent) {
      if (t.name.toLowerCase() === 'img' && typeof t.attrs.alt === 'string' && t.attrs.alt.trim()) {
        this.flushPara()
        this.emit('paragraph', t.attrs.alt.trim())
      }
      return
    }
    const label = componentLabel(t.name, t.attrs)
    if (label && isTitledLabel(t.name, t.attrs)) {
      this.flushPara()
      this.emit('paragraph', label)
    } else if (t.name === 'Image' && typeof t.attrs.alt === 'string' && t.attrs.alt.trim()) {
      this.flushPara()
      this.emit('paragraph', t.attrs.alt.trim())
    }
  }

  /** Raw HTML block: CommonMark semantics (until a blank line; <pre>/<script>/<style> until their end tag). */
  private htmlBlock(i: number, rawTag: string | null): number {
    const raw: string[] = []
    let j = i
    if (rawTag) {
      const close = new RegExp(`</${rawTag}\\s*>`, 'i')
      while (j < this.n) {
        raw.push(this.lines[j]!)
        if (close.test(this.lines[j]!)) {
          j++
          break
        }
        j++
      }
    } else {
      while (j < this.n) {
        const l = this.lines[j]!
        if (isBlank(l)) break
        if (j > i && this.mdx) {
          const t = l.trimStart()
          if (/^<\/?[A-Z]/.test(t) || FENCE.test(t) || ATX.test(t)) break
        }
        raw.push(l)
        j++
      }
    }
    this.flushPendingAsParagraphs()
    walkHtml(raw.join('\n'), this.b, { recognizeSelfClosing: true })
    return j
  }

  // ---- containers ---------------------------------------------------------------------------

  private pushContainer(name: string, attrs: Record<string, AttrValue>, fromInline: boolean): void {
    // Real documents nest components a few levels deep; beyond this, further tags are transparent.
    if (this.containers.length >= MAX_CONTAINER_DEPTH) return
    const label = componentLabel(name, attrs)
    const titled = isTitledLabel(name, attrs)
    // A tab's content is its own section, with the tab title at the end of the breadcrumb.
    const tab = TAB_COMPONENTS.has(name) && titled && !fromInline
    this.containers.push({ name, pending: fromInline || tab ? null : label, titled })
    this.b.pushContext(titled && label ? label : '', tab)
  }

  private popContainer(name: string): void {
    let k = this.containers.length - 1
    while (k >= 0 && this.containers[k]!.name !== name) k--
    if (k === -1) return
    while (this.containers.length > k) this.popContainerAt(this.containers.length - 1)
  }

  private popContainerAt(k: number): void {
    const c = this.containers[k]!
    this.containers.length = k
    this.b.popContext()
    // A titled component with no content (a <Card title> without text) still says something.
    if (c.pending !== null && c.titled) this.emit('paragraph', c.pending)
  }

  private applyEvents(events: TagEvent[]): void {
    for (const e of events) {
      if (e.type === 'open') this.pushContainer(e.name, e.attrs, true)
      else this.popContainer(e.name)
    }
  }

  private flushPendingAsParagraphs(): void {
    for (const c of this.containers) {
      if (c.pending !== null) {
        const l = c.pending
        c.pending = null
        if (c.titled) this.b.add('paragraph', l)
      }
    }
  }

  // ---- output -------------------------------------------------------------------------------

  private flushPara(): void {
    if (this.para.length === 0) return
    const r = reduceInline(this.para.join('\n'), { mdx: this.mdx })
    this.para = []
    if (r.text) this.emit('paragraph', r.text)
    this.applyEvents(r.events)
  }

  /** Add a block, prefixed by the labels of containers it is the first content of. */
  private emit(kind: BlockKind, text: string): void {
    if (!text.trim()) return
    const labels: string[] = []
    for (const c of this.containers) {
      if (c.pending !== null) {
        labels.push(c.pending)
        c.pending = null
      }
    }
    let t = text
    if (labels.length > 0) {
      const last = labels.pop()!
      for (const l of labels) this.b.add('paragraph', l)
      if (kind === 'paragraph' || kind === 'quote') t = joinLabel(last, t)
      else this.b.add('paragraph', last)
    }
    this.b.add(kind, t)
  }
}

export function parseMarkdownString(text: string, relativePath: string): ParsedDocument {
  const mdx = /\.mdx$/i.test(relativePath)
  const normalized = text.replace(/\r\n?/g, '\n')
  const { meta, body } = splitFrontMatter(normalized)
  const p = new MarkdownParser(body, mdx)
  p.run()
  const fmTitle = typeof meta.title === 'string' || typeof meta.title === 'number' ? String(meta.title).trim() : ''
  return { title: fmTitle || p.b.firstH1, meta, sections: p.b.finish() }
}

export const parseMarkdown: ParserFn = guarded('Markdown', (bytes, relativePath) =>
  parseMarkdownString(checkText(bytes), relativePath),
)
