import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { coreProperties } from './docx'
import { guarded } from './guard'
import { renderTable } from './html'
import { openOffice, readTreePart, relationships, type OfficeKind } from './office'
import { prefixedAttr, elements, findAll, findFirst, type XmlNode, xmlTree } from './xml'
import type { ZipArchive } from './zip'

/**
 * PPTX (PowerPoint, LibreOffice Impress): the slides in presentation order (ppt/presentation.xml's
 * slide list, through its relationships, to ppt/slides/slideN.xml). Each slide is a level-1
 * section headed by its title placeholder's text, or "Slide N" when it has none; its shapes' text
 * in document order: a paragraph with a bullet (explicit, or inherited in a body placeholder)
 * goes into a list block, other paragraphs are paragraphs, tables (a:tbl) Markdown tables with
 * their first row as header. The slide's speaker notes (ppt/notesSlides) follow as a paragraph
 * starting "Speaker notes:". The title is docProps/core.xml's dc:title, else the first slide's
 * when it is a title slide (pandoc writes a deck's title only there).
 *
 * Not read: pictures, charts, SmartArt, slide masters' and layouts' own text, hidden-ness
 * (hidden slides are read too), slide numbers, dates and footers.
 */

const KIND: OfficeKind = { label: 'PPTX', main: 'ppt/presentation.xml', old: { app: 'PowerPoint presentation', ext: '.ppt' } }

/** Placeholders whose text is not the slide's content (numbers, dates, footers, the notes page's slide image). */
const NOT_CONTENT = new Set(['sldNum', 'dt', 'ftr', 'hdr', 'sldImg'])

/** A drawing paragraph's text: runs, fields, line breaks as spaces. */
function paragraphText(p: XmlNode): string {
  const parts: string[] = []
  const walk = (n: XmlNode) => {
    for (const c of n.children) {
      if (typeof c === 'string') continue
      if (c.name === 'a:t') parts.push(c.children.filter((t): t is string => typeof t === 'string').join(''))
      else if (c.name === 'a:br') parts.push(' ')
      else if (c.name !== 'a:pPr' && c.name !== 'a:rPr' && c.name !== 'a:endParaRPr') walk(c)
    }
  }
  walk(p)
  return parts.join('').replace(/\s+/g, ' ').trim()
}

function placeholder(shape: XmlNode): { type: string } | null {
  const ph = findFirst(elements(shape).find((c) => /^p:nv\w+Pr$/.test(c.name)) ?? shape, 'p:ph')
  return ph ? { type: ph.attrs['type'] ?? 'body' } : null
}

const isTitle = (type: string | undefined) => type === 'title' || type === 'ctrTitle'

interface SlideText {
  title: string
  /** The title is a title slide's (ctrTitle): the deck's title when its properties have none. */
  centered?: boolean
  blocks: { kind: 'paragraph' | 'list' | 'table'; text: string }[]
}

/**
 * The text of a shape tree (slide or notes page), shapes in document order, groups entered. On a
 * notes page the body placeholder inherits no bullets (notes masters draw none).
 */
