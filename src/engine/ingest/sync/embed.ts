import type { Db } from '../../store/db'
import { cachedEmbeddings, storeEmbeddings, type ChunkRow } from '../../store/writer'
import type { PreparedDocument } from './chunk'
import type { StageTimer } from './timings'

/** What the importer needs from an embedding model (see models/runtime/embedder.ts). */
export interface EmbedderLike {
  id: string
  dims: number
  embedDocuments(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>
}

/**
 * The embed stage: fills the embeddings of a batch of documents. Returns a notice when the model
 * failed (out of memory, broken file): the batch is then written without vectors, for keyword
 * search, and embedded later. Cancelling is not a model failure: it throws.
 */
export async function embedBatch(
  db: Db,
  embedder: EmbedderLike,
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

/** Cache hits first, the model only for text not embedded before by this model. */
async function embedInto(
  db: Db,
  embedder: EmbedderLike,
  batch: PreparedDocument[],
  opts: { signal?: AbortSignal | undefined; timer: StageTimer; onEmbedded: (n: number) => void },
): Promise<void> {
  const all: { row: ChunkRow; text: string }[] = []
  for (const p of batch) p.chunks.forEach((row, i) => all.push({ row, text: p.texts[i]! }))
  const cached = await cachedEmbeddings(db, embedder.id, [...new Set(all.map((a) => a.row.embedHash))])
  const missing = new Map<string, string>()
  for (const a of all) if (!cached.has(a.row.embedHash)) missing.set(a.row.embedHash, a.text)
  if (missing.size > 0) {
    const hashes = [...missing.keys()]
    // Only the model call counts as embedding time: the cache look-ups are database work.
    const t0 = performance.now()
    const vectors = await embedder.embedDocuments([...missing.values()], opts.signal)
    opts.timer.add('embed', performance.now() - t0)
    const fresh = hashes.map((hash, i) => ({ hash, embedding: vectors[i]! }))
    await storeEmbeddings(db, embedder.id, fresh)
    for (const f of fresh) cached.set(f.hash, f.embedding)
    opts.onEmbedded(fresh.length)
  }
  for (const a of all) {
    a.row.embedding = cached.get(a.row.embedHash) ?? null
    a.row.embeddingModel = a.row.embedding ? embedder.id : null
  }
}
