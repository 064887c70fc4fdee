import type { BlockKind, ParsedBlock, ParsedSection } from '../types'

interface HeadingEntry {
  level: number
  text: string
  /** Container labels (e.g. MDX `<Tab title="Python">`) open when this heading was seen. */
  ctx: readonly string[]
}

/**
 * Collects headings and blocks into sections. Shared by every parser so that the breadcrumb rules
 * are the same everywhere: a heading of level N closes every open heading of level >= N.
 *
 * Containers ("contexts") model MDX components such as `<Tab title="Python">`: a heading inside a
 * tab gets the tab title in its breadcrumb (["Python", "Set up your environment"]), and headings
 * opened inside a container end when the container closes.
 */
export class DocBuilder {
  readonly sections: ParsedSection[] = []
  private readonly stack: HeadingEntry[] = []
  private ctx: string[] = []
  /** Per open context: whether opening it started a section (which must end when it closes). */
  private ctxSections: boolean[] = []
  private current: ParsedSection | null = null
  /** Text of the first level-1 heading, a title fallback. */
  firstH1: string | null = null

  heading(level: number, rawText: string): void {
    const text = rawText.replace(/\s+/g, ' ').trim()
    if (!text) return
    const lvl = Math.min(6, Math.max(1, Math.round(level)))
    while (this.stack.length > 0 && this.stack[this.stack.length - 1]!.level >= lvl) this.stack.pop()
    this.stack.push({ level: lvl, text, ctx: this.ctx })
    if (lvl === 1 && this.firstH1 === null) this.firstH1 = text
    this.startSection()
  }

  add(kind: BlockKind, text: string, page?: number): void {
    const t = kind === 'code' ? text.replace(/^\s*\n/, '').replace(/\s+$/, '') : text.trim()
    if (!t) return
    if (this.current === null) this.startSection()
    const block: ParsedBlock = page === undefined ? { kind, text: t } : { kind, text: t, page }
    this.current!.blocks.push(block)
  }

  /**
   * Enter a labelled container (label may be empty for an unlabelled one). With startSection, the
   * container's content gets its own section whose breadcrumb ends with the label (a tab's content
   * is an alternative to its siblings', not a continuation of the text before it).
   */
  pushContext(label: string, startSection = false): void {
    this.ctx = [...this.ctx, label]
    const starts = startSection && label !== ''
    this.ctxSections.push(starts)
    if (starts) this.startSection()
  }

  /** Leave the innermost container; headings opened inside it are closed. */
  popContext(): void {
    if (this.ctx.length === 0) return
    const depth = this.ctx.length - 1
    const outer = this.ctx.slice(0, depth)
    let popped = false
    while (this.stack.length > 0 && this.stack[this.stack.length - 1]!.ctx.length > depth) {
      this.stack.pop()
      popped = true
    }
    this.ctx = outer
    const started = this.ctxSections.pop() ?? false
    if (popped || started) this.startSection()
  }

  get contextDepth(): number {
    return this.ctx.length
  }

  private breadcrumb(): string[] {
    const out: string[] = []
    let prev: readonly string[] = []
    for (const h of this.stack) {
      let common = 0
      while (common < prev.length && common < h.ctx.length && prev[common] === h.ctx[common]) common++
      for (let i = common; i < h.ctx.length; i++) {
        const label = h.ctx[i]!
        if (label) out.push(label)
      }
      out.push(h.text)
      prev = h.ctx
    }
    // Labels of containers opened after the last heading (e.g. a tab's content before any heading in it).
    let common = 0
    while (common < prev.length && common < this.ctx.length && prev[common] === this.ctx[common]) common++
    for (let i = common; i < this.ctx.length; i++) if (this.ctx[i]) out.push(this.ctx[i]!)
    return out
  }

  private startSection(): void {
    const top = this.stack[this.stack.length - 1]
    this.current = { headings: this.breadcrumb(), level: top ? top.level : 0, blocks: [] }
    this.sections.push(this.current)
  }

  /** Sections that hold at least one block (a heading directly followed by a sub-heading adds nothing a chunk could carry). */
  finish(): ParsedSection[] {
    return this.sections.filter((s) => s.blocks.length > 0)
  }
}

/** Collapse runs of whitespace (not newlines when keepNewlines) and trim. */
export function collapseSpaces(s: string, keepNewlines = false): string {
  if (keepNewlines) {
    return s
      .replace(/[^\S\n]+/g, ' ')
      .replace(/ ?\n ?/g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  }
  return s.replace(/\s+/g, ' ').trim()
}
