import type { Db } from '../../store/db'
import { ensureFreeSpace, MIN_FREE_BYTES } from '../../store/disk-space'
import { deleteDocument, markFailed, replaceDocument, touchDocument, vacuumHotTables } from '../../store/writer'
import type { PreparedDocument } from './chunk'
import type { PlannedFile, SyncPlan } from './plan'
import type { StageTimer } from './timings'

/** Dead rows pile up fast when documents are replaced one transaction each, and an embedded store checkpoints only when asked: vacuum and checkpoint every this many. */
const VACUUM_EVERY_DOCUMENTS = 500

/**
 * The write stage: replaces each document with its chunks in one transaction, so a crash or a
 * cancel leaves every document either as it was or complete.
 */
export class DocumentWriter {
  private written = 0

  constructor(
    private readonly db: Db,
    private readonly timer: StageTimer,
  ) {}

  async write(batch: PreparedDocument[], onWritten: (p: PreparedDocument) => void): Promise<void> {
    // Room for this batch several times over (text, vectors, index entries, WAL), checked before
    // writing: a full disk must stop the import with a reason, not inside the database.
    const batchBytes = batch.reduce(
      (n, p) => n + p.chunks.reduce((m, c) => m + c.text.length * 4 + (c.embedding ? c.embedding.length * 8 : 0), 0),
      0,
    )
    await ensureFreeSpace(this.db.dataDir, MIN_FREE_BYTES + batchBytes * 4)
    for (const p of batch) {
      await this.timer.time('write', () => replaceDocument(this.db, p.doc, p.chunks))
      this.written++
      if (this.written % VACUUM_EVERY_DOCUMENTS === 0) await this.timer.time('write', () => vacuumHotTables(this.db))
      onWritten(p)
    }
  }
}

/** Records a file that could not be imported, with the reason, so the collection lists it. */
export async function writeFailure(db: Db, collection: string, item: PlannedFile, reason: string): Promise<void> {
  await markFailed(db, {
    id: item.docId,
    collectionId: collection,
    path: item.file.relativePath,
    size: item.file.size,
    mtimeMs: item.file.mtimeMs,
    error: reason,
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
