import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Db } from '../store/db'
import { chunkId, documentId, sha256Hex } from '../store/ids'
import { toVectorLiteral } from '../store/vector-index'
import { ensureFreeSpace, MIN_FREE_BYTES } from '../store/disk-space'
import {
  type ChunkRow,
  type DocumentRow,
  cachedEmbeddings,
  deleteDocument,
  documentStates,
  markFailed,
  markSynced,
  replaceDocument,
  storeEmbeddings,
  touchDocument,
  upsertCollection,
  vacuumHotTables,
} from '../store/writer'
import { extractExactTerms, countWords } from '../retrieve/exact-terms'
import { type TokenCounter, chunkDocument, chunkerSignature, embeddingText, DEFAULT_CHUNK_OPTIONS } from './chunker'
import { detectKind, detectVersion } from './versions'
import { describeFsError, normaliseRelativePaths, walkFolder, walkPaths, type WalkIssue } from './walk'
import { parseFile, parserFor } from './parsers/index'
import { finishImportJob, recordImportProgress, startImportJob } from './jobs'
import type { ImportProgress, ImportReport } from '../../shared/api'

// The report and progress cross to the app as they are: their one definition is the contract's.
export type { ImportProgress, ImportReport }

/** What the importer needs from an embedding model (see models/embedder.ts). */
export interface EmbedderLike {
  id: string
  dims: number
  embedDocuments(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>
}

/** One document the import added, changed, removed or could not read (the watcher's change sets). */
export interface DocumentChange {
  path: string
  change: 'added' | 'changed' | 'removed' | 'failed'
  reason?: string
}

export interface ImportOptions {
  collection: string
  embedder: EmbedderLike | null
  tokenCounter: TokenCounter
  signal?: AbortSignal
  onProgress?: (p: ImportProgress) => void
  /** Per-collection mapping from first path segment to a source kind label. */
  kinds?: Record<string, string>
  /**
   * Sync only these paths (relative to the folder; files or folders): each is imported, updated
   * or, when gone, removed with anything under it; nothing else is looked at or pruned. For the
   * folder watcher. Without it the whole folder is walked and documents no longer there are pruned.
   */
  onlyPaths?: readonly string[]
  onDocument?: (change: DocumentChange) => void
}

const MB = 1024 * 1024
/** Text formats above this are refused with a reason rather than read into memory whole. */
export const MAX_TEXT_BYTES = 20 * MB
export const MAX_BINARY_BYTES = 300 * MB
const EMBED_FLUSH_TEXTS = 64

function maxBytesFor(rel: string): number {
  return /\.(pdf|docx)$/i.test(rel) ? MAX_BINARY_BYTES : MAX_TEXT_BYTES
}

interface PendingDoc {
  doc: DocumentRow
  chunks: ChunkRow[]
  texts: string[]
}

/**
 * Imports (syncs) a folder into a collection. A full import is recorded as a job in import_jobs
 * (jobs.ts) so that one stopped by a crash or a quit can be resumed: by importing again.
 */
export async function importFolder(db: Db, folder: string, opts: ImportOptions): Promise<ImportReport> {
  const root = path.resolve(folder)
  await upsertCollection(db, opts.collection, root, opts.kinds ? { kinds: opts.kinds } : {})
  // A watcher's path sync is not a job: if it dies, the watcher's catch-up sync on start redoes it.
  if (opts.onlyPaths) return syncFolder(db, root, opts, null)
  const jobId = await startImportJob(db, opts.collection, root)
  try {
    const report = await syncFolder(db, root, opts, jobId)
    await finishImportJob(db, jobId, report.cancelled ? 'cancelled' : 'done')
    return report
  } catch (err) {
    await finishImportJob(db, jobId, 'failed', err instanceof Error ? err.message : String(err)).catch(() => undefined)
    throw err
  }
}

async function syncFolder(db: Db, root: string, opts: ImportOptions, jobId: string | null): Promise<ImportReport> {
  const started = Date.now()
  const collection = opts.collection
  const signature = chunkerSignature(opts.tokenCounter)
  const notices: string[] = []
  const failed: WalkIssue[] = []
  let embedder = opts.embedder
  const onlyPaths = opts.onlyPaths ? normaliseRelativePaths(opts.onlyPaths) : null
  const onlySet = new Set(onlyPaths)
  /** Whether this run may prune a stored document: any in a full sync, else the paths given and what is under them. */
  const inScope = (rel: string): boolean => {
    if (!onlyPaths || onlySet.has(rel)) return true
    const segs = rel.split('/')
    for (let i = 1; i < segs.length; i++) if (onlySet.has(segs.slice(0, i).join('/'))) return true
    return false
  }
  const timings = { walk: 0, read: 0, parse: 0, chunk: 0, embed: 0, write: 0 }
  const timed = async <T>(key: keyof typeof timings, fn: () => Promise<T> | T): Promise<T> => {
    const t0 = performance.now()
    try {
      return await fn()
    } finally {
      timings[key] += performance.now() - t0
    }
  }

  const progress: ImportProgress = {
    phase: 'scanning',
    collection,
    filesTotal: 0,
    filesDone: 0,
    currentFile: null,
    imported: 0,
    unchanged: 0,
    failed: 0,
    skipped: 0,
    chunksWritten: 0,
    textsEmbedded: 0,
    bytesTotal: 0,
    bytesDone: 0,
    elapsedMs: 0,
    etaMs: null,
  }
  let lastEmit = 0
  // The rate counts only documents read since the import phase began (see ImportProgress.etaMs).
  let workStarted = 0
  let bytesWorked = 0
  const emit = (force = false) => {
    const now = Date.now()
    if (!force && now - lastEmit < 100) return
    lastEmit = now
    progress.elapsedMs = now - started
    const rate = bytesWorked / Math.max(1, now - workStarted)
    progress.etaMs =
      progress.phase === 'done'
        ? 0
        : bytesWorked > 0 && rate > 0
          ? Math.round((progress.bytesTotal - progress.bytesDone) / rate)
          : null
    opts.onProgress?.({ ...progress })
  }
  emit(true)

  const walkOptions = {
    isSupported: (rel: string) => parserFor(rel) !== null,
    maxBytes: maxBytesFor,
    ...(opts.signal ? { signal: opts.signal } : {}),
  }
  const walk = await timed('walk', () => (onlyPaths ? walkPaths(root, onlyPaths, walkOptions) : walkFolder(root, walkOptions)))
  failed.push(...walk.failed)
  progress.filesTotal = walk.files.length
  progress.skipped = walk.skipped.length
  progress.failed = failed.length
  progress.bytesTotal = walk.files.reduce((s, f) => s + f.size, 0)
  progress.phase = 'importing'
  workStarted = Date.now()
  emit(true)
  let lastJobUpdate = Date.now()
  if (jobId) await recordImportProgress(db, jobId, 0, walk.files.length)

  const states = await documentStates(db, collection)
  const seen = new Set<string>([...walk.files.map((f) => f.relativePath), ...walk.skipped.map((s) => s.relativePath)])
  const pending: PendingDoc[] = []
  let pendingTexts = 0

  const flush = async () => {
    if (pending.length === 0) return
    const batch = pending.splice(0, pending.length)
    pendingTexts = 0
    if (embedder) {
      progress.phase = 'embedding'
      emit()
      try {
        await embedInto(
          db,
          embedder,
          batch,
          opts.signal,
          (n) => {
            progress.textsEmbedded += n
            emit()
          },
          (ms) => (timings.embed += ms),
        )
      } catch (err) {
        if (opts.signal?.aborted) throw err
        // The model failed (out of memory, broken file): keep importing text; vector search waits.
        notices.push(
          `The embedding model failed (${err instanceof Error ? err.message : String(err)}); documents were imported for keyword search and will be embedded later.`,
        )
        embedder = null
        for (const p of batch) {
          for (const c of p.chunks) {
            c.embedding = null
            c.embeddingModel = null
          }
        }
      }
      progress.phase = 'importing'
    }
    // Room for this batch several times over (text, vectors, index entries, WAL), checked before
    // writing: a full disk must stop the import with a reason, not inside the database.
    const batchBytes = batch.reduce(
      (n, p) => n + p.chunks.reduce((m, c) => m + c.text.length * 4 + (c.embedding ? c.embedding.length * 8 : 0), 0),
      0,
    )
    await ensureFreeSpace(db.dataDir, MIN_FREE_BYTES + batchBytes * 4)
    for (const p of batch) {
      await timed('write', () => replaceDocument(db, p.doc, p.chunks))
      progress.imported++
      progress.chunksWritten += p.chunks.length
      if (progress.imported % 500 === 0) await timed('write', () => vacuumHotTables(db))
      opts.onDocument?.({ path: p.doc.path, change: states.has(p.doc.path) ? 'changed' : 'added' })
    }
    emit()
    if (jobId && Date.now() - lastJobUpdate > 1000) {
      lastJobUpdate = Date.now()
      await recordImportProgress(db, jobId, progress.filesDone, progress.filesTotal)
    }
  }

  let cancelled = false
  try {
    for (const file of walk.files) {
      if (opts.signal?.aborted) {
        cancelled = true
        break
      }
      progress.currentFile = file.relativePath
      emit()
      const docId = documentId(collection, file.relativePath)
      const state = states.get(file.relativePath)
      const upToDate = state && state.status === 'indexed' && state.chunker === signature
      if (upToDate && state.size === file.size && state.mtime_ms === file.mtimeMs) {
        progress.unchanged++
        progress.filesDone++
        progress.bytesDone += file.size
        continue
      }
      let bytes: Uint8Array
      try {
        bytes = await timed('read', () => readFile(file.absolutePath))
      } catch (err) {
        const reason = describeFsError(err)
        failed.push({ relativePath: file.relativePath, reason })
        await markFailed(db, {
          id: docId,
          collectionId: collection,
          path: file.relativePath,
          size: file.size,
          mtimeMs: file.mtimeMs,
          error: reason,
        })
        opts.onDocument?.({ path: file.relativePath, change: 'failed', reason })
        progress.failed++
        progress.filesDone++
        progress.bytesDone += file.size
        continue
      }
      bytesWorked += file.size
      const sha = sha256Hex(bytes)
      if (upToDate && state.sha256 === sha) {
        await touchDocument(db, docId, file.mtimeMs)
        progress.unchanged++
        progress.filesDone++
        progress.bytesDone += file.size
        continue
      }
      try {
        const parsed = await timed('parse', () => parseFile(bytes, file.relativePath))
        const version = detectVersion(file.relativePath, parsed.meta)
        const kind = detectKind(file.relativePath, opts.kinds)
        const t0 = performance.now()
        const chunks = chunkDocument(parsed, opts.tokenCounter, DEFAULT_CHUNK_OPTIONS)
        const rows: ChunkRow[] = []
        const texts: string[] = []
        for (const c of chunks) {
          const text = embeddingText(c.breadcrumb, c.text)
          texts.push(text)
          rows.push({
            id: chunkId(collection, file.relativePath, c.breadcrumb, c.ordinal),
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
        timings.chunk += performance.now() - t0
        pending.push({
          doc: {
            id: docId,
            collectionId: collection,
            path: file.relativePath,
            size: file.size,
            mtimeMs: file.mtimeMs,
            sha256: sha,
            version,
            kind,
            title: parsed.title,
            pageCount: parsed.pageCount ?? null,
            chunker: signature,
          },
          chunks: rows,
          texts,
        })
        pendingTexts += texts.length
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err)
        failed.push({ relativePath: file.relativePath, reason })
        await markFailed(db, {
          id: docId,
          collectionId: collection,
          path: file.relativePath,
          size: file.size,
          mtimeMs: file.mtimeMs,
          error: reason,
        })
        opts.onDocument?.({ path: file.relativePath, change: 'failed', reason })
        progress.failed++
      }
      progress.filesDone++
      progress.bytesDone += file.size
      if (pendingTexts >= EMBED_FLUSH_TEXTS) await flush()
    }
    if (!cancelled) await flush()
  } catch (err) {
    if (!opts.signal?.aborted) throw err
    cancelled = true
  }

  let pruned = 0
  if (!cancelled) {
    // Pending documents not yet written when cancelled are simply not imported: each written
    // document is complete, and the next sync picks up the rest.
    progress.phase = 'pruning'
    emit(true)
    for (const [p, state] of states) {
      if (!seen.has(p) && inScope(p)) {
        await deleteDocument(db, state.id, collection)
        opts.onDocument?.({ path: p, change: 'removed' })
        pruned++
      }
    }
    await markSynced(db, collection, { full: !opts.onlyPaths })
  } else {
    notices.push('Import cancelled: documents finished so far are searchable; run it again to continue.')
  }
  if (jobId) await recordImportProgress(db, jobId, progress.filesDone, progress.filesTotal)

  const { rows } = await db.query<{ n: number }>('SELECT chunk_count AS n FROM collections WHERE id = $1', [collection])
  progress.phase = cancelled ? 'cancelled' : 'done'
  progress.currentFile = null
  emit(true)
  if (!opts.embedder)
    notices.push('No embedding model is installed: imported for keyword search; vector search starts once a model is installed.')
  return {
    collection,
    root,
    files_seen: walk.files.length + walk.skipped.length + walk.failed.length,
    imported: progress.imported,
    unchanged: progress.unchanged,
    skipped: walk.skipped.length,
    failed: failed.map((f) => ({ path: f.relativePath, reason: f.reason })),
    skipped_files: walk.skipped.map((s) => ({ path: s.relativePath, reason: s.reason })),
    pruned,
    chunks_total: Number(rows[0]?.n ?? 0),
    chunks_written: progress.chunksWritten,
    texts_embedded: progress.textsEmbedded,
    cancelled,
    notices,
    ms: Date.now() - started,
    timings: Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)])) as ImportReport['timings'],
  }
}

