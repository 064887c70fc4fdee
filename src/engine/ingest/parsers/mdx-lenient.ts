import { scanTag, type ScannedTag } from './mdx-syntax'

/**
 * The lenient MDX layer. A strict MDX parser refuses most real documentation pages (a stray `<`,
 * an unbalanced component, an expression it cannot parse), so instead of parsing JSX, the source
 * is rewritten into plain CommonMark before mdast reads it:
 *
 * - components (`<Note>`, `<Tab title="Python">`, `</Card>`, fragments) and, in MDX,
 *   `{expressions}` and `{/* comments *\/}` become placeholder tags `<docent-jsx-N>`, valid raw
 *   HTML to CommonMark, that the walker maps back to the scanned tag (name and attributes);
 * - a line holding nothing but such tags is a block of its own (blank lines around it), as MDX
 *   reads it, so a component's content is Markdown and `<Tab>` can wrap headings;
 * - `import`/`export` blocks are dropped (MDX only);
 * - fenced code is left as written; a placeholder that ends up in inline code is put back.
 *
 * Plain HTML tags are left to CommonMark (the HTML walker reads raw HTML blocks) unless they carry
 * `{expression}` attributes, which CommonMark would not accept as HTML.
 */

export interface JsxTag extends ScannedTag {
  /** The source text of the tag, to restore it inside code. */
  raw: string
  /** Set for an over-long paragraph taken out of the Markdown: its text, read as it stands. */
  longText?: string
}

export interface Prepared {
  source: string
  tags: JsxTag[]
}

export const PLACEHOLDER = /<(\/?)docent-jsx-(\d+) ?\/?>/g
const ONLY_PLACEHOLDERS = /^(?:\s*<\/?docent-jsx-\d+ ?\/?>)+\s*$/

