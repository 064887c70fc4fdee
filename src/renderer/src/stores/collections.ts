import { create, type StoreApi } from 'zustand'
import type { CollectionInfo, EventPayload, FileIssue, ImportProgress, ImportReport } from '../../../shared/api'
import { call, errorMessage } from '../docent'
import { useNav } from './nav'
import { plural } from '../lib/format'
import { trackImport, type ImportEtaState } from '../lib/import-eta'

/** Collections, running import jobs with their progress, and the files that failed and why. */

export type { FileIssue }

export interface ImportJob {
  jobId: string
  folder: string
  kind: 'import' | 'resync'
  /** Known from the start for re-syncs, from the first progress event for imports. */
  collection: string | null
  progress: ImportProgress | null
  /** When the last progress event arrived (Date.now()), so the estimate counts down between events. */
  progressAt: number | null
  /** The checkpoints the time-left estimate is measured on (lib/import-eta.ts). */
  eta: ImportEtaState | null
  startedAt: number
  finished: boolean
  cancelling: boolean
  report: ImportReport | null
  error: string | null
  /** The engine held the sync back because it would remove every document (import.done code). */
  heldBack?: boolean
}

interface CollectionsState {
  collections: CollectionInfo[]
  loaded: boolean
  loadError: string | null
  jobs: Record<string, ImportJob>
  /** Stored failures per collection (`collections.failures`). */
  failures: Record<string, FileIssue[]>
  /** The last finished import's report per collection (failed + skipped files, counts). */
  lastReports: Record<string, ImportReport>
  refresh(): Promise<void>
  importFolder(folder: string, opts?: { allowEmpty?: boolean }): Promise<string | null>
  /** allowEmpty: the person confirmed a sync that removes every document of the collection. */
  resync(collection: string, opts?: { allowEmpty?: boolean }): Promise<void>
  /** Asks whether to go on with a sync the engine held back because it would empty the collection. */
  confirmEmpty(job: ImportJob): Promise<void>
  remove(collection: string): Promise<boolean>
  /** Turns text recognition of scans and images on or off; the next re-sync reads them again. */
  setOcr(collection: string, on: boolean): Promise<void>
  cancel(jobId: string): Promise<void>
  loadFailures(collection: string): Promise<void>
  dismissJob(jobId: string): void
  onProgress(p: EventPayload<'import.progress'>): void
  onDone(d: EventPayload<'import.done'>): void
}

function notifyError(prefix: string, err: unknown): void {
  useNav.getState().notify(`${prefix}: ${errorMessage(err)}`, 'error')
}

type SetCollections = StoreApi<CollectionsState>['setState']
type GetCollections = StoreApi<CollectionsState>['getState']

/** A job the engine accepted. Its progress may already have arrived (events can beat the reply): that is kept. */
function acceptedJob(
  prev: ImportJob | undefined,
  job: Pick<ImportJob, 'jobId' | 'folder' | 'kind' | 'collection' | 'report' | 'error'>,
): ImportJob {
  return {
    ...job,
    progress: prev?.progress ?? null,
    progressAt: prev?.progressAt ?? null,
    eta: prev?.eta ?? null,
    startedAt: Date.now(),
    finished: prev?.finished ?? false,
    cancelling: false,
  }
}

function jobWithProgress(prev: ImportJob | undefined, p: EventPayload<'import.progress'>): ImportJob {
  const now = Date.now()
  if (prev)
    return { ...prev, collection: p.collection || prev.collection, progress: p, progressAt: now, eta: trackImport(prev.eta, p) }
  return {
    jobId: p.jobId,
    folder: p.collection,
    kind: 'import',
    collection: p.collection,
    progress: p,
    progressAt: now,
    eta: trackImport(null, p),
    startedAt: Date.now() - p.elapsedMs,
    finished: false,
    cancelling: false,
    report: null,
    error: null,
  }
}

function finishedJob(prev: ImportJob | undefined, d: EventPayload<'import.done'>): ImportJob {
  const collection = d.report?.collection ?? prev?.collection ?? null
  return {
    jobId: d.jobId,
    folder: d.report?.root ?? prev?.folder ?? collection ?? '',
    kind: prev?.kind ?? 'import',
    collection,
    progress: prev?.progress ?? null,
    progressAt: prev?.progressAt ?? null,
    eta: null,
    startedAt: prev?.startedAt ?? Date.now(),
    finished: true,
    cancelling: false,
    report: d.report,
    error: d.error,
    heldBack: d.code === 'would_empty_collection',
  }
}

