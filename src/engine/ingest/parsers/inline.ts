import type { Nodes, PhrasingContent } from 'mdast'
import { PLACEHOLDER, restoreTags, type JsxTag } from './mdx-lenient'
import { literalValue, scanTag, type AttrValue, type ScannedTag } from './mdx-syntax'

/**
 * Inline content (mdast phrasing nodes) to readable text: links keep their text, images their alt
 * text, code spans their content; HTML/JSX tags are reduced to their text (with useful attribute
 * text such as a Card's title), comments are dropped. Components opened or closed without their
 * partner in this text are reported so the block walker can track containers.
 */

export interface TagEvent {
  type: 'open' | 'close'
  name: string
  attrs: Record<string, AttrValue>
}

export interface InlineResult {
  text: string
  events: TagEvent[]
}

/** Callout components whose name is worth keeping as a prefix ("Note: ..."). */
export const ADMONITIONS = new Set([
  'Note',
  'Warning',
  'Info',
  'Tip',
  'Check',
  'Danger',
  'Caution',
  'Important',
  'Callout',
  'Success',
  'Error',
  'Alert',
])

/** Components/elements whose text is never shown. */
const DROP_CONTENT = new Set(['script', 'style', 'svg', 'noscript', 'template', 'Icon', 'iframe', 'video', 'audio', 'button'])

const INLINE_HTML = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'data',
  'del',
  'dfn',
  'em',
  'i',
  'ins',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'wbr',
  'font',
  'label',
])

/** A space introduced by removing a tag: dropped before punctuation and at the ends. */
const SOFT = '\uE002'

function attrString(v: AttrValue | undefined): string | null {
  if (typeof v !== 'string') return null
  const t = v.replace(/\s+/g, ' ').trim()
  return t || null
}

/** Text a component contributes from its attributes (e.g. a Card's or Tab's title), or null. */
export function componentLabel(name: string, attrs: Record<string, AttrValue>): string | null {
  if (name === 'ParamField' || name === 'ResponseField' || name === 'Field' || name === 'RequestField') {
    const field =
      attrString(attrs.path) ??
      attrString(attrs.query) ??
      attrString(attrs.body) ??
      attrString(attrs.header) ??
      attrString(attrs.name) ??
      attrString(attrs.param)
    if (!field) return null
    const extra = [
      attrString(attrs.type),
      attrs.required === true || attrs.required === 'true' ? 'required' : null,
      attrString(attrs.default) ? `default ${attrString(attrs.default)}` : null,
    ].filter((x): x is string => !!x)
    return extra.length ? `${field} (${extra.join(', ')})` : field
  }
  const label = attrString(attrs.title) ?? attrString(attrs.label) ?? attrString(attrs.caption)
  if (ADMONITIONS.has(name)) return label ? `${name}: ${label}` : name
  return label
}

/** Whether the label came from a title-like attribute (worth a breadcrumb entry / standalone paragraph). */
export function isTitledLabel(name: string, attrs: Record<string, AttrValue>): boolean {
  return !ADMONITIONS.has(name) && componentLabel(name, attrs) !== null
}

/** "Label: text", or "Label text" when the label already ends in punctuation. */
export function joinLabel(label: string, text: string): string {
  return /[.:?!]$/.test(label) ? `${label} ${text}` : `${label}: ${text}`
}

function isComponent(name: string): boolean {
  return /^[A-Z]/.test(name) || name.includes('.')
}

const VOID_HTML = /^(br|hr|img|input|meta|link|wbr|area|base|col|source|track|embed|param)$/

/** The scanned tag behind an inline HTML node: a placeholder's component or expression, or the HTML tag itself. */
function tagOf(html: string, tags: readonly JsxTag[]): ScannedTag | null {
  const m = new RegExp(`^${PLACEHOLDER.source}$`).exec(html.trim())
  if (m) return tags[Number(m[2])] ?? null
  return scanTag(restoreTags(html, tags), 0, 4000, false)
}

export function phrasingText(nodes: readonly PhrasingContent[], tags: readonly JsxTag[]): InlineResult {
  const reader = new PhrasingReader(tags)
  // Depth-first with an explicit stack: emphasis and links can nest deeply in hostile input.
  const stack: Nodes[] = [...nodes].reverse()
  while (stack.length > 0) reader.read(stack.pop()!, stack)
  return reader.result()
}

interface OpenTag {
  name: string
  attrs: Record<string, AttrValue>
  /** A Tooltip's tip, written after its text when it closes. */
  tip: string | null
}

function dropsContent(name: string): boolean {
  return DROP_CONTENT.has(name) || DROP_CONTENT.has(name.toLowerCase())
}

