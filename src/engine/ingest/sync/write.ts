import type { Db } from '../../store/db'
import { DiskFullError, ensureFreeSpace, MIN_FREE_BYTES } from '../../store/disk-space'
import { deleteDocument, markFailed, replaceDocument, touchDocument, vacuumHotTables } from '../../store/writer'
import type { PreparedDocument } from './chunk'
import type { PlannedFile, SyncPlan } from './plan'
import type { StageTimer } from './timings'

/** Dead rows pile up fast when documents are replaced one transaction each, and an embedded store checkpoints only when asked: vacuum and checkpoint every this many. */
const VACUUM_EVERY_DOCUMENTS = 500

/**
 * Whether a failed write is the store's rather than the document's: a full disk, a lost or
 * closed connection, a server shutting down, an I/O error, a crashed embedded database. Nothing
 * else would be written either, so the import stops with it. Anything else (a value the database
 * refuses, a constraint, a trigger) is the document's: that file fails, the rest of the folder imports.
 */
export function isStoreFailure(err: unknown): boolean {
  if (err instanceof DiskFullError) return true
  const code = (err as { code?: unknown } | null)?.code
  // SQLSTATE classes: 08 connection, 53 insufficient resources (disk full), 57 operator
  // intervention (shutdown, cancel), 58 system (I/O), XX internal.
  if (typeof code === 'string' && /^(08|53|57|58|XX)/.test(code)) return true
  const msg = err instanceof Error ? err.message : String(err)
  return /ENOSPC|No space left|\bEIO\b|Connection terminated|connection (?:error|refused|reset)|(?:is|was) closed|RuntimeError|unreachable|Aborted\(/i.test(
    msg,
  )
}

/** A write failure that may pass by itself (a deadlock, a lock not granted): the file is tried again next sync. */
export function isTransientFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^(40|55)/.test(code)
}

/**
 * The write stage: replaces each document with its chunks in one transaction, so a crash or a
 * cancel leaves every document either as it was or complete. A document the store refuses is
 * handed to `onFailed` (its transaction rolled back, nothing of it written) and the batch goes on;
 * a failure of the store itself (isStoreFailure) stops the import.
 */
export class DocumentWriter {
  private written = 0

  constructor(
    private readonly db: Db,
    private readonly timer: StageTimer,
  ) {}

  async write(
    batch: PreparedDocument[],
    onWritten: (p: PreparedDocument) => void,
    onFailed: (p: PreparedDocument, err: unknown) => Promise<void>,
  ): Promise<void> {
    // Room for this batch several times over (text, vectors, index entries, WAL), checked before
    // writing: a full disk must stop the import with a reason, not inside the database.
    const batchBytes = batch.reduce(
      (n, p) => n + p.chunks.reduce((m, c) => m + c.text.length * 4 + (c.embedding ? c.embedding.length * 8 : 0), 0),
      0,
    )
    await ensureFreeSpace(this.db.dataDir, MIN_FREE_BYTES + batchBytes * 4)
    for (const p of batch) {
      try {
        await this.timer.time('write', () => replaceDocument(this.db, p.doc, p.chunks))
      } catch (err) {
        if (isStoreFailure(err)) throw err
        await onFailed(p, err)
        continue
      }
      this.written++
      if (this.written % VACUUM_EVERY_DOCUMENTS === 0) await this.timer.time('write', () => vacuumHotTables(this.db))
      onWritten(p)
    }
  }
}

/** A file's document row, as a failure is recorded against it. */
export interface FailedFile {
  id: string
  path: string
  size: number
  mtimeMs: number
}

/**
 * Records a file that could not be imported, with the reason, so the collection lists it.
 * `remember` (the content hash and the build's signature) keeps it from being parsed again until
 * it changes; without it the file is tried again on every sync.
 */
export async function writeFailure(
  db: Db,
  collection: string,
  file: FailedFile,
  reason: string,
  remember: { sha256: string; signature: string } | null = null,
): Promise<void> {
  await markFailed(db, {
    id: file.id,
    collectionId: collection,
    path: file.path,
    size: file.size,
    mtimeMs: file.mtimeMs,
    error: reason,
    sha256: remember?.sha256 ?? null,
    signature: remember?.signature ?? null,
  })
}

/** A file whose content is unchanged though its time changed: only the time is stored, so the next sync skips it unread. */
export async function writeTouched(db: Db, item: PlannedFile): Promise<void> {
  await touchDocument(db, item.docId, item.file.mtimeMs)
}

/** Removes the documents whose files are gone; returns how many. */
export async function pruneDeleted(
  db: Db,
  collection: string,
  deleted: SyncPlan['deleted'],
  onRemoved: (path: string) => void,
): Promise<number> {
  for (const d of deleted) {
    await deleteDocument(db, d.id, collection)
    onRemoved(d.path)
  }
  return deleted.length
}
