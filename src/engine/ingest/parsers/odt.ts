import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { renderTable } from './html'
import { odfMeta, openOffice, readTreePart, type OfficeKind } from './office'
import { elements, findAll, findFirst, type XmlNode, xmlTree } from './xml'

/**
 * ODT (LibreOffice Writer, OpenDocument text): content.xml's body in order. text:h with its
 * outline level starts a section (DocBuilder's heading rules), text:p is a paragraph, text:list a
 * list block (nested lists indented), table:table a Markdown table whose first row is the header;
 * text:s, text:tab and text:line-break are spaces. Footnotes and endnotes follow the paragraph
 * that cites them, as paragraphs. The title is meta.xml's dc:title, else the first level-1 heading.
 *
 * Not read: pictures, comments (office:annotation), tracked deletions, headers and footers
 * (they live in styles.xml), numbering formats other than 1, 2, 3 (a, i, A are written as numbers).
 */

export const ODT_KIND: OfficeKind = { label: 'ODT', main: 'content.xml', mimetype: 'application/vnd.oasis.opendocument.text' }

/** Elements whose content is not the document's text. */
const SKIP = new Set([
  'office:annotation',
  'office:annotation-end',
  'text:tracked-changes',
  'text:note-citation',
  'draw:image',
  'svg:desc',
])
const SPACE = new Set(['text:s', 'text:tab', 'text:line-break'])

/** Inline text of a paragraph or heading; notes met on the way are collected into `notes`. */
function inline(node: XmlNode, notes: XmlNode[], out: string[] = []): string[] {
  for (const c of node.children) {
    if (typeof c === 'string') out.push(c)
    else if (SPACE.has(c.name)) out.push(' ')
    else if (c.name === 'text:note') {
      const body = findFirst(c, 'text:note-body')
      if (body) notes.push(body)
    } else if (!SKIP.has(c.name)) inline(c, notes, out)
  }
  return out
}

const clean = (parts: string[]) => parts.join('').replace(/\s+/g, ' ').trim()

/** List style name -> the levels (1-based) it numbers rather than bullets, from the styles of content.xml and styles.xml. */
function numberedLevels(trees: XmlNode[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  for (const tree of trees)
    for (const style of findAll(tree, 'text:list-style')) {
      const levels = new Set<number>()
      for (const l of elements(style, 'text:list-level-style-number')) levels.add(Number(l.attrs['text:level'] ?? 1))
      out.set(style.attrs['style:name'] ?? '', levels)
    }
  return out
}

class OdtReader {
  constructor(
    private readonly b: DocBuilder,
    private readonly numbered: Map<string, Set<number>>,
  ) {}

  blocks(node: XmlNode): void {
    for (const c of elements(node)) this.block(c)
  }

  private paragraph(node: XmlNode): void {
    const notes: XmlNode[] = []
    const text = clean(inline(node, notes))
    this.b.add('paragraph', text)
    for (const n of notes) this.blocks(n)
  }

  private block(node: XmlNode): void {
    switch (node.name) {
      case 'text:h': {
        const notes: XmlNode[] = []
        const level = Number(node.attrs['text:outline-level'] ?? 1)
        this.b.heading(Number.isFinite(level) && level >= 1 ? level : 1, clean(inline(node, notes)))
        for (const n of notes) this.blocks(n)
        return
      }
      case 'text:p':
        return this.paragraph(node)
      case 'text:list': {
        // ODF lets a list item hold headings (some writers number headings so): they are read as headings.
        if (findFirst(node, 'text:h')) {
          for (const item of elements(node)) this.blocks(item)
          return
        }
        const lines: string[] = []
        const after: XmlNode[] = []
        this.list(node, 0, node.attrs['text:style-name'] ?? '', lines, after)
        this.b.add('list', lines.join('\n'))
        for (const n of after) this.block(n)
        return
      }
      case 'table:table':
        return this.table(node)
      default:
        // Sections, indexes (a table of contents), frames and text boxes: their paragraphs in order.
        if (!SKIP.has(node.name)) this.blocks(node)
    }
  }

  /** A list's items as "- " (or "1. ") lines; tables inside items are emitted after the list (a list block holds lines). */
  private list(node: XmlNode, depth: number, style: string, lines: string[], after: XmlNode[]): void {
    // A nested list keeps its outer list's style unless it names its own; numbers are the style's, not the text's.
    const own = node.attrs['text:style-name'] ?? style
    const numbered = this.numbered.get(own)?.has(depth + 1) ?? false
    let n = 0
    for (const item of elements(node)) {
      if (item.name !== 'text:list-item' && item.name !== 'text:list-header') continue
      const start = Number(item.attrs['text:start-value'])
      n = Number.isInteger(start) && start > 0 ? start : n + 1
      let first = true
      for (const c of elements(item)) {
        if (c.name === 'text:list') this.list(c, depth + 1, own, lines, after)
        else if (c.name === 'text:p' || c.name === 'text:h') {
          const notes: XmlNode[] = []
          const text = clean(inline(c, notes))
          after.push(...notes.flatMap((x) => elements(x)))
          if (!text) continue
          const marker = first ? (numbered && item.name === 'text:list-item' ? `${n}. ` : '- ') : '  '
          lines.push(`${'  '.repeat(depth)}${marker}${text}`)
          first = false
        } else after.push(c)
      }
    }
  }

  private table(node: XmlNode): void {
    const rows: string[][] = []
    const rowsOf = (n: XmlNode) => {
      for (const c of elements(n)) {
        if (c.name === 'table:table-row') rows.push(this.row(c))
        else if (/^table:table-(header-rows|rows|row-group)$/.test(c.name)) rowsOf(c)
      }
    }
    rowsOf(node)
    this.b.add('table', renderTable(rows))
  }

  private row(node: XmlNode): string[] {
    const cells: string[] = []
    for (const c of elements(node)) {
      if (c.name !== 'table:table-cell' && c.name !== 'table:covered-table-cell') continue
      const parts: string[] = []
      const notes: XmlNode[] = []
      for (const p of elements(c)) parts.push(' ', clean(inline(p, notes)))
      // A text table's repeated cells are few (they are not a spreadsheet's empty tail); still capped.
      const n = Math.min(64, Math.max(1, Number(c.attrs['table:number-columns-repeated'] ?? 1) || 1))
      for (let i = 0; i < n; i++) cells.push(clean(parts))
    }
    return cells
  }
}

/** Reads an ODT; shared by the parser and the source viewer. */
export const parseOdt: ParserFn = guarded('ODT', async (bytes) => {
  const zip = await openOffice(bytes, ODT_KIND)
  const xml = await readTreePart(zip, 'content.xml', 'ODT')
  if (xml === null) throw new ParseError('file is not a valid ODT (no content.xml)')
  const content = xmlTree(xml)
  const body = findFirst(content, 'office:text')
  if (!body) throw new ParseError('file is not a valid ODT (its content has no text body)')
  const styles = await readTreePart(zip, 'styles.xml', 'ODT')
  const b = new DocBuilder()
  new OdtReader(b, numberedLevels(styles ? [content, xmlTree(styles)] : [content])).blocks(body)
  const meta: Record<string, unknown> = await odfMeta(zip, 'ODT')
  const title = (typeof meta.title === 'string' ? meta.title : null) ?? b.firstH1
  const doc: ParsedDocument = { title, meta, sections: b.finish() }
  return doc
})
