import type { BlockKind, ParsedBlock, ParsedSection } from '../types'

/** Headings deeper than this (h4-h6) start sections that the chunker may pack with their neighbours. */
export const PACK_LEVEL = 3

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

  /**
   * The breadcrumb of the open headings; with `upTo`, also how many of its entries end at the
   * heading of stack index `upTo` (the packing anchor of a deep section).
   */
  private breadcrumb(upTo = -1): { crumb: string[]; prefix: number } {
    const out: string[] = []
    let prev: readonly string[] = []
    let prefix = 0
    this.stack.forEach((h, i) => {
      let common = 0
      while (common < prev.length && common < h.ctx.length && prev[common] === h.ctx[common]) common++
      for (let j = common; j < h.ctx.length; j++) {
        const label = h.ctx[j]!
        if (label) out.push(label)
      }
      out.push(h.text)
      prev = h.ctx
      if (i === upTo) prefix = out.length
    })
    // Labels of containers opened after the last heading (e.g. a tab's content before any heading in it).
    let common = 0
    while (common < prev.length && common < this.ctx.length && prev[common] === this.ctx[common]) common++
    for (let i = common; i < this.ctx.length; i++) if (this.ctx[i]) out.push(this.ctx[i]!)
    return { crumb: out, prefix }
  }

  /**
   * Stack index of the level 1-3 heading a deep (level 4-6) section is packed with, or -1: none, or
   * a container opened since (a tab's sections are alternatives, not neighbours).
   */
  private anchorIndex(): number {
    const top = this.stack[this.stack.length - 1]
    if (!top || top.level <= PACK_LEVEL) return -1
    for (let i = this.stack.length - 1; i >= 0; i--) {
      const h = this.stack[i]!
      if (!sameLabels(h.ctx, this.ctx)) return -1
      if (h.level <= PACK_LEVEL) return i
    }
    return -1
  }

  private startSection(): void {
    const top = this.stack[this.stack.length - 1]
    const anchor = this.anchorIndex()
    const { crumb, prefix } = this.breadcrumb(anchor)
    this.current = { headings: crumb, level: top ? top.level : 0, blocks: [] }
    if (anchor >= 0) this.current.anchor = prefix
    this.sections.push(this.current)
  }

  /** Sections that hold at least one block (a heading directly followed by a sub-heading adds nothing a chunk could carry). */
  finish(): ParsedSection[] {
    return this.sections.filter((s) => s.blocks.length > 0)
  }
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
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