/** Fills the embeddings of pending chunks: cache hits first, the model only for new text. */
async function embedInto(
  db: Db,
  embedder: EmbedderLike,
  batch: PendingDoc[],
  signal: AbortSignal | undefined,
  onEmbedded: (n: number) => void,
  onModelMs: (ms: number) => void,
): Promise<void> {
  const all: { row: ChunkRow; text: string }[] = []
  for (const p of batch) p.chunks.forEach((row, i) => all.push({ row, text: p.texts[i]! }))
  const cached = await cachedEmbeddings(db, embedder.id, [...new Set(all.map((a) => a.row.embedHash))])
  const missing = new Map<string, string>()
  for (const a of all) if (!cached.has(a.row.embedHash)) missing.set(a.row.embedHash, a.text)
  if (missing.size > 0) {
    const hashes = [...missing.keys()]
    const t0 = performance.now()
    const vectors = await embedder.embedDocuments([...missing.values()], signal)
    onModelMs(performance.now() - t0)
    const fresh = hashes.map((hash, i) => ({ hash, embedding: vectors[i]! }))
    await storeEmbeddings(db, embedder.id, fresh)
    for (const f of fresh) cached.set(f.hash, f.embedding)
    onEmbedded(fresh.length)
  }
  for (const a of all) {
    a.row.embedding = cached.get(a.row.embedHash) ?? null
    a.row.embeddingModel = a.row.embedding ? embedder.id : null
  }
}

/**
 * Embeds every chunk not yet embedded by `embedder` (imported before a model was installed, or
 * embedded by a previous model). Identical text is served from the cache.
 */
export async function embedMissing(
  db: Db,
  embedder: EmbedderLike,
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
    const cached = await cachedEmbeddings(db, embedder.id, [...new Set(rows.map((r) => r.embed_hash))])
    const missing = new Map<string, string>()
    for (const r of rows) {
      if (!cached.has(r.embed_hash)) missing.set(r.embed_hash, embeddingText(r.heading ? r.heading.split(' > ') : [], r.text))
    }
    if (missing.size) {
      const hashes = [...missing.keys()]
      const vectors = await embedder.embedDocuments([...missing.values()], opts.signal)
      const fresh = hashes.map((hash, i) => ({ hash, embedding: vectors[i]! }))
      await storeEmbeddings(db, embedder.id, fresh)
      for (const f of fresh) cached.set(f.hash, f.embedding)
      embedded += fresh.length
    }
    fromCache += rows.length - missing.size
    await db.transaction(async (tx) => {
      for (const r of rows) {
        const v = cached.get(r.embed_hash)!
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
