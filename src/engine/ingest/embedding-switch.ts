import type { Embedder } from '../core/model-ports'
import type { Db, Queryable } from '../store/db'
import { storeEmbeddings } from '../store/writer'
import { ensureVectorIndex, vectorIndexName } from '../store/vector-index'
import { embeddingText } from './chunker'

/**
 * Changing the embedding model without a gap in vector search (ADR 0007). The index answers with
 * one model at a time, recorded in `settings` under INDEX_MODEL_KEY. A switch embeds every
 * distinct chunk text with the new model into `embedding_cache` (the table identical text is
 * already embedded once through), while search keeps using the old model and the vectors in
 * `chunks`. When every chunk has a cached vector for the new model, one transaction copies them
 * into `chunks`, builds the new model's HNSW index, drops the old one and records the new model.
 * Cancelling leaves the old index untouched; the cached vectors make the next attempt resume.
 */

export const INDEX_MODEL_KEY = 'embedding.index_model'

export interface IndexModel {
  /** The embedder id: `embedding/<folder name>@<12 hex>`. */
  id: string
  dims: number
}

/** The folder name under `<models>/embedding/` of an embedder id. */
export function modelFolderOf(id: string): string {
  const rest = id.startsWith('embedding/') ? id.slice('embedding/'.length) : id
  const at = rest.lastIndexOf('@')
  return at > 0 ? rest.slice(0, at) : rest
}

/**
 * The model the index answers with: the recorded one, else (a database from before the record
 * existed) the model that embedded most chunks; null when nothing is embedded or recorded.
 */
export async function readIndexModel(db: Queryable): Promise<IndexModel | null> {
  const { rows } = await db.query<{ value: IndexModel }>('SELECT value FROM settings WHERE key = $1', [INDEX_MODEL_KEY])
  const v = rows[0]?.value
  if (v && typeof v.id === 'string' && typeof v.dims === 'number') return { id: v.id, dims: v.dims }
  const { rows: most } = await db.query<{ id: string; dims: number }>(
    `SELECT m.id, (SELECT vector_dims(c.embedding) FROM chunks c WHERE c.embedding_model = m.id LIMIT 1) AS dims
       FROM (SELECT embedding_model AS id, count(*) AS n FROM chunks WHERE embedding_model IS NOT NULL
              GROUP BY embedding_model ORDER BY n DESC, embedding_model LIMIT 1) m`,
  )
  return most[0] ? { id: most[0].id, dims: Number(most[0].dims) } : null
}

