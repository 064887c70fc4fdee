import type { Db, Queryable } from './db'
import { pruneTombstones } from './postings'
import { toVectorLiteral } from './vector-index'

/**
 * Every document is replaced in one transaction, stats included. On a server several processes
 * may write: each write transaction first takes its collection's advisory lock (collectionTurn),
 * so the shared statistics of one collection (term_stats, chunk_count, total_len) are updated by
 * one transaction at a time and stay exact, while readers are never blocked.
 */

/** Serialises the write transactions of one collection (held until the transaction ends). */
export async function collectionTurn(tx: Queryable, collectionId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('docent.collection:' || $1))`, [collectionId])
}

export interface DocumentState {
  id: string
  path: string
  size: number
  mtime_ms: number
  sha256: string | null
  status: 'indexed' | 'failed'
  chunker: string | null
  /** Why a failed document failed (null for an indexed one). */
  error: string | null
}

export interface DocumentRow {
  id: string
  collectionId: string
  path: string
  size: number
  mtimeMs: number
  sha256: string
  version: string | null
  kind: string | null
  title: string | null
  pageCount: number | null
  chunker: string
  /** Pages read by text recognition (null: none; absent: left as stored). */
  ocrPages?: StoredOcrPage[] | null
}

/** A recognised page as stored (documents.ocr_pages): words as [text, x0, y0, x1, y1], fractions of the page. */
export interface StoredOcrPage {
  page: number
  confidence: number
  words: [string, number, number, number, number][]
}

/**
 * A recognised page whose mean word confidence is below this is flagged "check the page". On the
 * real scans of evals/parsers/ocr-scans.test.ts pages that read at 97-99% word recall scored
 * 79-92 (79: a page whose engraving tesseract read as noise); below 70 tesseract is unsure of a
 * large share of the words, and the text is too likely wrong to be trusted unread.
 */
export const LOW_OCR_CONFIDENCE = 70

export interface ChunkRow {
  id: string
  ordinal: number
  heading: string
  pageStart: number | null
  pageEnd: number | null
  text: string
  embedHash: string
  tokenCount: number
  lexLen: number
  exactTerms: string[]
  embedding: Float32Array | null
  embeddingModel: string | null
}

export async function upsertCollection(db: Queryable, id: string, root: string, settings: object = {}): Promise<void> {
  await db.query(
    `INSERT INTO collections (id, root, settings) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (id) DO UPDATE SET root = excluded.root,
       settings = collections.settings || excluded.settings`,
    [id, root, JSON.stringify(settings)],
  )
}

export async function documentStates(db: Queryable, collectionId: string): Promise<Map<string, DocumentState>> {
  const { rows } = await db.query<DocumentState>(
    `SELECT id, path, size::float8 AS size, mtime_ms, sha256, status, chunker, error FROM documents WHERE collection_id = $1`,
    [collectionId],
  )
  return new Map(rows.map((r) => [r.path, r]))
}

/** Removes a document's chunks and takes them out of the BM25 statistics (inside a transaction). */
async function removeChunks(tx: Queryable, documentId: string, collectionId: string): Promise<void> {
  await tx.query(
    `UPDATE term_stats t SET df = t.df - s.c
       FROM (SELECT u.lexeme, count(*)::int AS c FROM chunks ch, unnest(ch.tsv) u
              WHERE ch.document_id = $1 GROUP BY u.lexeme) s
      WHERE t.collection_id = $2 AND t.lexeme = s.lexeme`,
    [documentId, collectionId],
  )
  await tx.query(
    `UPDATE collections SET
        chunk_count = chunk_count - (SELECT count(*) FROM chunks WHERE document_id = $1),
        total_len = total_len - (SELECT coalesce(sum(lex_len), 0) FROM chunks WHERE document_id = $1)
      WHERE id = $2`,
    [documentId, collectionId],
  )
  await tx.query('DELETE FROM chunks WHERE document_id = $1', [documentId])
}

const INSERT_BATCH = 100

async function insertChunks(tx: Queryable, doc: DocumentRow, chunks: ChunkRow[]): Promise<void> {
  for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
    const batch = chunks.slice(start, start + INSERT_BATCH)
    const params: unknown[] = []
    const values: string[] = []
    batch.forEach((c, i) => {
      const p = params.length
      params.push(
        c.id,
        doc.id,
        doc.collectionId,
        doc.path,
        c.ordinal,
        c.heading,
        doc.version,
        doc.kind,
        c.pageStart,
        c.pageEnd,
        c.text,
        c.embedHash,
        c.tokenCount,
        c.lexLen,
        c.exactTerms,
        c.embedding ? toVectorLiteral(c.embedding) : null,
        c.embedding ? c.embeddingModel : null,
        // Chunks arrive in document order: their index is the position a passage's neighbours use.
        start + i,
      )
      const ph = Array.from({ length: 18 }, (_, j) => `$${p + j + 1}`)
      ph[14] = `${ph[14]}::text[]`
      ph[15] = `${ph[15]}::vector`
      values.push(`(${ph.join(', ')})`)
    })
    await tx.query(
      `INSERT INTO chunks (id, document_id, collection_id, path, ordinal, heading, version, kind,
         page_start, page_end, text, embed_hash, token_count, lex_len, exact_terms, embedding, embedding_model, position)
       VALUES ${values.join(', ')}`,
      params,
    )
  }
  await tx.query(
    `INSERT INTO term_stats (collection_id, lexeme, df)
       SELECT $2, u.lexeme, count(*)::int FROM chunks ch, unnest(ch.tsv) u
        WHERE ch.document_id = $1 GROUP BY u.lexeme
     ON CONFLICT (collection_id, lexeme) DO UPDATE SET df = term_stats.df + excluded.df`,
    [doc.id, doc.collectionId],
  )
  await tx.query(
    `UPDATE collections SET
        chunk_count = chunk_count + (SELECT count(*) FROM chunks WHERE document_id = $1),
        total_len = total_len + (SELECT coalesce(sum(lex_len), 0) FROM chunks WHERE document_id = $1)
      WHERE id = $2`,
    [doc.id, doc.collectionId],
  )
}

/** Sets a document's recognised pages (none: null), with the counts the library's list shows. */
async function writeOcrPages(db: Queryable, documentId: string, pages: StoredOcrPage[] | null): Promise<void> {
  await db.query('UPDATE documents SET ocr_pages = $2::jsonb, ocr_page_count = $3, ocr_low_pages = $4 WHERE id = $1', [
    documentId,
    pages?.length ? JSON.stringify(pages) : null,
    pages?.length ?? 0,
    pages?.filter((p) => p.confidence < LOW_OCR_CONFIDENCE).length ?? 0,
  ])
}

/** Replaces a document and all its chunks atomically: a shorter new version leaves no stale chunks. */
export async function replaceDocument(db: Db, doc: DocumentRow, chunks: ChunkRow[]): Promise<void> {
  await db.transaction(async (tx) => {
    await collectionTurn(tx, doc.collectionId)
    await removeChunks(tx, doc.id, doc.collectionId)
    await tx.query(
      `INSERT INTO documents (id, collection_id, path, size, mtime_ms, sha256, status, error, version, kind,
                              title, page_count, chunker, chunk_count, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'indexed', NULL, $7, $8, $9, $10, $11, $12, now())
       ON CONFLICT (id) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, sha256 = excluded.sha256,
         status = 'indexed', error = NULL, version = excluded.version, kind = excluded.kind, title = excluded.title,
         page_count = excluded.page_count, chunker = excluded.chunker, chunk_count = excluded.chunk_count,
         updated_at = now()`,
      [
        doc.id,
        doc.collectionId,
        doc.path,
        doc.size,
        doc.mtimeMs,
        doc.sha256,
        doc.version,
        doc.kind,
        doc.title,
        doc.pageCount,
        doc.chunker,
        chunks.length,
      ],
    )
    if (doc.ocrPages !== undefined) await writeOcrPages(tx, doc.id, doc.ocrPages)
    await insertChunks(tx, doc, chunks)
  })
}

/**
 * Records that a file could not be imported and why. Chunks from an earlier successful import are
 * kept (a transient permission error must not lose what was indexed); the error is shown beside them.
 * `sha256` and `signature`, when given, are the content that failed and the parsers it failed
 * with: the file is not tried again until one of them changes (sync/plan.ts). Without them (a file
 * that could not even be read, a failure that may pass) it is tried again on every sync.
 */
export async function markFailed(
  db: Queryable,
  d: {
    id: string
    collectionId: string
    path: string
    size: number
    mtimeMs: number
    error: string
    sha256?: string | null
    signature?: string | null
  },
): Promise<void> {
  await db.query(
    `INSERT INTO documents (id, collection_id, path, size, mtime_ms, status, error, sha256, chunker, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'failed', $6, $7, $8, now())
     ON CONFLICT (id) DO UPDATE SET status = 'failed', error = excluded.error, size = excluded.size,
       mtime_ms = excluded.mtime_ms, sha256 = excluded.sha256, chunker = excluded.chunker, updated_at = now()`,
    [d.id, d.collectionId, d.path, d.size, d.mtimeMs, d.error, d.sha256 ?? null, d.signature ?? null],
  )
}

/** Unchanged content with a new modification time: remember the time so the next sync skips the read. */
export async function touchDocument(db: Queryable, id: string, mtimeMs: number): Promise<void> {
  await db.query('UPDATE documents SET mtime_ms = $2 WHERE id = $1', [id, mtimeMs])
}

export async function deleteDocument(db: Db, documentId: string, collectionId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await collectionTurn(tx, collectionId)
    await removeChunks(tx, documentId, collectionId)
    await tx.query('DELETE FROM documents WHERE id = $1', [documentId])
  })
}

export async function markSynced(db: Db, collectionId: string, opts: { full: boolean } = { full: true }): Promise<void> {
  await db.query('UPDATE collections SET last_sync_at = now() WHERE id = $1', [collectionId])
  // Lexemes no longer in any chunk of the collection would only slow down IDF look-ups. In the
  // collection's turn: a concurrent writer's transaction may be about to count one up again.
  await db.transaction(async (tx) => {
    await collectionTurn(tx, collectionId)
    await tx.query('DELETE FROM term_stats WHERE collection_id = $1 AND df <= 0', [collectionId])
  })
  // Tombstones of replaced chunks are only needed until the keyword postings have read them.
  await pruneTombstones(db)
  // A server runs autovacuum, and VACUUM there needs to own the tables.
  if (db.kind === 'server') return
  // Planner statistics and dead-row clean-up. A server runs autovacuum; embedded PGlite does not,
  // and every document write updates hundreds of term_stats rows (one new row version each), so
  // without VACUUM the statistics table and the index bloat with every sync.
  // A watcher's small change set vacuums only the hot tables, so a saved file stays quick to apply.
  // One statement per call: several in one query string form an implicit transaction, where
  // VACUUM is not allowed.
  const tables = opts.full
    ? ['term_stats', 'collections', 'documents', 'chunks', 'chunk_tombstones']
    : ['term_stats', 'collections', 'chunk_tombstones']
  for (const t of tables) await db.exec(opts.full ? `VACUUM (ANALYZE) ${t}` : `VACUUM ${t}`)
  await db.exec('CHECKPOINT')
}

/**
 * Reclaims dead row versions of the tables every document write updates, and checkpoints (during
 * long imports). Embedded PGlite runs no checkpointer process: without a CHECKPOINT its
 * write-ahead log keeps every segment until the store closes (19.7 GB of pg_wal beside 2.4 GB of
 * tables partway through loading a million chunks, docs/benchmarks.md). After one, Postgres recycles the old segments
 * (up to max_wal_size, 1 GB) instead of adding new ones.
 */
export async function vacuumHotTables(db: Db): Promise<void> {
  if (db.kind === 'server') return
  await db.exec('VACUUM term_stats')
  await db.exec('VACUUM collections')
  await db.exec('CHECKPOINT')
}

/** Embeddings already computed for these texts by this model (identical text is embedded once). */
export async function cachedEmbeddings(db: Queryable, modelId: string, hashes: string[]): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>()
  if (hashes.length === 0) return out
  const { rows } = await db.query<{ embed_hash: string; embedding: string }>(
    `SELECT embed_hash, embedding::text AS embedding FROM embedding_cache WHERE model_id = $1 AND embed_hash = ANY($2::text[])`,
    [modelId, hashes],
  )
  for (const r of rows) out.set(r.embed_hash, parseVector(r.embedding))
  return out
}

export async function storeEmbeddings(
  db: Queryable,
  modelId: string,
  items: { hash: string; embedding: Float32Array }[],
): Promise<void> {
  for (let start = 0; start < items.length; start += 200) {
    const batch = items.slice(start, start + 200)
    const params: unknown[] = [modelId]
    const values = batch.map((it) => {
      params.push(it.hash, toVectorLiteral(it.embedding))
      return `($1, $${params.length - 1}, $${params.length}::vector)`
    })
    await db.query(
      `INSERT INTO embedding_cache (model_id, embed_hash, embedding) VALUES ${values.join(', ')}
       ON CONFLICT (model_id, embed_hash) DO NOTHING`,
      params,
    )
  }
}

export function parseVector(text: string): Float32Array {
  const inner = text.trim().replace(/^\[|\]$/g, '')
  if (!inner) return new Float32Array(0)
  return Float32Array.from(inner.split(',').map(Number))
}
