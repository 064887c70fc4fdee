import type { ChunkRow, DocumentRow, StoredOcrPage } from '../../store/writer'
import type { ParsedDocument, ParsedPage } from '../types'
import { chunkId, sha256Hex } from '../../store/ids'
import { countWords, extractExactTerms } from '../../core/exact-terms'
import type { TokenCounter } from '../../core/model-ports'
import { chunkDocument, embeddingText, DEFAULT_CHUNK_OPTIONS } from '../chunker'
import { stripControls, withoutControls } from '../parsers/textcheck'
import type { ParsedFile } from './parse'
import type { PlannedFile } from './plan'

/** A document ready to embed and write: its row, its chunks, and the text each chunk is embedded as. */
export interface PreparedDocument {
  doc: DocumentRow
  chunks: ChunkRow[]
  /** Per chunk, in order: the text embedded for it (breadcrumb and body). */
  texts: string[]
  /** For the watcher's change sets: whether the document was stored before. */
  change: 'added' | 'changed'
}

/** The recognised pages of a parse, as documents.ocr_pages stores them; null when there are none. */
export function storedOcrPages(pages: ParsedPage[] | undefined): StoredOcrPage[] | null {
  const out: StoredOcrPage[] = []
  for (const p of pages ?? []) {
    if (!p.ocr) continue
    out.push({ page: p.page, confidence: p.ocr.confidence, words: p.ocr.words.map((w) => [w.text, ...w.box]) })
  }
  return out.length ? out : null
}

export interface ChunkOptions {
  collection: string
  tokenCounter: TokenCounter
  /** The chunker's signature (the document is stored with its own, plan.ts documentSignature). */
  signature: string
}

/** The longest title or heading kept, in characters (longer ones are cut at a word, with an ellipsis). */
export const MAX_HEADING_CHARS = 200

/** `text` cut to MAX_HEADING_CHARS at the last space before it (if any is near), with an ellipsis. */
export function clipHeading(text: string): string {
  if (text.length <= MAX_HEADING_CHARS) return text
  const cut = text.slice(0, MAX_HEADING_CHARS - 1)
  const space = cut.lastIndexOf(' ')
  return (space > MAX_HEADING_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd() + '…'
}

/**
 * A parsed document with its title and headings cut short. A title goes into the breadcrumb of
 * every chunk (stored, embedded and searched with each), and a breadcrumb through the exact-term
 * extraction, which takes time quadratic in a run of letters: a PDF whose Info Title held 4 MB
 * held the import, on the engine's own thread, for hours.
 */
function withShortHeadings(doc: ParsedDocument): ParsedDocument {
  const long =
    (doc.title?.length ?? 0) > MAX_HEADING_CHARS || doc.sections.some((s) => s.headings.some((h) => h.length > MAX_HEADING_CHARS))
  if (!long) return doc
  return {
    ...doc,
    title: doc.title === null ? null : clipHeading(doc.title),
    sections: doc.sections.map((s) => ({ ...s, headings: s.headings.map(clipHeading) })),
  }
}

/** A text value on its way to the store, free of control characters (PostgreSQL refuses U+0000 in text). */
function storable(v: string | null): string | null {
  return v === null ? null : stripControls(v).trim() || null
}

/**
 * The chunk stage: splits a parsed document into chunk rows, embeddings still empty. Nothing with
 * a control character goes on from here, whatever the parser or the front matter held.
 */
export function chunkParsed(item: PlannedFile, file: ParsedFile, opts: ChunkOptions): PreparedDocument {
  const rel = item.file.relativePath
  const chunks: ChunkRow[] = []
  const texts: string[] = []
  const parsed = withShortHeadings(withoutControls(file.parsed))
  for (const c of chunkDocument(parsed, opts.tokenCounter, DEFAULT_CHUNK_OPTIONS)) {
    const text = embeddingText(c.breadcrumb, c.text)
    texts.push(text)
    chunks.push({
      id: chunkId(opts.collection, rel, c.breadcrumb, c.ordinal),
      ordinal: c.ordinal,
      heading: c.breadcrumb.join(' > '),
      pageStart: c.pageStart,
      pageEnd: c.pageEnd,
      text: c.text,
      embedHash: sha256Hex(text),
      tokenCount: c.tokenCount,
      lexLen: countWords(text),
      exactTerms: extractExactTerms(text),
      embedding: null,
      embeddingModel: null,
    })
  }
  const doc: DocumentRow = {
    id: item.docId,
    collectionId: opts.collection,
    path: rel,
    size: item.file.size,
    mtimeMs: item.file.mtimeMs,
    sha256: file.sha,
    version: storable(file.version),
    kind: storable(file.kind),
    title: parsed.title,
    pageCount: parsed.pageCount ?? null,
    chunker: item.signature,
    ocrPages: storedOcrPages(parsed.pages),
  }
  return { doc, chunks, texts, change: item.decision === 'new' ? 'added' : 'changed' }
}
