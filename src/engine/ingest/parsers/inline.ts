import { decodeEntityAt, literalValue, scanTag, type AttrValue, type ScannedTag } from './mdx-syntax'

/**
 * Inline Markdown/MDX to readable text: links keep their text, images their alt text, emphasis
 * markers go, code spans keep their content, HTML/JSX tags are reduced to their text (with useful
 * attribute text such as a Card's title), comments are dropped. Components opened or closed
 * without their partner in this text are reported so the block parser can track containers.
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

const PH_OPEN = '\uE000'
const PH_CLOSE = '\uE001'
const PH_RE = /\uE000([0-9a-z]+)\uE001/g
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

/** Index of the next backtick run of exactly `len` at or after `from`, using per-length run lists. */
class BacktickRuns {
  private readonly byLen = new Map<number, number[]>()
  private readonly cursor = new Map<number, number>()
  constructor(s: string) {
    const re = /`+/g
    let m: RegExpExecArray | null
    while ((m = re.exec(s))) {
      const len = m[0].length
      let arr = this.byLen.get(len)
      if (!arr) this.byLen.set(len, (arr = []))
      arr.push(m.index)
    }
  }
  next(len: number, from: number): number {
    const arr = this.byLen.get(len)
    if (!arr) return -1
    let k = this.cursor.get(len) ?? 0
    while (k < arr.length && arr[k]! < from) k++
    this.cursor.set(len, k)
    return k < arr.length ? arr[k]! : -1
  }
}

export function reduceInline(input: string, opts: { mdx: boolean }): InlineResult {
  const s = input.replace(/[\uE000-\uE002]/g, '')
  const protectedText: string[] = []
  const protect = (t: string) => {
    protectedText.push(t)
    return `${PH_OPEN}${(protectedText.length - 1).toString(36)}${PH_CLOSE}`
  }
  const out: string[] = []
  const events: TagEvent[] = []
  const open: { name: string; attrs: Record<string, AttrValue>; tip: string | null }[] = []
  let dropDepth = 0
  const runs = s.includes('`') ? new BacktickRuns(s) : null

  let i = 0
  let last = 0
  const emit = (t: string) => {
    if (dropDepth === 0) out.push(t)
  }
  const flushPlain = (to: number) => {
    if (to > last && dropDepth === 0) out.push(s.slice(last, to))
  }
  const n = s.length
  while (i < n) {
    const c = s[i]!
    if (c === '\\' && i + 1 < n && /[!-/:-@[-`{-~]/.test(s[i + 1]!)) {
      flushPlain(i)
      emit(protect(s[i + 1]!))
      i += 2
      last = i
      continue
    }
    if (c === '`' && runs) {
      let j = i
      while (j < n && s[j] === '`') j++
      const len = j - i
      const close = runs.next(len, j)
      // The closing run must be exactly len long (runs are maximal, so next() only finds whole runs).
      if (close !== -1) {
        flushPlain(i)
        let code = s.slice(j, close).replace(/\n/g, ' ')
        if (code.length >= 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1)
        emit(protect(code))
        i = close + len
        last = i
        continue
      }
      i = j
      continue
    }
    if (c === '&') {
      const d = decodeEntityAt(s, i)
      if (d) {
        flushPlain(i)
        emit(protect(d[0]))
        i = d[1]
        last = i
        continue
      }
      i++
      continue
    }
    if (c === '{' && opts.mdx) {
      const tag = s.indexOf('}', i) === -1 ? null : scanTag(s, i, 2000, true)
      if (tag) {
        flushPlain(i)
        if (tag.kind === 'expr') {
          const lit = literalValue(tag.name)
          emit(lit !== null ? protect(lit) : s.slice(tag.start, tag.end))
        }
        i = tag.end
        last = i
        continue
      }
      i++
      continue
    }
    if (c === '<') {
      // Autolinks: <https://example.com>, <mailto:x@y>, <x@y.z>
      const auto = /^<((?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)|(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+))>/.exec(s.slice(i, i + 2048))
      if (auto) {
        flushPlain(i)
        emit(protect(auto[1]!))
        i += auto[0].length
        last = i
        continue
      }
      const tag = scanTag(s, i, 4000, false)
      if (tag) {
        flushPlain(i)
        handleTag(tag)
        i = tag.end
        last = i
        continue
      }
      i++
      continue
    }
    i++
  }
  flushPlain(n)

  function handleTag(tag: ScannedTag): void {
    if (tag.kind === 'comment' || tag.kind === 'decl' || tag.kind === 'expr') return
    const name = tag.name
    const lower = name.toLowerCase()
    if (
      tag.kind === 'self' ||
      (tag.kind === 'open' &&
        /^(br|hr|img|input|meta|link|wbr|area|base|col|source|track|embed|param)$/.test(lower) &&
        !isComponent(name))
    ) {
      if (lower === 'br' || lower === 'hr') emit(SOFT)
      else if (lower === 'img' || name === 'Image') {
        const alt = attrString(tag.attrs.alt)
        if (alt) emit(`${SOFT}${protect(alt)}${SOFT}`)
      } else if (isComponent(name)) {
        const label = componentLabel(name, tag.attrs)
        if (label && !ADMONITIONS.has(name)) emit(`${SOFT}${protect(label)}${SOFT}`)
        else emit(SOFT)
      }
      return
    }
    if (tag.kind === 'open') {
      const entry = { name, attrs: tag.attrs, tip: null as string | null }
      if (DROP_CONTENT.has(name) || DROP_CONTENT.has(lower)) {
        dropDepth++
        open.push(entry)
        return
      }
      if (name === 'Tooltip') {
        entry.tip = attrString(tag.attrs.tip) ?? attrString(tag.attrs.content)
      } else if (isComponent(name)) {
        const label = componentLabel(name, tag.attrs)
        emit(label ? `${SOFT}${protect(joinLabel(label, ''))}` : SOFT)
      } else if (!INLINE_HTML.has(lower)) emit(SOFT)
      open.push(entry)
      return
    }
    // close
    // Look a bounded distance down the open tags (keeps malformed input from going quadratic).
    let k = open.length - 1
    const floor = Math.max(0, open.length - 64)
    while (k >= floor && open[k]!.name !== name) k--
    if (k < floor) k = -1
    if (k === -1) {
      if (isComponent(name)) events.push({ type: 'close', name, attrs: {} })
      else if (!INLINE_HTML.has(lower)) emit(SOFT)
      return
    }
    while (open.length > k) {
      const e = open.pop()!
      if (DROP_CONTENT.has(e.name) || DROP_CONTENT.has(e.name.toLowerCase())) dropDepth--
      else if (e.tip) emit(` (${protect(e.tip)})`)
      else if (isComponent(e.name) || !INLINE_HTML.has(e.name.toLowerCase())) emit(SOFT)
    }
  }

  for (const e of open) if (isComponent(e.name)) events.push({ type: 'open', name: e.name, attrs: e.attrs })

  let text = out.join('').replace(/[\r\n]+/g, ' ')
  text = reduceMarkdownInline(text)
  text = text
    .replace(/[ \t\r\n\u00a0\uE002]*\uE002[ \t\r\n\u00a0\uE002]*(?=[,.;:!?)\]]|$)/g, '')
    .replace(/^[ \t\r\n\u00a0\uE002]+/, '')
    .replace(/[ \t\r\n\u00a0\uE002]+/g, ' ')
  text = text.replace(PH_RE, (_, k: string) => protectedText[Number.parseInt(k, 36)] ?? '')
  return { text: text.replace(/[ \t]+/g, ' ').trim(), events }
}

/** Links, images, emphasis and footnote references (on text whose code spans and escapes are already protected). */
function reduceMarkdownInline(t: string): string {
  let s = t
  if (s.includes('[')) {
    // Images first (an image may sit inside a link): ![alt](src "title"), ![alt][ref]
    s = s.replace(/!\[([^[\]]{0,1000})\]\((?:[^()\s]|\([^()\s]*\)){0,2000}(?:\s+(?:"[^"]{0,500}"|'[^']{0,500}'))?\s*\)/g, '$1')
    s = s.replace(/!\[([^[\]]{0,1000})\]\[[^[\]]{0,200}\]/g, '$1')
    // Links: [text](url "title"), [text](<url>), [text][ref], [text][]
    s = s.replace(
      /\[([^[\]]{0,2000})\]\((?:<[^<>]{0,2000}>|(?:[^()\s]|\([^()\s]*\)){0,2000})(?:\s+(?:"[^"]{0,500}"|'[^']{0,500}'))?\s*\)/g,
      '$1',
    )
    s = s.replace(/\[([^[\]]{1,2000})\]\[[^[\]]{0,200}\]/g, '$1')
    // Footnote references [^1] -> [1]
    s = s.replace(/\[\^([^\]\s]{1,50})\]/g, '[$1]')
  }
  if (s.includes('*') || s.includes('_') || s.includes('~')) {
    s = s.replace(/(\*\*\*|\*\*|~~)(?=\S)([^\n]{0,300}?\S)\1/g, '$2')
    s = s.replace(/(^|[^\w\\])(___|__)(?=\S)([^\n]{0,300}?\S)\2(?!\w)/g, '$1$3')
    s = s.replace(/(^|[^\w*\\])\*(?=[^\s*])([^*\n]{0,300}?[^\s*])\*(?![\w*])/g, '$1$2')
    s = s.replace(/(^|[^\w*\\])\*([^\s*])\*(?![\w*])/g, '$1$2')
    s = s.replace(/(^|[^\w\\])_(?=[^\s_])([^\n]{0,300}?[^\s_])_(?!\w)/g, '$1$2')
  }
  return s
}
