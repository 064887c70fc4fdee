import path from 'node:path'
import type { Db } from '../store/db'
import { markSynced, upsertCollection } from '../store/writer'
import { type TokenCounter, chunkerSignature } from './chunker'
import type { WalkIssue } from './walk'
import { finishImportJob, recordImportProgress, startImportJob } from './jobs'
import { type PreparedDocument, chunkParsed } from './sync/chunk'
import { type EmbedderLike, embedBatch } from './sync/embed'
import { parsePlanned, readPlanned } from './sync/parse'
import { type PlannedFile, planSync } from './sync/plan'
import { ProgressReporter } from './sync/progress'
import { StageTimer } from './sync/timings'
import { DocumentWriter, pruneDeleted, writeFailure, writeTouched } from './sync/write'
import type { ImportProgress, ImportReport } from '../../shared/api'

// The report and progress cross to the app as they are: their one definition is the contract's.
export type { ImportProgress, ImportReport }

// Declared with the embed stage; callers of the importer name them from here.
export type { EmbedderLike }
export { embedMissing } from './sync/embed'

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

/** Documents are embedded and written in batches of about this many chunk texts. */
const EMBED_FLUSH_TEXTS = 64

/**
 * Imports (syncs) a folder into a collection. A full import is recorded as a job in import_jobs
 * (jobs.ts) so that one stopped by a crash or a quit can be resumed: by importing again.
 */
export async function importFolder(db: Db, folder: string, opts: ImportOptions): Promise<ImportReport> {
  const root = path.resolve(folder)
  await upsertCollection(db, opts.collection, root, { kinds: opts.kinds })
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

/**
 * One sync of a folder, as a pipeline of stages (sync/): plan (walk, compare with the store), then
 * per file parse and chunk, per batch embed and write, and last prune what is gone. Every document
 * is written whole in one transaction, so a cancel or a crash leaves only complete documents and
 * the next sync picks up the rest.
 */
async function syncFolder(db: Db, root: string, opts: ImportOptions, jobId: string | null): Promise<ImportReport> {
  const started = Date.now()
  const { collection, signal } = opts
  const signature = chunkerSignature(opts.tokenCounter)
  const timer = new StageTimer()
  const progress = new ProgressReporter(collection, started, opts.onProgress)
  const p = progress.state
  const notices: string[] = []
  progress.emit(true)

  const plan = await planSync(db, root, { collection, signature, onlyPaths: opts.onlyPaths, signal }, timer)
  const { walk } = plan
  const failed: WalkIssue[] = [...walk.failed]
  p.filesTotal = walk.files.length
  p.skipped = walk.skipped.length
  p.failed = failed.length
  p.bytesTotal = walk.files.reduce((s, f) => s + f.size, 0)
  p.phase = 'importing'
  progress.startWork()
  progress.emit(true)
  let lastJobUpdate = Date.now()
  if (jobId) await recordImportProgress(db, jobId, 0, walk.files.length)

  const fail = async (item: PlannedFile, reason: string) => {
    failed.push({ relativePath: item.file.relativePath, reason })
    await writeFailure(db, collection, item, reason)
    opts.onDocument?.({ path: item.file.relativePath, change: 'failed', reason })
    p.failed++
  }

  /** Parse and chunk one file; null when there is nothing to write (unchanged, or failed and recorded). */
  const prepare = async (item: PlannedFile): Promise<PreparedDocument | null> => {
    if (item.decision === 'unchanged') {
      p.unchanged++
      return null
    }
    const read = await readPlanned(item, timer)
    if (read.status === 'unreadable') {
      await fail(item, read.reason)
      return null
    }
    progress.worked(item.file.size)
    if (read.status === 'same') {
      await writeTouched(db, item)
      p.unchanged++
      return null
    }
    try {
      const parsed = await parsePlanned(item, read, opts.kinds, timer)
      const t0 = performance.now()
      const prepared = chunkParsed(item, parsed, { collection, signature, tokenCounter: opts.tokenCounter })
      timer.add('chunk', performance.now() - t0)
      return prepared
    } catch (err) {
      await fail(item, err instanceof Error ? err.message : String(err))
      return null
    }
  }

  let embedder = opts.embedder
  const writer = new DocumentWriter(db, timer)
  const pending: PreparedDocument[] = []
  let pendingTexts = 0
  const flush = async () => {
    if (pending.length === 0) return
    const batch = pending.splice(0, pending.length)
    pendingTexts = 0
    if (embedder) {
      p.phase = 'embedding'
      progress.emit()
      const onEmbedded = (n: number) => {
        p.textsEmbedded += n
        progress.emit()
      }
      const problem = await embedBatch(db, embedder, batch, { signal, timer, onEmbedded })
      if (problem) {
        // Keep importing text for keyword search; the vectors are filled in once the model works.
        notices.push(problem)
        embedder = null
      }
      p.phase = 'importing'
    }
    await writer.write(batch, (d) => {
      p.imported++
      p.chunksWritten += d.chunks.length
      opts.onDocument?.({ path: d.doc.path, change: d.change })
    })
    progress.emit()
    if (jobId && Date.now() - lastJobUpdate > 1000) {
      lastJobUpdate = Date.now()
      await recordImportProgress(db, jobId, p.filesDone, p.filesTotal)
    }
  }

  let cancelled = false
  try {
    for (const item of plan.files) {
      if (signal?.aborted) {
        cancelled = true
        break
      }
      p.currentFile = item.file.relativePath
      progress.emit()
      const prepared = await prepare(item)
      if (prepared) {
        pending.push(prepared)
        pendingTexts += prepared.texts.length
      }
      progress.fileDone(item.file.size)
      if (pendingTexts >= EMBED_FLUSH_TEXTS) await flush()
    }
    if (!cancelled) await flush()
  } catch (err) {
    if (!signal?.aborted) throw err
    cancelled = true
  }

  let pruned = 0
  if (!cancelled) {
    // Pending documents not yet written when cancelled are simply not imported: each written
    // document is complete, and the next sync picks up the rest.
    p.phase = 'pruning'
    progress.emit(true)
    pruned = await pruneDeleted(db, collection, plan.deleted, (path) => opts.onDocument?.({ path, change: 'removed' }))
    await markSynced(db, collection, { full: !opts.onlyPaths })
  } else {
    notices.push('Import cancelled: documents finished so far are searchable; run it again to continue.')
  }
  if (jobId) await recordImportProgress(db, jobId, p.filesDone, p.filesTotal)

  const { rows } = await db.query<{ n: number }>('SELECT chunk_count AS n FROM collections WHERE id = $1', [collection])
  p.phase = cancelled ? 'cancelled' : 'done'
  p.currentFile = null
  progress.emit(true)
  if (!opts.embedder)
    notices.push('No embedding model is installed: imported for keyword search; vector search starts once a model is installed.')
  return {
    collection,
    root,
    files_seen: walk.files.length + walk.skipped.length + walk.failed.length,
    imported: p.imported,
    unchanged: p.unchanged,
    skipped: walk.skipped.length,
    failed: failed.map((f) => ({ path: f.relativePath, reason: f.reason })),
    skipped_files: walk.skipped.map((s) => ({ path: s.relativePath, reason: s.reason })),
    pruned,
    chunks_total: Number(rows[0]?.n ?? 0),
    chunks_written: p.chunksWritten,
    texts_embedded: p.textsEmbedded,
    cancelled,
    notices,
    ms: Date.now() - started,
    timings: timer.rounded(),
  }
}
