import type { Queryable } from './db'

export interface ChunkSource {
  chunk_id: string
  collection: string
  /** The collection's root folder, absolute. */
  root: string
  /** The document's path relative to the root, as stored at import. */
  path: string
  heading: string
  version: string | null
  page_start: number | null
  page_end: number | null
  text: string
}

/** A chunk with its place in the document, for reading a passage in context. */
export interface PassageInContext {
  passage: ChunkSource & { kind: string | null; position: number | null }
  /** Chunks just before it in the same document, nearest last. */
  previous: (ChunkSource & { kind: string | null; position: number | null })[]
  /** Chunks just after it in the same document, nearest first. */
  next: (ChunkSource & { kind: string | null; position: number | null })[]
}

/**
 * A passage by chunk id with up to `around` chunks (at most 10) before and after it in the same
 * document, in document order; null when the chunk is not in the index.
 */
export async function passageInContext(db: Queryable, chunkId: string, around: number): Promise<PassageInContext | null> {
  type Row = ChunkSource & { kind: string | null; position: number | null; document_id: string; ordinal: number }
  const cols = `ch.id AS chunk_id, ch.collection_id AS collection, c.root, ch.path, ch.heading, ch.version, ch.kind,
                ch.page_start, ch.page_end, ch.text, ch.position, ch.document_id, ch.ordinal`
  const { rows } = await db.query<Row>(
    `SELECT ${cols} FROM chunks ch JOIN collections c ON c.id = ch.collection_id WHERE ch.id = $1`,
    [chunkId],
  )
  const hit = rows[0]
  if (!hit) return null
  const n = Math.max(0, Math.min(10, Math.floor(around)))
  // Document order is the stored position; chunks written before it existed fall back to page, then heading and ordinal.
  const { rows: doc } = await db.query<Row>(
    `SELECT ${cols} FROM chunks ch JOIN collections c ON c.id = ch.collection_id WHERE ch.document_id = $1
      ORDER BY ch.position NULLS LAST, ch.page_start NULLS FIRST, ch.heading, ch.ordinal, ch.id`,
    [hit.document_id],
  )
  const i = doc.findIndex((r) => r.chunk_id === chunkId)
  const strip = ({ document_id: _d, ordinal: _o, ...r }: Row) => r
  return {
    passage: strip(hit),
    previous: doc.slice(Math.max(0, i - n), i).map(strip),
    next: doc.slice(i + 1, i + 1 + n).map(strip),
  }
}

/** Where an indexed chunk came from (its collection's root and the document's relative path); null when it is not in the index. */
export async function chunkSource(db: Queryable, chunkId: string): Promise<ChunkSource | null> {
  const { rows } = await db.query<ChunkSource>(
    `SELECT ch.id AS chunk_id, ch.collection_id AS collection, c.root, ch.path, ch.heading, ch.version,
            ch.page_start, ch.page_end, ch.text
       FROM chunks ch JOIN documents d ON d.id = ch.document_id JOIN collections c ON c.id = ch.collection_id
      WHERE ch.id = $1 AND d.status = 'indexed'`,
    [chunkId],
  )
  return rows[0] ?? null
}

/** A page of a chunk's document that text recognition read (documents.ocr_pages, migration 10). */
export interface OcrPageRow {
  page: number
  confidence: number
  /** [text, x0, y0, x1, y1], the box as fractions of the page. */
  words: [string, number, number, number, number][]
}

/** The recognised pages from `from` to `to` of the document a chunk belongs to; none when it has none. */
export async function chunkOcrPages(db: Queryable, chunkId: string, from: number, to: number): Promise<OcrPageRow[]> {
  const { rows } = await db.query<{ p: OcrPageRow }>(
    `SELECT e AS p
       FROM chunks ch JOIN documents d ON d.id = ch.document_id, jsonb_array_elements(coalesce(d.ocr_pages, '[]'::jsonb)) e
      WHERE ch.id = $1 AND (e->>'page')::int BETWEEN $2 AND $3
      ORDER BY (e->>'page')::int`,
    [chunkId, from, to],
  )
  return rows.map((r) => r.p)
}