function shapeTree(tree: XmlNode, out: SlideText, notesPage = false): void {
  let list: string[] = []
  const flush = () => {
    if (list.length) out.blocks.push({ kind: 'list', text: list.join('\n') })
    list = []
  }
  const visit = (shape: XmlNode) => {
    if (shape.name === 'p:grpSp') return elements(shape).forEach(visit)
    if (shape.name === 'mc:AlternateContent') {
      // Office writes newer content twice: a Choice and a Fallback; the Fallback is the plain one.
      const alt = elements(shape).find((c) => c.name === 'mc:Fallback') ?? elements(shape)[0]
      return alt ? elements(alt).forEach(visit) : undefined
    }
    const ph = placeholder(shape)
    if (ph && NOT_CONTENT.has(ph.type)) return
    if (shape.name === 'p:graphicFrame') {
      for (const tbl of findAll(shape, 'a:tbl')) {
        flush()
        const rows = elements(tbl, 'a:tr').map((tr) =>
          elements(tr, 'a:tc').map((tc) => findAll(tc, 'a:p').map(paragraphText).filter(Boolean).join(' ')),
        )
        out.blocks.push({ kind: 'table', text: renderTable(rows) })
      }
      return
    }
    const body = elements(shape, 'p:txBody')[0]
    if (shape.name !== 'p:sp' || !body) return
    const paragraphs = elements(body, 'a:p')
    if (ph && isTitle(ph.type)) {
      const t = paragraphs.map(paragraphText).filter(Boolean).join(' ')
      if (!out.title) {
        out.title = t
        out.centered = ph.type === 'ctrTitle'
      } else if (t) out.blocks.push({ kind: 'paragraph', text: t })
      return
    }
    // Body placeholders inherit bullets from the layout; other text boxes have none unless they say so.
    const inherited = !notesPage && ph !== null && (ph.type === 'body' || ph.type === 'obj')
    const counters: number[] = []
    for (const p of paragraphs) {
      const text = paragraphText(p)
      if (!text) continue
      const pPr = elements(p, 'a:pPr')[0]
      const marks = pPr ? elements(pPr).map((c) => c.name) : []
      const numbered = pPr ? elements(pPr, 'a:buAutoNum')[0] : undefined
      const bullet = !marks.includes('a:buNone') && (inherited || marks.includes('a:buChar') || numbered !== undefined)
      if (bullet) {
        const level = Math.min(8, Math.max(0, Number(pPr?.attrs['lvl'] ?? 0) || 0))
        // Automatic numbers are drawn, not written: they are counted here, as a reader sees them.
        counters.length = level + 1
        const n = numbered ? (counters[level] ?? Number(numbered.attrs['startAt'] ?? 1) - 1) + 1 : undefined
        counters[level] = n ?? 0
        list.push(`${'  '.repeat(level)}${n === undefined ? '-' : `${n}.`} ${text}`)
      } else {
        flush()
        out.blocks.push({ kind: 'paragraph', text })
      }
    }
    flush()
  }
  elements(tree).forEach(visit)
  flush()
}

async function slideParts(zip: ZipArchive): Promise<string[]> {
  const xml = (await readTreePart(zip, KIND.main, 'PPTX'))!
  const rels = await relationships(zip, KIND.main, 'PPTX')
  const list = findFirst(xmlTree(xml), 'p:sldIdLst')
  const parts = (list ? elements(list, 'p:sldId') : [])
    .map((s) => rels.get(prefixedAttr(s.attrs, 'id') ?? ''))
    .filter((r) => r && /\/slide$/.test(r.type))
    .map((r) => r!.target)
  if (parts.length === 0 && !list) throw new ParseError('file is not a valid PPTX (its presentation lists no slides)')
  return parts
}

async function readSlide(zip: ZipArchive, part: string): Promise<SlideText> {
  const out: SlideText = { title: '', blocks: [] }
  const xml = await readTreePart(zip, part, 'PPTX')
  if (xml === null) throw new ParseError(`file is not a valid PPTX (the slide ${part} is missing)`)
  const tree = findFirst(xmlTree(xml), 'p:spTree')
  if (tree) shapeTree(tree, out)
  const notesRel = [...(await relationships(zip, part, 'PPTX')).values()].find((r) => /\/notesSlide$/.test(r.type))
  const notesXml = notesRel ? await readTreePart(zip, notesRel.target, 'PPTX') : null
  const notesTree = notesXml ? findFirst(xmlTree(notesXml), 'p:spTree') : null
  if (notesTree) {
    const notes: SlideText = { title: '', blocks: [] }
    shapeTree(notesTree, notes, true)
    const text = [notes.title, ...notes.blocks.map((b) => b.text)].filter(Boolean).join('\n')
    if (text) out.blocks.push({ kind: 'paragraph', text: `Speaker notes: ${text}` })
  }
  return out
}

/** Reads a PPTX into a builder (for the parser and the source viewer). */
export const parsePptx: ParserFn = guarded('PPTX', async (bytes) => {
  const zip = await openOffice(bytes, KIND)
  const b = new DocBuilder()
  const parts = await slideParts(zip)
  let deckTitle: string | null = null
  for (const [i, part] of parts.entries()) {
    const slide = await readSlide(zip, part)
    if (i === 0 && slide.centered) deckTitle = slide.title
    b.heading(1, slide.title || `Slide ${i + 1}`)
    // A slide with nothing but its title (a section divider) still says something: its title is kept as its text.
    if (slide.blocks.length === 0 && slide.title) b.add('paragraph', slide.title)
    for (const block of slide.blocks) b.add(block.kind, block.text)
  }
  const meta: Record<string, unknown> = await coreProperties(zip)
  const title = (typeof meta.title === 'string' ? meta.title : null) ?? deckTitle
  const doc: ParsedDocument = { title, meta, sections: b.finish() }
  return doc
})
