import type { Db } from '../../store/db'
import { documentId } from '../../store/ids'
import { documentStates, type DocumentState } from '../../store/writer'
import { parserFor } from '../parsers/index'
import { normaliseRelativePaths, OUTSIDE_LINK_REASON, walkFolder, walkPaths, type WalkFile, type WalkResult } from '../walk'
import type { StageTimer } from './timings'

const MB = 1024 * 1024
/** Text formats above this are refused with a reason rather than read into memory whole. */
export const MAX_TEXT_BYTES = 20 * MB
export const MAX_BINARY_BYTES = 300 * MB

/** The size limit of a file by its type: checked by the walk, and again when the file is read. */
export function maxBytesFor(rel: string): number {
  return /\.(pdf|docx)$/i.test(rel) ? MAX_BINARY_BYTES : MAX_TEXT_BYTES
}

/**
 * What to do with a file found by the walk:
 * - `new`: not stored yet; import it.
 * - `changed`: stored, but failed or chunked differently; import it again.
 * - `verify`: stored and current but its size or time differs; import it unless the content hash matches.
 * - `unchanged`: stored and current with the same size and time; not even read.
 */
export type FileDecision = 'new' | 'changed' | 'verify' | 'unchanged'

export interface PlannedFile {
  file: WalkFile
  docId: string
  decision: FileDecision
  /** The stored document's content hash, to compare a `verify` file's against. */
  storedSha: string | null
}

export interface SyncPlan {
  walk: WalkResult
  files: PlannedFile[]
  /** Stored documents no longer in the folder (within the paths synced), pruned once the import completes. */
  deleted: { path: string; id: string }[]
  /** How many documents the collection holds before this sync: a plan that deletes them all is held back. */
  stored: number
  /** Stored documents kept because the folder they are in could not be listed (not seen is not gone). */
  kept: number
}

export interface PlanOptions {
  collection: string
  /** The chunker signature documents must have been chunked with to count as current. */
  signature: string
  onlyPaths?: readonly string[] | undefined
  signal?: AbortSignal | undefined
}

/** The plan stage: walks the folder (or only the paths given) and compares what it finds with what is stored. */
export async function planSync(db: Db, root: string, opts: PlanOptions, timer: StageTimer): Promise<SyncPlan> {
  const onlyPaths = opts.onlyPaths ? normaliseRelativePaths(opts.onlyPaths) : null
  const walkOptions = { isSupported: (rel: string) => parserFor(rel) !== null, maxBytes: maxBytesFor, signal: opts.signal }
  const walk = await timer.time('walk', () =>
    onlyPaths ? walkPaths(root, onlyPaths, walkOptions) : walkFolder(root, walkOptions),
  )
  const states = await documentStates(db, opts.collection)
  const files = walk.files.map((file) => ({
    file,
    docId: documentId(opts.collection, file.relativePath),
    decision: decide(states.get(file.relativePath), file, opts.signature),
    storedSha: states.get(file.relativePath)?.sha256 ?? null,
  }))
  // A file now replaced by a link leading outside the folder is not in the folder any more: its
  // document goes, as for a deleted file. Other skipped files keep theirs (they are still there).
  const seen = new Set<string>([
    ...walk.files.map((f) => f.relativePath),
    ...walk.skipped.filter((s) => s.reason !== OUTSIDE_LINK_REASON).map((s) => s.relativePath),
  ])
  const inScope = scopeOf(onlyPaths)
  const unseen = scopeOf(walk.unlisted.includes('.') ? null : walk.unlisted)
  const deleted: SyncPlan['deleted'] = []
  let kept = 0
  for (const [p, state] of states) {
    if (seen.has(p) || !inScope(p)) continue
    // A file or folder that could not be looked at: not seen, which is not the same as gone.
    if (walk.unlisted.length > 0 && unseen(p)) kept++
    else deleted.push({ path: p, id: state.id })
  }
  return { walk, files, deleted, stored: states.size, kept }
}

function decide(state: DocumentState | undefined, file: WalkFile, signature: string): FileDecision {
  if (!state) return 'new'
  if (state.status !== 'indexed' || state.chunker !== signature) return 'changed'
  return state.size === file.size && state.mtime_ms === file.mtimeMs ? 'unchanged' : 'verify'
}

/** Whether this run may prune a stored document: any in a full sync, else the paths given and what is under them. */
function scopeOf(onlyPaths: string[] | null): (rel: string) => boolean {
  if (!onlyPaths) return () => true
  const only = new Set(onlyPaths)
  return (rel) => {
    if (only.has(rel)) return true
    const segs = rel.split('/')
    for (let i = 1; i < segs.length; i++) if (only.has(segs.slice(0, i).join('/'))) return true
    return false
  }
}
