import { realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Db } from '../store/db'
import { collectionOcr, collectionRoot } from '../store/collections'
import { markSynced, upsertCollection } from '../store/writer'
import type { Embedder, TokenCounter } from '../core/model-ports'
import { chunkerSignature } from './chunker'
import { finishImportJob, recordImportProgress, startImportJob } from './jobs'
import { PARSERS_VERSION } from './parsers/formats'
import type { PreparedDocument } from './sync/chunk'
import { embedBatch } from './sync/embed'
import { FilePreparer } from './sync/prepare'
import { failStoppedReading } from './sync/reading'
import { planSync, type SyncPlan } from './sync/plan'
import { ProgressReporter } from './sync/progress'
import { StageTimer } from './sync/timings'
import type { ParsePool } from './parsers/worker-pool'
import { DocumentWriter, pruneDeleted } from './sync/write'
import type { ImportProgress, ImportReport } from '../../shared/api'

// The report and progress cross to the app as they are: their one definition is the contract's.
export type { ImportProgress, ImportReport }

export { embedMissing } from './sync/embed'

/** One document the import added, changed, removed or could not read (the watcher's change sets). */
export interface DocumentChange {
  path: string
  change: 'added' | 'changed' | 'removed' | 'failed'
  reason?: string
}

export interface ImportOptions {
  collection: string
  embedder: Embedder | null
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
  /**
   * Go on with a full sync that would remove every document of the collection (the folder is
   * empty now). Without it such a sync removes nothing and throws `would_empty_collection`: an
   * unmounted drive or a moved folder looks exactly like an emptied one. Never set for watchers.
   */
  allowEmpty?: boolean
  /** Where files are parsed; the shared parser worker by default (tests give one with a short time limit). */
  parsePool?: ParsePool
}

/**
 * An import refused before it changed anything, with the reason for the person:
 * - `folder_missing`: the folder is not there (or not a folder);
 * - `other_folder`: the collection holds documents of another folder;
 * - `would_empty_collection`: every document of the collection would be removed (see `allowEmpty`).
 */
export class ImportRefusedError extends Error {
  override readonly name = 'ImportRefusedError'
  constructor(
    message: string,
    readonly code: 'folder_missing' | 'other_folder' | 'would_empty_collection',
  ) {
    super(message)
  }
}

/** The same folder, named the same way or through a symlink. */
async function sameFolder(a: string, b: string): Promise<boolean> {
  if (path.resolve(a) === path.resolve(b)) return true
  const [ra, rb] = await Promise.all([realpath(a).catch(() => null), realpath(b).catch(() => null)])
  return ra !== null && ra === rb
}

/**
 * Refuses an import that would do harm before it touches the collection: a folder that is not
 * there, or a folder other than the one the collection came from (its documents would all be
 * pruned and replaced). Checked here, in the engine, so the CLI, the MCP server and the app all
 * get it.
 */
async function checkFolder(db: Db, root: string, collection: string): Promise<void> {
  const existing = await collectionRoot(db, collection)
  if (existing && !(await sameFolder(existing.root, root))) {
    throw new ImportRefusedError(
      `The collection "${collection}" holds documents from ${existing.root}, not ${root}. ` +
        `Import ${root} under another collection name, or remove "${collection}" first if it should now come from ${root}.`,
      'other_folder',
    )
  }
  const st = await stat(root).catch(() => null)
  if (!st?.isDirectory()) {
    throw new ImportRefusedError(
      existing
        ? `The folder ${root} of collection "${collection}" is not there (a drive not connected, or the folder moved or renamed?). Nothing in the collection was changed.`
        : `${root} is not a folder that can be read.`,
      'folder_missing',
    )
  }
}

/** Documents are embedded and written in batches of about this many chunk texts. */
const EMBED_FLUSH_TEXTS = 64

/**
 * What a document must have been read with to count as current: the chunker (and its tokenizer)
 * and the parsers, and whether text recognition was off. A change of any reads every document
 * again on its next sync (embeddings of unchanged text come from the cache), and tries again the
 * files that failed: turning recognition on retries the scans refused or left out while it was
 * off, turning it off drops the recognised text. On (the default) adds nothing to the signature.
 */
