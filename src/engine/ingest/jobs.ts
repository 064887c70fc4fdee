import { randomUUID } from 'node:crypto'
import type { Db, Queryable } from '../store/db'

/**
 * The import_jobs table: one row per full import of a collection, so an import stopped by a
 * crash, a quit or a power loss can be offered for resuming when the engine next opens. Resuming
 * is simply importing the same folder again: finished documents are unchanged and skipped, cached
 * embeddings are reused, and each document is written atomically, so nothing is duplicated.
 */

export type ImportJobState = 'running' | 'cancelled' | 'done' | 'failed'

export interface UnfinishedImport {
  jobId: string
  collection: string
  root: string
  /** `interrupted`: the process stopped mid-import (still marked running); `cancelled`: it was stopped on purpose (quit, cancel). */
  state: 'interrupted' | 'cancelled'
  startedAt: string
  filesTotal: number | null
  filesDone: number
}

/** Old finished rows kept per collection, for history; the rest are deleted. */
const KEEP_JOBS = 20

/** Jobs running in this process: not unfinished, whatever their row says. */
const liveJobs = new Set<string>()

/** This engine's pool id on a server (import_jobs.owner; its connections' application_name starts "docent <id>"), else null. */
function sessionOf(db: Queryable): string | null {
  return (db as Partial<Db>).session ?? null
}

/**
 * SQL true for a job row that an engine still connected to the server is running: on a server
 * other processes import too, and their jobs are neither interrupted nor to be taken over.
 */
function runningElsewhere(db: Queryable, row: string): string {
  return (db as Partial<Db>).kind === 'server'
    ? `(${row}.owner IS NOT NULL AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name LIKE 'docent ' || ${row}.owner || '%'))`
    : 'false'
}

export async function startImportJob(db: Queryable, collection: string, root: string): Promise<string> {
  const id = `job_${randomUUID()}`
  // A row still running is from a process that died; this import takes over from it.
  await db.query(
    `UPDATE import_jobs SET state = 'failed', finished_at = now(),
            error = 'interrupted: the process stopped before the import finished; resumed by ' || $2
      WHERE collection_id = $1 AND state = 'running' AND NOT ${runningElsewhere(db, 'import_jobs')}`,
    [collection, id],
  )
  await db.query(
    `INSERT INTO import_jobs (id, collection_id, root, state, started_at, owner) VALUES ($1, $2, $3, 'running', clock_timestamp(), $4)`,
    [id, collection, root, sessionOf(db)],
  )
  liveJobs.add(id)
  return id
}

export async function recordImportProgress(db: Queryable, id: string, filesDone: number, filesTotal: number): Promise<void> {
  await db.query('UPDATE import_jobs SET files_done = $2, files_total = $3 WHERE id = $1', [id, filesDone, filesTotal])
}

export async function finishImportJob(
  db: Queryable,
  id: string,
  state: Exclude<ImportJobState, 'running'>,
  error: string | null = null,
): Promise<void> {
  liveJobs.delete(id)
  await db.query('UPDATE import_jobs SET state = $2, error = $3, finished_at = clock_timestamp() WHERE id = $1', [
    id,
    state,
    error,
  ])
  await db.query(
    `DELETE FROM import_jobs WHERE id IN (
       SELECT id FROM import_jobs
        WHERE collection_id = (SELECT collection_id FROM import_jobs WHERE id = $1) AND state <> 'running'
        ORDER BY started_at DESC OFFSET ${KEEP_JOBS})`,
    [id],
  )
}

/**
 * Collections whose latest import did not finish: still marked running (the process died) or
 * cancelled. Jobs running in this process right now, or on a server in another live engine, are left out.
 */
export async function unfinishedImports(db: Queryable): Promise<UnfinishedImport[]> {
  const { rows } = await db.query<{
    id: string
    collection_id: string
    root: string
    state: ImportJobState
    started_at: Date | string
    files_total: number | null
    files_done: number
    elsewhere: boolean
  }>(
    `SELECT DISTINCT ON (collection_id) id, collection_id, root, state, started_at, files_total, files_done,
            ${runningElsewhere(db, 'j')} AS elsewhere
       FROM import_jobs j ORDER BY collection_id, started_at DESC`,
  )
  return rows
    .filter((r) => (r.state === 'running' || r.state === 'cancelled') && !liveJobs.has(r.id) && !r.elsewhere)
    .map((r) => ({
      jobId: r.id,
      collection: r.collection_id,
      root: r.root,
      state: r.state === 'running' ? 'interrupted' : 'cancelled',
      startedAt: new Date(r.started_at).toISOString(),
      filesTotal: r.files_total === null ? null : Number(r.files_total),
      filesDone: Number(r.files_done),
    }))
}
