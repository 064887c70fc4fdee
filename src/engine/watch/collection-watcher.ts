import type { DocumentChange, ImportReport } from '../ingest/importer'
import { isSupportedFile } from '../ingest/parsers/formats'
import { isLayoutMarker } from '../ingest/version-layouts'
import { FolderWatcher } from './folder-watcher'

/**
 * Keeps one collection in step with its folder: a catch-up sync when watching starts (changes
 * made while nothing was watching), then one path-limited sync per change set from the
 * FolderWatcher. A change set larger than FULL_SYNC_PATHS runs a full sync instead: walking the
 * folder once is cheaper than thousands of single look-ups, and prunes the same.
 */

export const FULL_SYNC_PATHS = 500

export type WatchEvent =
  | { type: 'watching'; collection: string; root: string }
  | { type: 'sync-started'; collection: string; reason: 'catch-up' | 'changes'; full: boolean; paths: number }
  | {
      type: 'sync-finished'
      collection: string
      reason: 'catch-up' | 'changes'
      full: boolean
      /** Paths in the change set (0 for a catch-up). */
      paths: number
      /** What the sync did to documents, in path order. */
      changes: DocumentChange[]
      added: number
      changed: number
      removed: number
      failed: number
      unchanged: number
      chunks_total: number
      cancelled: boolean
      ms: number
      /** When the change set began (first event seen), epoch ms: its latency is finished_at - first_event_at. */
      first_event_at: number | null
      finished_at: number
    }
  | { type: 'sync-failed'; collection: string; error: string }
  | { type: 'watch-error'; collection: string; error: string }

export interface WatchOptions {
  onEvent?: (e: WatchEvent) => void
  /** Sync the whole folder when watching starts (default true). */
  catchUp?: boolean
  quietMs?: number
  maxWaitMs?: number
}

export interface CollectionWatch {
  collection: string
  root: string
  /** Resolves when no change set is pending or being applied. */
  idle(): Promise<void>
  /** Stops watching and cancels a sync in progress (it leaves the collection consistent). */
  stop(): Promise<void>
}

/** Runs one sync of a collection: of some paths, or of the whole folder when `paths` is null. */
export type SyncCollection = (req: {
  paths: string[] | null
  signal: AbortSignal
  onDocument: (c: DocumentChange) => void
}) => Promise<ImportReport>

export async function watchCollection(
  collection: string,
  root: string,
  sync: SyncCollection,
  opts: WatchOptions = {},
): Promise<CollectionWatch> {
  const emit = (e: WatchEvent) => opts.onEvent?.(e)
  const abort = new AbortController()

  const run = async (reason: 'catch-up' | 'changes', paths: string[] | null, firstEventAt: number | null): Promise<void> => {
    const full = paths === null || paths.length > FULL_SYNC_PATHS
    emit({ type: 'sync-started', collection, reason, full, paths: paths?.length ?? 0 })
    const changes: DocumentChange[] = []
    try {
      const report = await sync({ paths: full ? null : paths, signal: abort.signal, onDocument: (c) => changes.push(c) })
      changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      const count = (k: DocumentChange['change']) => changes.filter((c) => c.change === k).length
      emit({
        type: 'sync-finished',
        collection,
        reason,
        full,
        paths: paths?.length ?? 0,
        changes,
        added: count('added'),
        changed: count('changed'),
        removed: count('removed'),
        failed: count('failed'),
        unchanged: report.unchanged,
        chunks_total: report.chunks_total,
        cancelled: report.cancelled,
        ms: report.ms,
        first_event_at: firstEventAt,
        finished_at: Date.now(),
      })
    } catch (err) {
      emit({ type: 'sync-failed', collection, error: err instanceof Error ? err.message : String(err) })
    }
  }

  const watcher = await FolderWatcher.start({
    root,
    // A layout marker (versions.json, antora.yml) is not imported, but its change re-versions the files around it.
    isSupported: (rel) => isSupportedFile(rel) || isLayoutMarker(rel),
    quietMs: opts.quietMs,
    maxWaitMs: opts.maxWaitMs,
    onChanges: (paths, info) => run('changes', paths, info.firstEventAt),
    onError: (err) => emit({ type: 'watch-error', collection, error: err.message }),
  })
  emit({ type: 'watching', collection, root })
  // Changes made while nothing watched. Started after the watcher, so nothing falls between the two.
  const catchUp = opts.catchUp === false ? Promise.resolve() : run('catch-up', null, null)

  return {
    collection,
    root,
    idle: async () => {
      await catchUp
      await watcher.idle()
    },
    stop: async () => {
      abort.abort()
      await watcher.close()
      await catchUp
    },
  }
}