export function importSignature(counter: TokenCounter, ocr = true): string {
  return `${chunkerSignature(counter)};parsers=${PARSERS_VERSION}${ocr ? '' : ';ocr=off'}`
}

/**
 * Imports (syncs) a folder into a collection. A full import is recorded as a job in import_jobs
 * (jobs.ts) so that one stopped by a crash or a quit can be resumed: by importing again.
 */
export async function importFolder(db: Db, folder: string, opts: ImportOptions): Promise<ImportReport> {
  const root = path.resolve(folder)
  await checkFolder(db, root, opts.collection)
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
 * Refuses a sync that would remove every document of the collection unless the person confirmed
 * it: an unmounted drive or a moved folder looks just like an emptied one, and removing every
 * document on its say-so would lose the whole index without a word. Never for a watcher's sync.
 */
function checkNotEmptying(plan: SyncPlan, root: string, collection: string, opts: ImportOptions): void {
  if (plan.stored > 0 && plan.deleted.length === plan.stored && !(opts.allowEmpty && !opts.onlyPaths)) {
    throw new ImportRefusedError(
      `This sync would remove all ${plan.stored} documents of "${collection}": ${root} ` +
        (plan.walk.files.length === 0 ? 'has none of its files now' : 'has none of the files it was imported with') +
        ' (a drive not connected, or the folder moved?). Nothing was removed. If the folder really changed, confirm the sync to empty the collection, or remove the collection.',
      'would_empty_collection',
    )
  }
}

/** The notices of a finished sync, after the ones gathered on the way. */
function closingNotices(files: FilePreparer, opts: ImportOptions): string[] {
  const out = [...files.notices]
  const n = files.notRetried
  if (n > 0)
    out.push(
      `${n} file${n === 1 ? '' : 's'} that failed before ${n === 1 ? 'was' : 'were'} not read again (unchanged since); ${n === 1 ? 'it is' : 'they are'} tried again when changed.`,
    )
  if (!opts.embedder)
    out.push('No embedding model is installed: imported for keyword search; vector search starts once a model is installed.')
  return out
}

/**
 * One sync of a folder, as a pipeline of stages (sync/): plan (walk, compare with the store), then
 * per file read, parse and chunk (sync/prepare.ts), per batch embed and write, and last prune what
 * is gone. Every document is written whole in one transaction, so a cancel or a crash leaves only
 * complete documents and the next sync picks up the rest; a document that fails at any stage,
 * writing included, is that file's failure and the rest of the folder goes on.
 */
async function syncFolder(db: Db, root: string, opts: ImportOptions, jobId: string | null): Promise<ImportReport> {
  const started = Date.now()
  const ocr = await collectionOcr(db, opts.collection)
  return new FolderSync(db, root, opts, jobId, started, ocr).run()
}

/** The state of one sync while it runs: its progress, its notices and the batch waiting to be embedded and written. */
class FolderSync {
  private readonly signature: string
  private readonly timer = new StageTimer()
  private readonly progress: ProgressReporter
  private readonly notices: string[] = []
  private embedder: Embedder | null
  private readonly writer: DocumentWriter
  private readonly pending: PreparedDocument[] = []
  private pendingTexts = 0
  private lastJobUpdate = 0
  /**
   * The batch being embedded and written while the next one is read, parsed and chunked: the
   * embedder works in its own thread and the parser in another, so neither waits for the other
   * (one batch at a time, so memory stays bounded and documents are written in order).
   */
  private inFlight: Promise<void> | null = null

  constructor(
    private readonly db: Db,
    private readonly root: string,
    private readonly opts: ImportOptions,
    private readonly jobId: string | null,
    private readonly started: number,
    private readonly ocr: boolean,
  ) {
    this.signature = importSignature(opts.tokenCounter, ocr)
    this.progress = new ProgressReporter(opts.collection, started, opts.onProgress)
    this.writer = new DocumentWriter(db, this.timer)
    this.embedder = opts.embedder
  }

  async run(): Promise<ImportReport> {
    this.progress.emit(true)
    const plan = await this.plan()
    const files = this.preparer(plan)
    await this.startImporting(plan)
    let cancelled = await this.importFiles(plan, files)
    // A walk stopped by the signal lists only part of the folder: what it did not reach is not gone.
    if (this.opts.signal?.aborted) cancelled = true
    const pruned = await this.finish(plan, cancelled)
    return this.report(plan, files, pruned, cancelled)
  }

  /** Walks the folder and compares it with the store; refuses a sync that would empty the collection. */
  private async plan(): Promise<SyncPlan> {
    const { db, root, opts } = this
    // Before the plan, so that it sees the file the engine stopped on as failed, unread since.
    const stoppedOn = await failStoppedReading(db, opts.collection)
    const plan = await planSync(
      db,
      root,
      { collection: opts.collection, signature: this.signature, onlyPaths: opts.onlyPaths, signal: opts.signal },
      this.timer,
    )
    checkNotEmptying(plan, root, opts.collection, opts)
    if (stoppedOn)
      this.notices.push(
        `${stoppedOn}: the engine stopped while reading this file in the last import; it is listed as failed and tried again when it changes.`,
      )
    if (plan.kept > 0) {
      const where = plan.walk.unlisted.map((u) => (u === '.' ? root : u)).join(', ')
      this.notices.push(
        `${plan.kept} document${plan.kept === 1 ? ' was' : 's were'} kept because ${where} could not be opened; they stay searchable until it can be read again.`,
      )
    }
    return plan
  }

  /** Reads, parses and chunks one planned file at a time (sync/prepare.ts). */
  private preparer(plan: SyncPlan): FilePreparer {
    const { opts } = this
    return new FilePreparer(
      {
        db: this.db,
        root: plan.walk.root,
        collection: opts.collection,
        signature: this.signature,
        tokenCounter: opts.tokenCounter,
        kinds: opts.kinds,
        ocr: this.ocr,
        signal: opts.signal,
        pool: opts.parsePool,
        timer: this.timer,
        progress: this.progress,
        onFailed: (path, reason) => opts.onDocument?.({ path, change: 'failed', reason }),
      },
      plan.walk.failed,
    )
  }

  private async startImporting({ walk }: SyncPlan): Promise<void> {
    const p = this.progress.state
    p.filesTotal = walk.files.length
    p.skipped = walk.skipped.length
    p.failed = walk.failed.length
    p.bytesTotal = walk.files.reduce((s, f) => s + f.size, 0)
    p.phase = 'importing'
    this.progress.startWork()
    this.progress.emit(true)
    this.lastJobUpdate = Date.now()
    if (this.jobId) await recordImportProgress(this.db, this.jobId, 0, walk.files.length)
  }

  /** Prepares the planned files in turn, embedding and writing them in batches. True when cancelled. */
  private async importFiles(plan: SyncPlan, files: FilePreparer): Promise<boolean> {
    const { signal } = this.opts
    let cancelled = false
    try {
      // Long scans put back by the first pass (DEFER_OCR_OVER) are read last, in the same import.
      for (const [list, defer] of [
        [plan.files, true],
        [files.deferred, false],
      ] as const) {
        for (const item of list) {
          if (signal?.aborted) {
            cancelled = true
            break
          }
          this.progress.state.currentFile = item.file.relativePath
          this.progress.emit()
          const prepared = await files.prepare(item, defer)
          if (prepared) {
            this.pending.push(prepared)
            this.pendingTexts += prepared.texts.length
          }
          if (defer && files.deferred.at(-1) === item) continue
          this.progress.fileDone(item.file.size)
          if (this.pendingTexts >= EMBED_FLUSH_TEXTS) await this.flush(files)
        }
      }
      if (!cancelled) await this.flush(files)
      await this.settle()
    } catch (err) {
      // The batch in flight ends (cancelled or failed) before the sync reports: nothing runs after it.
      await this.settle().catch(() => undefined)
      if (!signal?.aborted) throw err
      cancelled = true
    }
    return cancelled
  }

  /** Waits for the batch in flight; its failure is the sync's. */
  private async settle(): Promise<void> {
    const running = this.inFlight
    this.inFlight = null
    if (running) await running
  }

  /**
   * Hands the waiting batch to be embedded and written, after the batch before it is done, and
   * returns without waiting for it: the next files are read meanwhile (see `inFlight`).
   */
  private async flush(files: FilePreparer): Promise<void> {
    if (this.pending.length === 0) return
    const batch = this.pending.splice(0, this.pending.length)
    this.pendingTexts = 0
    await this.settle()
    const running = this.embedAndWrite(batch, files)
    // Seen by settle(); until then a failure must not surface as an unhandled rejection.
    running.catch(() => undefined)
    this.inFlight = running
  }

  /** Embeds one batch (while the model works) and writes it, each document in one transaction. */
  private async embedAndWrite(batch: PreparedDocument[], files: FilePreparer): Promise<void> {
    const { db, opts, progress } = this
    const p = progress.state
    if (this.embedder) {
      p.phase = 'embedding'
      progress.emit()
      const onEmbedded = (n: number) => {
        p.textsEmbedded += n
        progress.emit()
      }
      const problem = await embedBatch(db, this.embedder, batch, { signal: opts.signal, timer: this.timer, onEmbedded })
      if (problem) {
        // Keep importing text for keyword search; the vectors are filled in once the model works.
        this.notices.push(problem)
        this.embedder = null
      }
      p.phase = 'importing'
    }
    const written = (d: PreparedDocument) => {
      p.imported++
      p.chunksWritten += d.chunks.length
      opts.onDocument?.({ path: d.doc.path, change: d.change })
    }
    await this.writer.write(batch, written, (d, err) => files.writeFailed(d, err))
    progress.emit()
    if (this.jobId && Date.now() - this.lastJobUpdate > 1000) {
      this.lastJobUpdate = Date.now()
      await recordImportProgress(db, this.jobId, p.filesDone, p.filesTotal)
    }
  }

  /** Prunes what is gone (unless cancelled) and records where the sync got to. Returns the documents pruned. */
  private async finish(plan: SyncPlan, cancelled: boolean): Promise<number> {
    const { db, opts, progress } = this
    const p = progress.state
    let pruned = 0
    if (!cancelled) {
      // Pending documents not yet written when cancelled are simply not imported: each written
      // document is complete, and the next sync picks up the rest.
      p.phase = 'pruning'
      progress.emit(true)
      pruned = await pruneDeleted(db, opts.collection, plan.deleted, (path) => opts.onDocument?.({ path, change: 'removed' }))
      await markSynced(db, opts.collection, { full: !opts.onlyPaths })
    } else {
      this.notices.push('Import cancelled: documents finished so far are searchable; run it again to continue.')
    }
    if (this.jobId) await recordImportProgress(db, this.jobId, p.filesDone, p.filesTotal)
    return pruned
  }

  private async report(plan: SyncPlan, files: FilePreparer, pruned: number, cancelled: boolean): Promise<ImportReport> {
    const { db, opts, progress } = this
    const { collection } = opts
    const { walk } = plan
    const p = progress.state
    const { rows } = await db.query<{ n: number }>('SELECT chunk_count AS n FROM collections WHERE id = $1', [collection])
    p.phase = cancelled ? 'cancelled' : 'done'
    p.currentFile = null
    progress.emit(true)
    this.notices.push(...closingNotices(files, opts))
    return {
      collection,
      root: this.root,
      files_seen: walk.files.length + walk.skipped.length + walk.failed.length,
      imported: p.imported,
      unchanged: p.unchanged,
      skipped: walk.skipped.length,
      failed: files.failed.map((f) => ({ path: f.relativePath, reason: f.reason })),
      skipped_files: walk.skipped.map((s) => ({ path: s.relativePath, reason: s.reason })),
      pruned,
      chunks_total: Number(rows[0]?.n ?? 0),
      chunks_written: p.chunksWritten,
      texts_embedded: p.textsEmbedded,
      cancelled,
      notices: this.notices,
      ms: Date.now() - this.started,
      timings: this.timer.rounded(),
    }
  }
}
