import type { Embedder } from '../../core/model-ports'
import type { Db, Queryable } from '../../store/db'
import { toVectorLiteral } from '../../store/vector-index'
import { cachedEmbeddings, storeEmbeddings, type ChunkRow } from '../../store/writer'
import { embeddingText } from '../chunker'
import type { PreparedDocument } from './chunk'
import type { StageTimer } from './timings'

/**
 * The embed stage: fills the embeddings of a batch of documents. Returns a notice when the model
 * failed (out of memory, broken file): the batch is then written without vectors, for keyword
 * search, and embedded later. Cancelling is not a model failure: it throws.
 */
export async function embedBatch(
  db: Db,
  embedder: Embedder,
  batch: PreparedDocument[],
  opts: { signal?: AbortSignal | undefined; timer: StageTimer; onEmbedded: (n: number) => void },
): Promise<string | null> {
  try {
    await embedInto(db, embedder, batch, opts)
    return null
  } catch (err) {
    if (opts.signal?.aborted) throw err
    for (const p of batch) {
      for (const c of p.chunks) {
        c.embedding = null
        c.embeddingModel = null
      }
    }
    return `The embedding model failed (${err instanceof Error ? err.message : String(err)}); documents were imported for keyword search and will be embedded later.`
  }
}

/** Sets each chunk's embedding; identical text in the batch is embedded once. */
async function embedInto(
  db: Db,
  embedder: Embedder,
  batch: PreparedDocument[],
  opts: { signal?: AbortSignal | undefined; timer: StageTimer; onEmbedded: (n: number) => void },
): Promise<void> {
  const all: { row: ChunkRow; text: string }[] = []
  for (const p of batch) p.chunks.forEach((row, i) => all.push({ row, text: p.texts[i]! }))
  const { vectors, embedded } = await vectorsFor(db, embedder, new Map(all.map((a) => [a.row.embedHash, a.text])), {
    signal: opts.signal,
    onModelMs: (ms) => opts.timer.add('embed', ms),
  })
  if (embedded > 0) opts.onEmbedded(embedded)
  for (const a of all) {
    a.row.embedding = vectors.get(a.row.embedHash) ?? null
    a.row.embeddingModel = a.row.embedding ? embedder.id : null
  }
}

/**
 * The vectors of some texts, by embed hash: from the embedding cache where this model has embedded
 * the same text before, else from the model, and then cached. `embedded` counts the model's.
 */
async function vectorsFor(
  db: Queryable,
  embedder: Embedder,
  texts: Map<string, string>,
  opts: { signal?: AbortSignal | undefined; onModelMs?: (ms: number) => void },
): Promise<{ vectors: Map<string, Float32Array>; embedded: number }> {
  const vectors = await cachedEmbeddings(db, embedder.id, [...texts.keys()])
  const missing = [...texts].filter(([hash]) => !vectors.has(hash))
  if (missing.length === 0) return { vectors, embedded: 0 }
  // Only the model call counts as embedding time: the cache look-ups are database work.
  const inputs = missing.map(([, text]) => text)
  const t0 = performance.now()
  const fresh = await embedder.embedDocuments(inputs, opts.signal)
  opts.onModelMs?.(performance.now() - t0)
  const stored = missing.map(([hash], i) => ({ hash, embedding: fresh[i]! }))
  await storeEmbeddings(db, embedder.id, stored)
  for (const f of stored) vectors.set(f.hash, f.embedding)
  return { vectors, embedded: stored.length }
}

/**
 * Embeds every chunk not yet embedded by `embedder` (imported before a model was installed, or
 * embedded by a previous model). Identical text is served from the cache.
 */
export async function embedMissing(
  db: Db,
  embedder: Embedder,
  opts: { collection?: string; signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {},
): Promise<{ embedded: number; fromCache: number }> {
  const where = `(embedding_model IS DISTINCT FROM $1)${opts.collection ? ' AND collection_id = $2' : ''}`
  const params: unknown[] = opts.collection ? [embedder.id, opts.collection] : [embedder.id]
  const { rows: countRows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM chunks WHERE ${where}`, params)
  const total = Number(countRows[0]?.n ?? 0)
  let done = 0
  let embedded = 0
  let fromCache = 0
  while (!opts.signal?.aborted) {
    const { rows } = await db.query<{ id: string; heading: string; text: string; embed_hash: string }>(
      `SELECT id, heading, text, embed_hash FROM chunks WHERE ${where} ORDER BY id LIMIT 128`,
      params,
    )
    if (rows.length === 0) break
    const texts = new Map(rows.map((r) => [r.embed_hash, r]))
    const batch = await vectorsFor(
      db,
      embedder,
      new Map([...texts].map(([hash, r]) => [hash, embeddingText(r.heading ? r.heading.split(' > ') : [], r.text)])),
      { signal: opts.signal },
    )
    embedded += batch.embedded
    fromCache += rows.length - batch.embedded
    await db.transaction(async (tx) => {
      for (const r of rows) {
        const v = batch.vectors.get(r.embed_hash)!
        await tx.query(`UPDATE chunks SET embedding = $2::vector, embedding_model = $3 WHERE id = $1`, [
          r.id,
          toVectorLiteral(v),
          embedder.id,
        ])
      }
    })
    done += rows.length
    opts.onProgress?.(done, total)
  }
  return { embedded, fromCache }
}
