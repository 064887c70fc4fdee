import type { Blockquote, List, PhrasingContent, RootContent } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { frontmatter } from 'micromark-extension-frontmatter'
import { gfm } from 'micromark-extension-gfm'
import { parse as parseToml } from 'smol-toml'
import { isMap, isScalar, parseDocument } from 'yaml'
import type { BlockKind, ParsedDocument, ParserFn } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { renderTable, walkHtml } from './html'
import { componentLabel, isTitledLabel, joinLabel, phrasingText, type InlineResult, type TagEvent } from './inline'
import { PLACEHOLDER, isPlaceholderOnly, prepareSource, restoreTags, type JsxTag } from './mdx-lenient'
import type { AttrValue } from './mdx-syntax'
import { checkText } from './textcheck'

/**
 * Markdown (CommonMark + GFM + YAML or TOML front matter, read by mdast-util-from-markdown) and MDX (the
 * same, after the lenient rewrite in mdx-lenient.ts) to sections and blocks. This file walks the
 * tree: headings start sections, lists become "- item" lines, tables Markdown rows, raw HTML goes
 * through the HTML walker, and components become containers. Mintlify components read well: a
 * <Tab title="Python"> adds "Python" to the breadcrumb of headings inside it, <Note> prefixes
 * "Note:", a <Card title> or <Accordion title> prefixes its title, <Tooltip tip> appends the tip.
 */

const MAX_CONTAINER_DEPTH = 64
/** Components whose title starts a section of its own (alternatives such as language tabs). */
const TAB_COMPONENTS = new Set(['Tab'])
const ALERT = /^\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*(?:\n|$)/i

interface Container {
  name: string
  /** Label not yet shown (prefixes the first block inside), null once used. */
  pending: string | null
  titled: boolean
}

/** YAML front matter to metadata. Invalid YAML is ignored (the body still parses). */
function frontMatter(src: string): Record<string, unknown> {
  let meta: Record<string, unknown> = {}
  try {
    const doc = parseDocument(src, { uniqueKeys: false, prettyErrors: false })
    if (doc.errors.length === 0 && isMap(doc.contents)) {
      const js: unknown = doc.toJS({ maxAliasCount: 100 })
      if (js && typeof js === 'object' && !Array.isArray(js)) meta = { ...js }
      // `version: 1.10` is the number 1.1 to YAML; keep what the author wrote.
      const v = doc.get('version', true)
      if (isScalar(v) && typeof v.value !== 'string' && v.value !== null && v.range) {
        meta.version = src.slice(v.range[0], v.range[1]).trim()
      }
    }
  } catch {
    meta = {}
  }
  return meta
}

/**
 * TOML front matter (`+++` fences: Hugo, Zola) to metadata. Invalid TOML is ignored, as YAML is.
 * `version = 1.10` is the float 1.1 to TOML; keep what the author wrote.
 */