export async function writeIndexModel(db: Queryable, model: IndexModel): Promise<void> {
  await db.query(
    `INSERT INTO settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    [INDEX_MODEL_KEY, JSON.stringify({ id: model.id, dims: model.dims })],
  )
}

export interface SwitchProgress {
  phase: 'embedding' | 'switching' | 'done' | 'cancelled'
  from: string | null
  to: string
  /** Distinct chunk texts without a vector from the new model when the switch began. */
  textsTotal: number
  textsDone: number
  elapsedMs: number
  /** Time left at the rate so far; null until there is one. */
  etaMs: number | null
}

export interface SwitchReport {
  switched: boolean
  cancelled: boolean
  from: string | null
  to: string
  /** Texts the new model embedded in this run (the rest came from the cache). */
  texts_embedded: number
  /** Chunks whose vectors were replaced at the switch. */
  chunks_switched: number
  ms: number
}

const SWITCH_BATCH = 128
/** New chunks written by imports between the last batch and the switch send it back to embedding; give up after this. */
const MAX_SWITCH_ATTEMPTS = 5

class NotReady extends Error {}

/** Chunks whose text has no vector from the model `$1` in the cache yet. */
const MISSING_WHERE = `NOT EXISTS (SELECT 1 FROM embedding_cache e WHERE e.model_id = $1 AND e.embed_hash = c.embed_hash)`

/**
 * Builds `target`'s vectors for every chunk beside the old ones, then switches the index to it.
 * `exclusive` runs the final transaction while no import is writing (the engine's write lock).
 */
export async function switchIndexModel(
  db: Db,
  target: Embedder,
  opts: {
    from: string | null
    signal?: AbortSignal
    onProgress?: (p: SwitchProgress) => void
    exclusive?: <T>(fn: () => Promise<T>) => Promise<T>
  },
): Promise<SwitchReport> {
  const started = Date.now()
  const exclusive = opts.exclusive ?? (<T>(fn: () => Promise<T>) => fn())
  const { rows: totalRows } = await db.query<{ n: number }>(
    `SELECT count(DISTINCT c.embed_hash)::int AS n FROM chunks c WHERE ${MISSING_WHERE}`,
    [target.id],
  )
  const run = new SwitchRun(started, opts.from, target.id, Number(totalRows[0]?.n ?? 0), opts.onProgress)
  run.emit()

  for (let attempt = 0; attempt < MAX_SWITCH_ATTEMPTS; attempt++) {
    if (!(await buildVectors(db, target, run, opts.signal))) {
      run.progress.phase = 'cancelled'
      run.emit()
      return run.report(false, 0)
    }
    // Switch: all at once, or not at all if an import added text meanwhile (then embed that too).
    run.progress.phase = 'switching'
    run.emit()
    try {
      const chunks = await exclusive(() => db.transaction((tx) => swapVectors(tx, target, opts.from)))
      run.progress.phase = 'done'
      run.progress.etaMs = 0
      run.emit()
      return run.report(true, chunks)
    } catch (err) {
      if (!(err instanceof NotReady)) throw err
      run.progress.phase = 'embedding'
    }
  }
  throw new Error(
    'the embedding model switch kept finding new text from imports running beside it; run it again when they finish',
  )
}

/** A switch's progress as it is reported, and its report. */
class SwitchRun {
  readonly progress: SwitchProgress

  constructor(
    private readonly started: number,
    private readonly from: string | null,
    private readonly to: string,
    textsTotal: number,
    private readonly onProgress: ((p: SwitchProgress) => void) | undefined,
  ) {
    this.progress = { phase: 'embedding', from, to, textsTotal, textsDone: 0, elapsedMs: 0, etaMs: null }
  }

  emit(): void {
    const progress = this.progress
    progress.elapsedMs = Date.now() - this.started
    const rate = progress.textsDone / Math.max(1, progress.elapsedMs)
    progress.etaMs = progress.textsDone > 0 ? Math.round(Math.max(0, progress.textsTotal - progress.textsDone) / rate) : null
    this.onProgress?.({ ...progress })
  }

  report(switched: boolean, chunks: number): SwitchReport {
    return {
      switched,
      cancelled: !switched,
      from: this.from,
      to: this.to,
      texts_embedded: this.progress.textsDone,
      chunks_switched: chunks,
      ms: Date.now() - this.started,
    }
  }
}

/**
 * Embeds the texts the new model has no vector for, a batch at a time, into the cache only (the
 * index still answers with the old vectors). False when cancelled.
 */
async function buildVectors(db: Db, target: Embedder, run: SwitchRun, signal: AbortSignal | undefined): Promise<boolean> {
  for (;;) {
    if (signal?.aborted) return false
    const { rows } = await db.query<{ embed_hash: string; heading: string; text: string }>(
      `SELECT DISTINCT ON (c.embed_hash) c.embed_hash, c.heading, c.text FROM chunks c
        WHERE ${MISSING_WHERE} ORDER BY c.embed_hash LIMIT ${SWITCH_BATCH}`,
      [target.id],
    )
    if (rows.length === 0) return true
    let vectors: Float32Array[]
    try {
      vectors = await target.embedDocuments(
        rows.map((r) => embeddingText(r.heading ? r.heading.split(' > ') : [], r.text)),
        signal,
      )
    } catch (err) {
      if (signal?.aborted) continue
      throw err
    }
    await storeEmbeddings(
      db,
      target.id,
      rows.map((r, i) => ({ hash: r.embed_hash, embedding: vectors[i]! })),
    )
    run.progress.textsDone += rows.length
    run.progress.textsTotal = Math.max(run.progress.textsTotal, run.progress.textsDone)
    run.emit()
  }
}

/**
 * In one transaction: every chunk takes the new model's vector, its HNSW index is built, the old
 * one dropped and the new model recorded. Throws NotReady when a chunk still lacks a vector (an
 * import added text meanwhile). Returns the chunks whose vectors were replaced.
 */
async function swapVectors(tx: Queryable, target: Embedder, from: string | null): Promise<number> {
  const { rows: left } = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM chunks c WHERE ${MISSING_WHERE}`, [
    target.id,
  ])
  if (Number(left[0]?.n ?? 0) > 0) throw new NotReady()
  const { rows: updated } = await tx.query<{ n: number }>(
    `WITH u AS (
       UPDATE chunks c SET embedding = e.embedding, embedding_model = e.model_id
         FROM embedding_cache e
        WHERE e.model_id = $1 AND e.embed_hash = c.embed_hash AND c.embedding_model IS DISTINCT FROM $1
       RETURNING 1)
     SELECT count(*)::int AS n FROM u`,
    [target.id],
  )
  await ensureVectorIndex(tx, target.id, target.dims)
  if (from && from !== target.id) await tx.exec(`DROP INDEX IF EXISTS ${vectorIndexName(from)}`)
  await writeIndexModel(tx, { id: target.id, dims: target.dims })
  return Number(updated[0]?.n ?? 0)
}