/** The text of one run of phrasing nodes, and the components it leaves open or closes. */
class PhrasingReader {
  private readonly out: string[] = []
  private readonly events: TagEvent[] = []
  private readonly open: OpenTag[] = []
  /** Inside an element whose content is never shown (DROP_CONTENT) when above 0. */
  private dropDepth = 0

  constructor(private readonly tags: readonly JsxTag[]) {}

  /** Write a leaf node's text, or push a parent's children onto the stack (first child on top). */
  read(node: Nodes, stack: Nodes[]): void {
    switch (node.type) {
      case 'text':
        this.emit(node.value.replace(/[\uE000-\uE002]/g, ''))
        break
      case 'inlineCode':
        this.emit(restoreTags(node.value, this.tags))
        break
      case 'break':
        this.emit(' ')
        break
      case 'image':
      case 'imageReference':
        this.emit(node.alt ?? '')
        break
      case 'footnoteReference':
        this.emit(`[${node.label ?? node.identifier}]`)
        break
      case 'html': {
        const tag = tagOf(node.value, this.tags)
        if (tag) this.tag(tag)
        break
      }
      default:
        if ('children' in node) for (let k = node.children.length - 1; k >= 0; k--) stack.push(node.children[k]!)
    }
  }

  result(): InlineResult {
    const events = [...this.events]
    for (const e of this.open) if (isComponent(e.name)) events.push({ type: 'open', name: e.name, attrs: e.attrs })
    // A space left by a removed tag goes before punctuation and at the ends; nbsp reads as a space.
    const text = this.out
      .join('')
      .replace(/[ \t\r\n\u00a0\uE002]*\uE002[ \t\r\n\u00a0\uE002]*(?=[,.;:!?)\]]|$)/g, '')
      .replace(/^[ \t\r\n\u00a0\uE002]+/, '')
      .replace(/[ \t\r\n\u00a0\uE002]+/g, ' ')
      .trim()
    return { text, events }
  }

  private emit(t: string): void {
    if (this.dropDepth === 0) this.out.push(t)
  }

  private tag(tag: ScannedTag & { raw?: string }): void {
    if (tag.kind === 'comment' || tag.kind === 'decl') return
    if (tag.kind === 'expr') {
      // A literal ({"text"}) reads as its value; other expressions stay as written (often prose braces).
      this.emit(literalValue(tag.name) ?? tag.raw ?? '')
      return
    }
    const lower = tag.name.toLowerCase()
    if (tag.kind === 'self' || (tag.kind === 'open' && VOID_HTML.test(lower) && !isComponent(tag.name))) this.voidTag(tag)
    else if (tag.kind === 'open') this.openTag(tag)
    else this.closeTag(tag.name)
  }

  /** A tag with no content: a break, an image's alt text, or a component's label. */
  private voidTag({ name, attrs }: ScannedTag): void {
    const lower = name.toLowerCase()
    if (lower === 'br' || lower === 'hr') this.emit(SOFT)
    else if (lower === 'img' || name === 'Image') {
      const alt = attrString(attrs.alt)
      if (alt) this.emit(`${SOFT}${alt}${SOFT}`)
    } else if (isComponent(name)) {
      const label = componentLabel(name, attrs)
      this.emit(label && !ADMONITIONS.has(name) ? `${SOFT}${label}${SOFT}` : SOFT)
    }
  }

  private openTag({ name, attrs }: ScannedTag): void {
    const entry: OpenTag = { name, attrs, tip: null }
    if (dropsContent(name)) {
      this.dropDepth++
      this.open.push(entry)
      return
    }
    if (name === 'Tooltip') {
      entry.tip = attrString(attrs.tip) ?? attrString(attrs.content)
    } else if (isComponent(name)) {
      const label = componentLabel(name, attrs)
      this.emit(label ? `${SOFT}${joinLabel(label, '')}` : SOFT)
    } else if (!INLINE_HTML.has(name.toLowerCase())) this.emit(SOFT)
    this.open.push(entry)
  }

  /** Close `name` and whatever was left open inside it; a close with no open partner here is an event. */
  private closeTag(name: string): void {
    const open = this.open
    // Look a bounded distance down the open tags (keeps malformed input from going quadratic).
    let k = open.length - 1
    const floor = Math.max(0, open.length - 64)
    while (k >= floor && open[k]!.name !== name) k--
    if (k < floor) {
      if (isComponent(name)) this.events.push({ type: 'close', name, attrs: {} })
      else if (!INLINE_HTML.has(name.toLowerCase())) this.emit(SOFT)
      return
    }
    while (open.length > k) {
      const e = open.pop()!
      if (dropsContent(e.name)) this.dropDepth--
      else if (e.tip) this.emit(` (${e.tip})`)
      else if (isComponent(e.name) || !INLINE_HTML.has(e.name.toLowerCase())) this.emit(SOFT)
    }
  }
}