function tomlFrontMatter(src: string): Record<string, unknown> {
  try {
    // Dates and times come back as Date objects; as JSON they are the text the author wrote.
    const meta = JSON.parse(JSON.stringify(parseToml(src))) as Record<string, unknown>
    const raw = /^[ \t]*version[ \t]*=[ \t]*([0-9][^\s#,]*)/m.exec(src)
    if (raw && typeof meta.version === 'number') meta.version = raw[1]!
    return meta
  } catch {
    return {}
  }
}

class MarkdownWalker {
  readonly b = new DocBuilder()
  private readonly containers: Container[] = []
  /** List lines not yet emitted: adjacent lists (even of different kinds) read as one block. */
  private listLines: string[] = []

  constructor(private readonly tags: readonly JsxTag[]) {}

  flow(nodes: readonly RootContent[]): void {
    for (const n of nodes) this.block(n)
  }

  finish(): void {
    this.flushList()
    while (this.containers.length > 0) this.popContainerAt(this.containers.length - 1)
  }

  private inline(nodes: readonly PhrasingContent[]): InlineResult {
    return phrasingText(nodes, this.tags)
  }

  private block(n: RootContent): void {
    switch (n.type) {
      case 'heading': {
        this.flushList()
        const text = this.inline(n.children).text.replace(/[ \t]*\{#[\w:.-]+\}$/, '')
        if (!text) return
        for (const c of this.containers) c.pending = null
        this.b.heading(n.depth, text)
        return
      }
      case 'paragraph': {
        const r = this.inline(n.children)
        if (r.text) this.emit('paragraph', r.text)
        this.applyEvents(r.events)
        return
      }
      case 'code':
        this.emit('code', restoreTags(n.value, this.tags))
        return
      case 'html':
        this.html(n.value)
        return
      case 'blockquote':
        this.quote(n)
        return
      case 'list':
        this.list(n, 0)
        return
      case 'table': {
        const rows = n.children.map((row) => row.children.map((cell) => this.inline(cell.children).text))
        this.emit('table', renderTable(rows))
        return
      }
      case 'footnoteDefinition': {
        const [first, ...rest] = n.children
        const lead = first?.type === 'paragraph' ? this.inline(first.children).text : ''
        this.emit('paragraph', `[${n.label ?? n.identifier}] ${lead}`)
        this.flow(first?.type === 'paragraph' ? rest : n.children)
        return
      }
      default:
        // Definitions, thematic breaks and front matter carry no text a reader sees.
        return
    }
  }

  private html(value: string): void {
    if (isPlaceholderOnly(value)) {
      for (const m of value.matchAll(PLACEHOLDER)) {
        const tag = this.tags[Number(m[2])]
        if (tag) this.structuralTag(tag)
      }
      return
    }
    this.flushList()
    this.flushPendingAsParagraphs()
    walkHtml(restoreTags(value, this.tags), this.b, { recognizeSelfClosing: true })
  }

  /** Quotes are flattened (nested ones too, without recursion); a GitHub alert's type prefixes it. */
  private quote(q: Blockquote): void {
    let label: string | null = null
    const stack: RootContent[] = [...q.children].reverse()
    let first = true
    while (stack.length > 0) {
      const c = stack.pop()!
      if (c.type === 'blockquote') {
        for (let k = c.children.length - 1; k >= 0; k--) stack.push(c.children[k]!)
        continue
      }
      if (c.type !== 'paragraph') {
        first = false
        this.block(c)
        continue
      }
      const head = c.children[0]
      if (first && head?.type === 'text') {
        const alert = ALERT.exec(head.value)
        if (alert) {
          const a = alert[1]!.toLowerCase()
          label = a[0]!.toUpperCase() + a.slice(1)
          c.children = [{ ...head, value: head.value.slice(alert[0].length) }, ...c.children.slice(1)]
        }
      }
      first = false
      const r = this.inline(c.children)
      if (r.text) {
        this.emit('quote', label ? joinLabel(label, r.text) : r.text)
        label = null
      }
      this.applyEvents(r.events)
    }
  }

  /** A list as "- item" lines (nested lists indented); a code block or table inside splits it. */
  private list(list: List, depth: number): void {
    const indent = '  '.repeat(depth)
    let number = list.start ?? 1
    for (const item of list.children) {
      const marker = list.ordered ? `${number++}. ` : '- '
      let first = true
      const open = () => {
        if (first) this.listLines.push(`${indent}${marker}`.trimEnd())
        first = false
      }
      for (const c of item.children) {
        if (c.type === 'paragraph') {
          const r = this.inline(c.children)
          if (first) this.listLines.push(`${indent}${marker}${r.text}`.trimEnd())
          // Text opening a component inside the item (<Warning> ...) reads as that component's text.
          else if (this.containers.some((k) => k.pending !== null)) this.emit('paragraph', r.text)
          else if (r.text) this.listLines.push(`${indent}  ${r.text}`)
          first = false
          this.applyEvents(r.events)
        } else if (c.type === 'list') {
          open()
          this.list(c, depth + 1)
        } else if (c.type === 'html' && isPlaceholderOnly(c.value)) {
          this.html(c.value)
        } else {
          open()
          this.block(c)
        }
      }
      open()
    }
  }

  private structuralTag(t: JsxTag): void {
    if (t.longText !== undefined) {
      this.emit('paragraph', t.longText.replace(/\s+/g, ' '))
      return
    }
    if (t.kind === 'comment' || t.kind === 'expr' || t.kind === 'decl') return
    const isComponent = /^[A-Z]/.test(t.name) || t.name.includes('.') || t.name === ''
    if (t.kind !== 'self' && !isComponent) return // stray HTML tags between components
    if (t.kind === 'open') {
      this.pushContainer(t.name || 'Fragment', t.attrs, false)
      return
    }
    if (t.kind === 'close') {
      this.popContainer(t.name || 'Fragment')
      return
    }
    const alt = typeof t.attrs.alt === 'string' ? t.attrs.alt.trim() : ''
    if (!isComponent) {
      if (t.name.toLowerCase() === 'img' && alt) this.emit('paragraph', alt)
      return
    }
    const label = componentLabel(t.name, t.attrs)
    if (label && isTitledLabel(t.name, t.attrs)) this.emit('paragraph', label)
    else if (t.name === 'Image' && alt) this.emit('paragraph', alt)
  }

  // ---- containers ---------------------------------------------------------------------------

  private pushContainer(name: string, attrs: Record<string, AttrValue>, fromInline: boolean): void {
    // Real documents nest components a few levels deep; beyond this, further tags are transparent.
    if (this.containers.length >= MAX_CONTAINER_DEPTH) return
    this.flushList()
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
    this.flushList()
    while (this.containers.length > k) this.popContainerAt(this.containers.length - 1)
  }

  private popContainerAt(k: number): void {
    const c = this.containers[k]!
    this.containers.length = k
    this.b.popContext()
    // A titled component with no content (a <Card title> without text) still says something.
    if (c.pending !== null && c.titled) this.emit('paragraph', c.pending)
  }

  private applyEvents(events: readonly TagEvent[]): void {
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

  private flushList(): void {
    if (this.listLines.length === 0) return
    const text = this.listLines.join('\n')
    this.listLines = []
    this.emit('list', text)
  }

  /** Add a block, prefixed by the labels of containers it is the first content of. */
  private emit(kind: BlockKind, text: string): void {
    if (kind !== 'list') this.flushList()
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
  const { source, tags } = prepareSource(text.replace(/\r\n?/g, '\n'), mdx)
  const tree = fromMarkdown(source, {
    // MDX has no indented code: indentation there is layout (content inside components).
    extensions: [gfm(), frontmatter(['yaml', 'toml']), ...(mdx ? [{ disable: { null: ['codeIndented'] } }] : [])],
    mdastExtensions: [gfmFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml'])],
  })
  // mdast's types know YAML front matter only; TOML comes out as a node of the same shape.
  const first = tree.children[0] as { type: string; value?: string } | undefined
  const fm = first?.value ?? ''
  const meta = first?.type === 'yaml' ? frontMatter(fm) : first?.type === 'toml' ? tomlFrontMatter(fm) : {}
  const w = new MarkdownWalker(tags)
  w.flow(tree.children)
  w.finish()
  const fmTitle = typeof meta.title === 'string' || typeof meta.title === 'number' ? String(meta.title).trim() : ''
  return { title: fmTitle || w.b.firstH1, meta, sections: w.b.finish() }
}

export const parseMarkdown: ParserFn = guarded('Markdown', (bytes, relativePath) =>
  parseMarkdownString(checkText(bytes), relativePath),
)