const FENCE = /^([ \t]*)(`{3,}|~{3,})(.*)$/
const ATX = /^[ \t]*#{1,6}(?:[ \t]|$)/
const ESM =
  /^(?:import\s+(?:["']|\{|\*\s+as\s|[\w$]+\s*,|[\w$]+\s+from\s*["'])|export\s+(?:const|let|var|function|default|class|async|\{|\*)(?:\s|$|\{))/
const JSX_START = /^<\/?(?:[A-Z]|[a-z][\w-]*\.[\w.]|>)/
/** Real documents nest lists and quotes a few levels; beyond these, deeper nesting only costs time. */
const MAX_INDENT = 40
const MAX_QUOTES = 32
/**
 * A paragraph longer than this is not prose a person wrote (generated or hostile text), and
 * micromark's cost on dense markup (200 KB of "**a ") runs to seconds: it is read as plain text.
 */
const MAX_PARAGRAPH = 64 * 1024

export function isPlaceholderOnly(html: string): boolean {
  return ONLY_PLACEHOLDERS.test(html)
}

/** Put the source text of placeholders back (inside code, or raw HTML handed to the HTML walker). */
export function restoreTags(s: string, tags: readonly JsxTag[]): string {
  return s.includes('docent-jsx-') ? s.replace(PLACEHOLDER, (m, _c, i: string) => tags[Number(i)]?.raw ?? m) : s
}

function clampPrefix(line: string): string {
  const m = /^[ \t>]+/.exec(line)
  if (!m) return line
  const prefix = m[0]
  let quotes = 0
  let cols = 0
  for (const c of prefix) {
    if (c === '>') quotes++
    else cols += c === '\t' ? 4 - (cols % 4) : 1
  }
  if (quotes <= MAX_QUOTES && cols <= MAX_INDENT) return line
  if (quotes === 0) return ' '.repeat(MAX_INDENT) + line.slice(prefix.length)
  return '>'.repeat(Math.min(quotes, MAX_QUOTES)) + ' ' + line.slice(prefix.length)
}

export function prepareSource(text: string, mdx: boolean): Prepared {
  return new SourceRewriter(text, mdx).rewrite()
}

/** One pass over the source, a line (or a fenced block, or a run of lines) at a time. */
class SourceRewriter {
  private readonly lines: string[]
  private readonly n: number
  /** The offset in the text of each line's first character. */
  private readonly starts: number[] = []
  private readonly tags: JsxTag[] = []
  private readonly out: string[] = []
  /** A `{` after the last `}` opens no expression (MDX only; -1 otherwise). */
  private readonly lastBrace: number
  /** The line being read. */
  private i = 0
  /** Lines before this one were measured already (each against MAX_PARAGRAPH once). */
  private measured = 0

  constructor(
    private readonly text: string,
    private readonly mdx: boolean,
  ) {
    this.lines = text.split('\n')
    this.n = this.lines.length
    for (let k = 0, at = 0; k < this.n; k++) {
      this.starts.push(at)
      at += this.lines[k]!.length + 1
    }
    this.lastBrace = mdx ? text.lastIndexOf('}') : -1
  }

  rewrite(): Prepared {
    this.passFrontMatter()
    while (this.i < this.n) this.rewriteLine()
    return { source: this.out.join('\n'), tags: this.tags }
  }

  private rewriteLine(): void {
    const { lines, mdx, i } = this
    const line = clampPrefix(lines[i]!)
    if (this.passFence(line) || this.takeLongParagraph()) return
    const body = line.trimStart()
    const indent = line.slice(0, line.length - body.length)
    const bodyAt = this.starts[i]! + lines[i]!.length - body.length
    if (mdx && indent === '' && this.prevLine().trim() === '' && ESM.test(body)) {
      while (this.i < this.n && lines[this.i]!.trim() !== '') this.i++
      return
    }
    if (mdx && this.afterHtml() && ATX.test(line)) this.out.push('')
    if (body[0] === '{' ? mdx : body[0] === '<' && JSX_START.test(body)) {
      if (this.passTagBlock(indent, bodyAt)) return
      // A component starting a line right after raw HTML is not part of that HTML block.
      if (mdx && /^\s*<[a-z]/.test(this.prevLine())) this.out.push('')
    }
    this.rewriteInline(indent, bodyAt)
  }

  /**
   * Front matter passes through (mdast reads it), and counts as a blank line before ESM. It ends
   * at the first `---` or `...` line (both end a YAML document); micromark's front matter knows
   * only `---`, and would read on to the next `---` of the file (a thematic break, hundreds of
   * lines down in the CommonMark spec's own source), so a `...` closer is handed on as `---`.
   */
  private passFrontMatter(): void {
    const { lines } = this
    if (lines[0] !== '---') return
    const end = lines.findIndex((l, k) => k > 0 && /^(?:---|\.\.\.)[ \t]*$/.test(l))
    if (end > 0) {
      this.out.push(...lines.slice(0, end), '---', '')
      this.i = end + 1
    }
  }

  /** A fenced code block, copied as written up to its closing fence; false when `line` opens none. */
  private passFence(line: string): boolean {
    const fm = FENCE.exec(line)
    if (!fm || (fm[2]![0] === '`' && fm[3]!.includes('`'))) return false
    // A fence right after raw HTML ends the HTML block (MDX reads it as code, not as HTML text).
    if (this.mdx && this.afterHtml()) this.out.push('')
    const fence = fm[2]!
    const close = new RegExp(`^[ \\t]*\\${fence[0]}{${fence.length},}[ \\t]*$`)
    this.out.push(line)
    for (this.i++; this.i < this.n;) {
      this.out.push(this.lines[this.i]!)
      if (close.test(this.lines[this.i++]!)) break
    }
    return true
  }

  /**
   * Each line is measured once, as part of the run of non-blank lines it starts or belongs to; a
   * run over MAX_PARAGRAPH becomes one placeholder holding its text. False when the run is shorter.
   */
  private takeLongParagraph(): boolean {
    const { lines, n, i } = this
    if (i < this.measured || lines[i]!.trimStart().startsWith('|')) return false
    let end = i
    let size = 0
    const inRun = (k: number) => k < n && lines[k]!.trim() !== '' && !FENCE.test(lines[k]!)
    while (size <= MAX_PARAGRAPH && inRun(end)) size += lines[end++]!.length + 1
    if (size <= MAX_PARAGRAPH) {
      this.measured = Math.max(end, i + 1)
      return false
    }
    while (inRun(end)) end++
    const raw = lines.slice(i, end).join('\n')
    this.tags.push({ kind: 'self', name: '', attrs: {}, start: 0, end: 0, raw, longText: raw })
    if (this.prevLine().trim() !== '') this.out.push('')
    this.out.push(`<docent-jsx-${this.tags.length - 1} />`, '')
    this.i = end
    return true
  }

  /** A run of tags with nothing after it on its (last) line is a block of its own. False (and no tag kept) otherwise. */
  private passTagBlock(indent: string, bodyAt: number): boolean {
    const { text } = this
    const run: string[] = []
    let p = bodyAt
    for (;;) {
      while (text[p] === ' ' || text[p] === '\t') p++
      if (p >= text.length || text[p] === '\n') {
        if (run.length === 0) return false
        if (this.prevLine().trim() !== '') this.out.push('')
        this.out.push(indent + run.join(''), '')
        this.i = this.lineAt(this.i, p) + 1
        return true
      }
      const t = this.scanAt(p, 4000)
      if (!t) break
      run.push(this.placeholder(t))
      p = t.end
    }
    this.tags.length -= run.length
    return false
  }

  /** Rewrite tags and expressions within the line (a tag may continue on later lines). */
  private rewriteInline(indent: string, bodyAt: number): void {
    const { text } = this
    let cur = indent
    let p = bodyAt
    let last = p
    while (p < text.length && text[p] !== '\n') {
      const c = text[p]
      if (c === '\\') {
        p += text[p + 1] === '\n' ? 1 : 2
        continue
      }
      if (c === '<' || c === '{') {
        const t = this.scanAt(p, c === '{' ? 2000 : 4000)
        if (t) {
          cur += text.slice(last, p) + this.placeholder(t)
          p = last = t.end
          continue
        }
      }
      p++
    }
    this.out.push(cur + text.slice(last, Math.min(p, text.length)))
    this.i = this.lineAt(this.i, p) + 1
  }

  private placeholder(t: ScannedTag): string {
    this.tags.push({ ...t, raw: this.text.slice(t.start, t.end) })
    const k = this.tags.length - 1
    if (t.kind === 'close') return `</docent-jsx-${k}>`
    return t.kind === 'open' ? `<docent-jsx-${k}>` : `<docent-jsx-${k} />`
  }

  /** A tag or expression at text[p] worth a placeholder, or null. Scans are bounded (limit). */
  private scanAt(p: number, limit: number): ScannedTag | null {
    const { text, mdx } = this
    const c = text[p]
    // "{{{{" with no closing brace after it must not cost a scan per brace.
    if (c === '{') return mdx && p < this.lastBrace ? scanTag(text, p, limit, true) : null
    if (c !== '<') return null
    if (JSX_START.test(text.slice(p, p + 40))) return scanTag(text, p, limit, mdx)
    // A plain HTML tag is left alone unless it carries {expression} attributes CommonMark would refuse.
    if (!mdx) return null
    const t = scanTag(text, p, limit, true)
    return t && text.slice(t.start, t.end).includes('{') ? t : null
  }

  /** Index of the line holding text[pos], from line i on. */
  private lineAt(i: number, pos: number): number {
    let k = i
    while (k + 1 < this.n && this.starts[k + 1]! <= pos) k++
    return k
  }

  private prevLine(): string {
    return this.out[this.out.length - 1] ?? ''
  }

  private afterHtml(): boolean {
    return /^\s*</.test(this.prevLine())
  }
}