function collectionActions(
  set: SetCollections,
  get: GetCollections,
): Pick<CollectionsState, 'refresh' | 'remove' | 'setOcr' | 'loadFailures'> {
  return {
    refresh: async () => {
      try {
        const collections = await call('collections.list', {})
        set({ collections, loaded: true, loadError: null })
      } catch (err) {
        set({ loaded: true, loadError: errorMessage(err) })
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

    setOcr: async (collection, on) => {
      try {
        await call('collections.setOcr', { collection, on })
        await get().refresh()
      } catch (err) {
        notifyError(`Couldn't change text recognition for ${collection}`, err)
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
  }
}

function startJobActions(set: SetCollections, get: GetCollections): Pick<CollectionsState, 'importFolder' | 'resync' | 'cancel'> {
  return {
    importFolder: async (folder, opts) => {
      try {
        const { jobId } = await call('collections.import', { folder, ...(opts?.allowEmpty ? { allowEmpty: true } : {}) })
        set((s) => {
          const prev = s.jobs[jobId]
          const job = acceptedJob(prev, {
            jobId,
            folder,
            kind: 'import',
            collection: prev?.collection ?? null,
            report: prev?.report ?? null,
            error: prev?.error ?? null,
          })
          return { jobs: { ...s.jobs, [jobId]: job } }
        })
        return jobId
      } catch (err) {
        notifyError(`Couldn't import ${folder}`, err)
        return null
      }
    },

    resync: async (collection, opts) => {
      const root = get().collections.find((c) => c.id === collection)?.root ?? collection
      try {
        const { jobId } = await call('collections.resync', { collection, ...(opts?.allowEmpty ? { allowEmpty: true } : {}) })
        set((s) => {
          const job = acceptedJob(s.jobs[jobId], { jobId, folder: root, kind: 'resync', collection, report: null, error: null })
          return { jobs: { ...s.jobs, [jobId]: job } }
        })
      } catch (err) {
        notifyError(`Couldn't re-sync ${collection}`, err)
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
  }
}

function jobEventActions(
  set: SetCollections,
  get: GetCollections,
): Pick<CollectionsState, 'dismissJob' | 'onProgress' | 'onDone' | 'confirmEmpty'> {
  return {
    dismissJob: (jobId) =>
      set((s) => {
        const jobs = { ...s.jobs }
        delete jobs[jobId]
        return { jobs }
      }),

    onProgress: (p) => set((s) => ({ jobs: { ...s.jobs, [p.jobId]: jobWithProgress(s.jobs[p.jobId], p) } })),

    onDone: (d) => {
      set((s) => {
        const job = finishedJob(s.jobs[d.jobId], d)
        const lastReports = d.report && job.collection ? { ...s.lastReports, [job.collection]: d.report } : s.lastReports
        return { jobs: { ...s.jobs, [d.jobId]: job }, lastReports }
      })
      const collection = d.report?.collection ?? get().jobs[d.jobId]?.collection
      void get().refresh()
      if (collection) void get().loadFailures(collection)
      const job = get().jobs[d.jobId]
      // Not a failure to report but a question: an unmounted drive looks just like an emptied folder.
      if (job?.heldBack) void get().confirmEmpty(job)
      else if (d.error) useNav.getState().notify(`Import failed: ${d.error}`, 'error')
    },

    confirmEmpty: async (job) => {
      const c = job.collection ? get().collections.find((x) => x.id === job.collection) : undefined
      const name = job.collection ?? job.folder
      const ok = await useNav.getState().ask({
        title: `Empty “${name}”?`,
        body:
          `${c?.root ?? job.folder} has none of the ${c ? plural(c.documents, 'document') : 'documents'} Docent indexed from it. ` +
          'If a drive is not connected or the folder moved, cancel: nothing has been removed. ' +
          'Go on only if the folder really is empty now: every document of this collection will be removed from the index.',
        confirmLabel: 'Remove all documents',
        danger: true,
      })
      if (!ok) {
        useNav.getState().notify(`Nothing was removed from ${name}.`)
        return
      }
      if (job.collection) await get().resync(job.collection, { allowEmpty: true })
      else await get().importFolder(job.folder, { allowEmpty: true })
    },
  }
}

export const useCollections = create<CollectionsState>()((set, get) => ({
  collections: [],
  loaded: false,
  loadError: null,
  jobs: {},
  failures: {},
  lastReports: {},
  ...collectionActions(set, get),
  ...startJobActions(set, get),
  ...jobEventActions(set, get),
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
