import { create } from 'zustand'
import type { CollectionInfo, EventPayload, FileIssue, ImportProgress, ImportReport } from '../../../shared/api'
import { call, errorMessage } from '../docent'
import { useNav } from './nav'

/** Collections, running import jobs with their progress, and the files that failed and why. */

export type { FileIssue }

export interface ImportJob {
  jobId: string
  folder: string
  kind: 'import' | 'resync'
  /** Known from the start for re-syncs, from the first progress event for imports. */
  collection: string | null
  progress: ImportProgress | null
  startedAt: number
  finished: boolean
  cancelling: boolean
  report: ImportReport | null
  error: string | null
}

interface LibraryState {
  collections: CollectionInfo[]
  loaded: boolean
  loadError: string | null
  jobs: Record<string, ImportJob>
  /** Stored failures per collection (`collections.failures`). */
  failures: Record<string, FileIssue[]>
  /** The last finished import's report per collection (failed + skipped files, counts). */
  lastReports: Record<string, ImportReport>
  refresh(): Promise<void>
  importFolder(folder: string): Promise<string | null>
  resync(collection: string): Promise<void>
  remove(collection: string): Promise<boolean>
  cancel(jobId: string): Promise<void>
  loadFailures(collection: string): Promise<void>
  dismissJob(jobId: string): void
  onProgress(p: EventPayload<'import.progress'>): void
  onDone(d: EventPayload<'import.done'>): void
}

function notifyError(prefix: string, err: unknown): void {
  useNav.getState().notify(`${prefix}: ${errorMessage(err)}`, 'error')
}

export const useLibrary = create<LibraryState>()((set, get) => ({
  collections: [],
  loaded: false,
  loadError: null,
  jobs: {},
  failures: {},
  lastReports: {},

  refresh: async () => {
    try {
      const collections = await call('collections.list', {})
      set({ collections, loaded: true, loadError: null })
    } catch (err) {
      set({ loaded: true, loadError: errorMessage(err) })
    }
  },

  importFolder: async (folder) => {
    try {
      const { jobId } = await call('collections.import', { folder })
      set((s) => ({
        jobs: {
          ...s.jobs,
          // Progress may already have arrived for this job: keep it.
          [jobId]: {
            jobId,
            folder,
            kind: 'import',
            collection: s.jobs[jobId]?.collection ?? null,
            progress: s.jobs[jobId]?.progress ?? null,
            startedAt: Date.now(),
            finished: s.jobs[jobId]?.finished ?? false,
            cancelling: false,
            report: s.jobs[jobId]?.report ?? null,
            error: s.jobs[jobId]?.error ?? null,
          },
        },
      }))
      return jobId
    } catch (err) {
      notifyError(`Couldn't import ${folder}`, err)
      return null
    }
  },

  resync: async (collection) => {
    const root = get().collections.find((c) => c.id === collection)?.root ?? collection
    try {
      const { jobId } = await call('collections.resync', { collection })
      set((s) => ({
        jobs: {
          ...s.jobs,
          [jobId]: {
            jobId,
            folder: root,
            kind: 'resync',
            collection,
            progress: s.jobs[jobId]?.progress ?? null,
            startedAt: Date.now(),
            finished: s.jobs[jobId]?.finished ?? false,
            cancelling: false,
            report: null,
            error: null,
          },
        },
      }))
    } catch (err) {
      notifyError(`Couldn't re-sync ${collection}`, err)
    }
  },

  remove: async (collection) => {
    try {
      const { removed } = await call('collections.remove', { collection })
      if (removed) {
        set((s) => {
          const failures = { ...s.failures }
          const lastReports = { ...s.lastReports }
          delete failures[collection]
          delete lastReports[collection]
          return { collections: s.collections.filter((c) => c.id !== collection), failures, lastReports }
        })
      }
      await get().refresh()
      return removed
    } catch (err) {
      notifyError(`Couldn't remove ${collection}`, err)
      return false
    }
  },

  cancel: async (jobId) => {
    set((s) => (s.jobs[jobId] ? { jobs: { ...s.jobs, [jobId]: { ...s.jobs[jobId]!, cancelling: true } } } : s))
    try {
      await call('jobs.cancel', { jobId })
    } catch (err) {
      notifyError("Couldn't cancel the import", err)
      set((s) => (s.jobs[jobId] ? { jobs: { ...s.jobs, [jobId]: { ...s.jobs[jobId]!, cancelling: false } } } : s))
    }
  },

  loadFailures: async (collection) => {
    try {
      const list = await call('collections.failures', { collection })
      set((s) => ({ failures: { ...s.failures, [collection]: list } }))
    } catch (err) {
      notifyError(`Couldn't load the failed files of ${collection}`, err)
    }
  },

  dismissJob: (jobId) =>
    set((s) => {
      const jobs = { ...s.jobs }
      delete jobs[jobId]
      return { jobs }
    }),

  onProgress: (p) =>
    set((s) => {
      const prev = s.jobs[p.jobId]
      const job: ImportJob = prev
        ? { ...prev, collection: p.collection || prev.collection, progress: p }
        : {
            jobId: p.jobId,
            folder: p.collection,
            kind: 'import',
            collection: p.collection,
            progress: p,
            startedAt: Date.now() - p.elapsedMs,
            finished: false,
            cancelling: false,
            report: null,
            error: null,
          }
      return { jobs: { ...s.jobs, [p.jobId]: job } }
    }),

  onDone: (d) => {
    set((s) => {
      const prev = s.jobs[d.jobId]
      const collection = d.report?.collection ?? prev?.collection ?? null
      const job: ImportJob = {
        jobId: d.jobId,
        folder: d.report?.root ?? prev?.folder ?? collection ?? '',
        kind: prev?.kind ?? 'import',
        collection,
        progress: prev?.progress ?? null,
        startedAt: prev?.startedAt ?? Date.now(),
        finished: true,
        cancelling: false,
        report: d.report,
        error: d.error,
      }
      const lastReports = d.report && collection ? { ...s.lastReports, [collection]: d.report } : s.lastReports
      return { jobs: { ...s.jobs, [d.jobId]: job }, lastReports }
    })
    const collection = d.report?.collection ?? get().jobs[d.jobId]?.collection
    void get().refresh()
    if (collection) void get().loadFailures(collection)
    if (d.error) useNav.getState().notify(`Import failed: ${d.error}`, 'error')
  },
}))

/** The job shown on a collection's card: the running one if any, else the most recent finished one. */
export function jobForCollection(jobs: Record<string, ImportJob>, collection: string): ImportJob | null {
  const mine = Object.values(jobs).filter((j) => j.collection === collection)
  return mine.find((j) => !j.finished) ?? mine.sort((a, b) => b.startedAt - a.startedAt)[0] ?? null
}

/** Files per second over the job so far; null until it means something. */
export function importRate(p: ImportProgress | null): number | null {
  if (!p || p.elapsedMs < 500 || p.filesDone === 0) return null
  return p.filesDone / (p.elapsedMs / 1000)
}

/** Remaining time: the engine's estimate, else files left at the observed rate. */
export function importEtaMs(p: ImportProgress | null): number | null {
  if (!p) return null
  if (p.etaMs != null) return p.etaMs
  const rate = importRate(p)
  if (!rate || p.filesTotal <= p.filesDone) return null
  return ((p.filesTotal - p.filesDone) / rate) * 1000
}
