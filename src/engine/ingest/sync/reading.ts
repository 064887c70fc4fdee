import type { Db, Queryable } from '../../store/db'
import { writeFailure } from './write'

/**
 * The file a sync is reading with code that can stop the whole engine (parsers/index.ts,
 * mayStopTheProcess): a native crash in pdf.js's canvas or tesseract's wasm, or the system's
 * out-of-memory killer, ends the engine process, not only the parser thread, and with it the
 * import. An interrupted import is resumed by importing again (jobs.ts, host/startup.ts), and a
 * watcher's catch-up sync reads what changed: both would read that file first thing and die again,
 * every time, and the folder would never finish. So the file is noted in its collection's settings
 * (`reading`) before it is handed to the parser and the note is removed when the parser answers;
 * a note still there when the next sync of the collection starts names the file that was being
 * read when the engine stopped, and that file is recorded as failed with its content's hash, as
 * any failure is (sync/write.ts): listed, not read again until it changes. Kept in the collection
 * row (no table of its own) so that a server's row-level security covers it with the collection.
 */

export const ENGINE_STOPPED_REASON =
  'the engine stopped while reading this file (a crash in the PDF or image reader, or the computer ran out of memory); it is tried again when the file changes'

export interface ReadingNote {
  id: string
  path: string
  size: number
  mtimeMs: number
  sha256: string
  /** The document signature the file is read with (plan.ts documentSignature). */
  signature: string
  /** On a server, the pool id of the engine reading it (db.session); null embedded. */
  owner: string | null
}

/** Notes written by this process whose parse has not answered yet: never stale, whatever the row says. */
const liveNotes = new Set<string>()

export async function noteReading(db: Queryable, collection: string, note: Omit<ReadingNote, 'owner'>): Promise<void> {
  const full: ReadingNote = { ...note, owner: (db as Partial<Db>).session ?? null }
  liveNotes.add(collection)
  await db.query(
    `UPDATE collections SET settings = coalesce(settings, '{}'::jsonb) || jsonb_build_object('reading', $2::jsonb) WHERE id = $1`,
    [collection, JSON.stringify(full)],
  )
}

export async function clearReading(db: Queryable, collection: string): Promise<void> {
  liveNotes.delete(collection)
  await db.query(`UPDATE collections SET settings = settings - 'reading' WHERE id = $1 AND settings ? 'reading'`, [collection])
}

/**
 * At the start of a sync: a note left by an engine that stopped while reading (not this process's,
 * nor, on a server, a live engine's) becomes that file's failure, and the note goes. Returns the
 * file's path, or null when there was none.
 */
export async function failStoppedReading(db: Db, collection: string): Promise<string | null> {
  if (liveNotes.has(collection)) return null
  const { rows } = await db.query<{ note: ReadingNote | null; alive: boolean }>(
    `SELECT c.settings->'reading' AS note,
            ${db.kind === 'server' ? `EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name LIKE 'docent ' || (c.settings->'reading'->>'owner') || '%')` : 'false'} AS alive
       FROM collections c WHERE c.id = $1`,
    [collection],
  )
  const row = rows[0]
  const note = row?.note
  if (!note || row.alive) return null
  await writeFailure(
    db,
    collection,
    { id: note.id, path: note.path, size: note.size, mtimeMs: note.mtimeMs },
    ENGINE_STOPPED_REASON,
    { sha256: note.sha256, signature: note.signature },
  )
  await db.query(`UPDATE collections SET settings = settings - 'reading' WHERE id = $1`, [collection])
  return note.path
}
