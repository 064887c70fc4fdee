import type { PassageInDocument, PassageText } from '../../shared/passage'
import type { Queryable } from './db'

/*
 * The one reader of chunk rows: every SELECT of a chunk's place or text in the engine goes through
 * here, under one row type. The rankers (retrieve/keyword.ts, vector.ts) select only ids and
 * scores, and counts and lexeme statistics read no rows; they keep their own SQL.
 */

/** A stored chunk, its columns under the names the engine uses, with its collection's root folder. */
export interface ChunkRow {
  chunk_id: string
  collection: string
  /** The collection's root folder, absolute (selecting it joins the collection). */
  root: string
  /** The document's path relative to the root, as stored at import. */
  path: string
  heading: string
  version: string | null
  kind: string | null
  page_start: number | null
  page_end: number | null
  text: string
  /** Order in its document, from 0; null for chunks written before it was stored. */
  position: number | null
  document_id: string
  /** Order among the chunks under the same heading. */
  ordinal: number
  /** SHA-256 of the breadcrumb and text the embedder read: equal for the same section, word for word, in two places. */
  embed_hash: string
}

type Field = keyof ChunkRow
/** Some columns of a chunk, always with its id. */
export type ChunkFields<K extends Field> = Pick<ChunkRow, K | 'chunk_id'>

const COLUMN: Record<Field, string> = {
  chunk_id: 'ch.id',
  collection: 'ch.collection_id',
  root: 'c.root',
  path: 'ch.path',
  heading: 'ch.heading',
  version: 'ch.version',
  kind: 'ch.kind',
  page_start: 'ch.page_start',
  page_end: 'ch.page_end',
  text: 'ch.text',
  position: 'ch.position',
  document_id: 'ch.document_id',
  ordinal: 'ch.ordinal',
  embed_hash: 'ch.embed_hash',
}

function selectList(fields: readonly Field[]): string {
  return ['chunk_id' as const, ...fields.filter((f) => f !== 'chunk_id')].map((f) => `${COLUMN[f]} AS ${f}`).join(', ')
}

/** The chunks table, joined to its documents when only indexed documents count, and to its collections for their root. */
function fromClause(fields: readonly Field[], indexedOnly: boolean): string {
  return [
    'chunks ch',
    indexedOnly ? 'JOIN documents d ON d.id = ch.document_id' : null,
    fields.includes('root') ? 'JOIN collections c ON c.id = ch.collection_id' : null,
  ]
    .filter(Boolean)
    .join(' ')
}

/** The chunks with these ids, by id; an id that is not in the index is absent. */
export async function chunksById<K extends Field>(
  db: Queryable,
  ids: readonly string[],
  fields: readonly K[],
): Promise<Map<string, ChunkFields<K>>> {
  if (ids.length === 0) return new Map()
  const { rows } = await db.query<ChunkFields<K>>(
    `SELECT ${selectList(fields)} FROM ${fromClause(fields, false)} WHERE ch.id = ANY($1::text[])`,
    [ids],
  )
  return new Map(rows.map((r) => [r.chunk_id, r]))
}

/** A chunk whose document is indexed (not failed or half-imported); null otherwise. */
async function indexedChunk<K extends Field>(
  db: Queryable,
  chunkId: string,
  fields: readonly K[],
): Promise<ChunkFields<K> | null> {
  const { rows } = await db.query<ChunkFields<K>>(
    `SELECT ${selectList(fields)} FROM ${fromClause(fields, true)} WHERE ch.id = $1 AND d.status = 'indexed'`,
    [chunkId],
  )
  return rows[0] ?? null
}

/** Every chunk of a document in document order: the stored position; chunks written before it existed fall back to page, then heading and ordinal. */
async function documentChunks<K extends Field>(
  db: Queryable,
  documentId: string,
  fields: readonly K[],
): Promise<ChunkFields<K>[]> {
  const { rows } = await db.query<ChunkFields<K>>(
    `SELECT ${selectList(fields)} FROM ${fromClause(fields, false)} WHERE ch.document_id = $1
      ORDER BY ch.position NULLS LAST, ch.page_start NULLS FIRST, ch.heading, ch.ordinal, ch.id`,
    [documentId],
  )
  return rows
}

/** The columns a contract passage is made of (toPassage). */
export const PASSAGE_FIELDS = ['collection', 'path', 'heading', 'version', 'kind', 'page_start', 'page_end', 'text'] as const

/** A chunk as a passage of the contract: the one place a stored row becomes one (its first page is the contract's `page`). */
export function toPassage(r: ChunkFields<(typeof PASSAGE_FIELDS)[number]>): PassageText {
  return {
    chunk_id: r.chunk_id,
    collection: r.collection,
    path: r.path,
    heading: r.heading,
    version: r.version,
    kind: r.kind,
    page: r.page_start,
    page_end: r.page_end,
    text: r.text,
  }
}

const SOURCE_FIELDS = ['collection', 'root', 'path', 'heading', 'version', 'page_start', 'page_end', 'text'] as const
/** Where an indexed chunk came from: its collection's root and the document's path relative to it. */
export type ChunkSource = ChunkFields<(typeof SOURCE_FIELDS)[number]>

const IN_CONTEXT_FIELDS = [...SOURCE_FIELDS, 'kind', 'position'] as const
/** A chunk with its place in the document (the host protocol's `passage.get`), as the contract names a passage's fields. */
export type ChunkInContext = PassageInDocument

/** A chunk with its place in the document, for reading a passage in context. */
export interface PassageInContext {
  passage: ChunkInContext
  /** Chunks just before it in the same document, nearest last. */
  previous: ChunkInContext[]
  /** Chunks just after it in the same document, nearest first. */
  next: ChunkInContext[]
}

/**
 * A passage by chunk id with up to `around` chunks (at most 10) before and after it in the same
 * document, in document order; null when the chunk is not in the index.
 */
export async function passageInContext(db: Queryable, chunkId: string, around: number): Promise<PassageInContext | null> {
  const fields = [...IN_CONTEXT_FIELDS, 'document_id', 'ordinal'] as const
  const hit = (await chunksById(db, [chunkId], fields)).get(chunkId)
  if (!hit) return null
  const n = Math.max(0, Math.min(10, Math.floor(around)))
  const doc = await documentChunks(db, hit.document_id, fields)
  const i = doc.findIndex((r) => r.chunk_id === chunkId)
  const strip = ({ document_id: _d, ordinal: _o, root, position, ...r }: (typeof doc)[number]): ChunkInContext => ({
    ...toPassage(r),
    root,
    position,
  })
  return {
    passage: strip(hit),
    previous: doc.slice(Math.max(0, i - n), i).map(strip),
    next: doc.slice(i + 1, i + 1 + n).map(strip),
  }
}

/** Where an indexed chunk came from (its collection's root and the document's relative path); null when it is not in the index. */
export async function chunkSource(db: Queryable, chunkId: string): Promise<ChunkSource | null> {
  return indexedChunk(db, chunkId, SOURCE_FIELDS)
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

/** Passages by chunk id, read from one store: what the viewer opens and the host's `passage.get` returns. */
export class PassageReader {
  constructor(private readonly db: Queryable) {}

  /** Where an indexed chunk came from; null when it is not in the index. */
  source(chunkId: string): Promise<ChunkSource | null> {
    return chunkSource(this.db, chunkId)
  }

  /** A passage with up to `around` chunks (at most 10) before and after it in its document; null when it is not in the index. */
  inContext(chunkId: string, around = 1): Promise<PassageInContext | null> {
    return passageInContext(this.db, chunkId, around)
  }
}
