import { create, type StoreApi } from 'zustand'
import type { EventPayload, InvokeOutput, ModelStatus, Settings } from '../../../shared/api'
import type { ModelRole } from '../../../shared/models'
import { call, errorMessage } from '../docent'
import { useNav } from './nav'

/** Model status per role, downloads with progress, settings and what hardware the engine found. */

export type { ModelRole, ModelStatus }
export type ModelProgress = EventPayload<'models.progress'>
export type AppInfo = InvokeOutput<'app.info'>

export interface Download {
  jobId: string | null
  role: ModelRole
  progress: ModelProgress | null
  error: string | null
  finished: boolean
}

interface ModelsState {
  statuses: ModelStatus[]
  loaded: boolean
  settings: Settings | null
  info: AppInfo | null
  downloads: Partial<Record<ModelRole, Download>>
  importing: boolean
  refresh(): Promise<void>
  loadSettings(): Promise<void>
  loadInfo(): Promise<void>
  download(role: ModelRole): Promise<void>
  importFromDisk(path: string, role?: ModelRole): Promise<boolean>
  setActive(role: ModelRole, name: string): Promise<void>
  setSearchOnly(on: boolean): Promise<void>
  onProgress(p: ModelProgress): void
  onDone(d: EventPayload<'models.done'>): void
}

type SetModels = StoreApi<ModelsState>['setState']
type GetModels = StoreApi<ModelsState>['getState']

function downloadActions(set: SetModels, get: GetModels): Pick<ModelsState, 'download' | 'onProgress' | 'onDone'> {
  return {
    download: async (role) => {
      set((s) => ({ downloads: { ...s.downloads, [role]: { jobId: null, role, progress: null, error: null, finished: false } } }))
      try {
        const { jobId } = await call('models.download', { role })
        set((s) => ({ downloads: { ...s.downloads, [role]: { ...s.downloads[role]!, jobId } } }))
      } catch (err) {
        set((s) => ({
          downloads: { ...s.downloads, [role]: { jobId: null, role, progress: null, error: errorMessage(err), finished: true } },
        }))
      }
    },
    onProgress: (p) =>
      set((s) => ({
        downloads: { ...s.downloads, [p.role]: { jobId: p.jobId, role: p.role, progress: p, error: null, finished: false } },
      })),
    onDone: (d) => {
      set((s) => ({
        downloads: {
          ...s.downloads,
          [d.role]: {
            jobId: d.jobId,
            role: d.role,
            progress: s.downloads[d.role]?.progress ?? null,
            error: d.error,
            finished: true,
          },
        },
      }))
      if (!d.error) useNav.getState().notify(`The ${roleLabel(d.role).toLowerCase()} is installed.`)
      void get().refresh()
    },
  }
}

export const useModels = create<ModelsState>()((set, get) => ({
  statuses: [],
  loaded: false,
  settings: null,
  info: null,
  downloads: {},
  importing: false,

  refresh: async () => {
    try {
      set({ statuses: await call('models.status', {}), loaded: true })
    } catch (err) {
      set({ loaded: true })
      useNav.getState().notify(`Couldn't read the model status: ${errorMessage(err)}`, 'error')
    }
  },
  loadSettings: async () => {
    try {
      set({ settings: await call('settings.get', {}) })
    } catch (err) {
      useNav.getState().notify(`Couldn't read the settings: ${errorMessage(err)}`, 'error')
    }
  },
  loadInfo: async () => {
    try {
      set({ info: await call('app.info', {}) })
    } catch {
      // Hardware info is informational; the screen says "unknown" without it.
    }
  },
  importFromDisk: async (path, role) => {
    set({ importing: true })
    try {
      const status = await call('models.import', role ? { path, role } : { path })
      useNav.getState().notify(`Imported ${status.name ?? 'the model'} as the ${roleLabel(status.role).toLowerCase()}.`)
      await get().refresh()
      return true
    } catch (err) {
      useNav.getState().notify(`Couldn't import the model: ${errorMessage(err)}`, 'error')
      return false
    } finally {
      set({ importing: false })
    }
  },
  setActive: async (role, name) => {
    try {
      set({ statuses: await call('models.setActive', { role, name }) })
    } catch (err) {
      useNav.getState().notify(`Couldn't switch the model: ${errorMessage(err)}`, 'error')
    }
  },
  setSearchOnly: async (on) => {
    const before = get().settings
    if (before) set({ settings: { ...before, searchOnly: on } })
    try {
      set({ settings: await call('settings.set', { searchOnly: on }) })
    } catch (err) {
      set({ settings: before })
      useNav.getState().notify(`Couldn't save the setting: ${errorMessage(err)}`, 'error')
    }
  },
  ...downloadActions(set, get),
}))

export function roleLabel(role: ModelRole): string {
  return role === 'embedding' ? 'Embedding model' : role === 'reranker' ? 'Reranker' : 'Chat model'
}

export function rolePurpose(role: ModelRole): string {
  switch (role) {
    case 'embedding':
      return 'Finds passages by meaning (vector search). Without it, search uses keywords only.'
    case 'reranker':
      return 'Re-orders the best candidates and decides whether anything is relevant enough to answer from.'
    case 'llm':
      return 'Writes answers from the passages, with citations that are checked before you see them. Without it, Docent shows matching passages.'
  }
}

/** The status to show for a role: the active model if several are installed. */
export function statusFor(statuses: ModelStatus[], role: ModelRole): ModelStatus | null {
  const mine = statuses.filter((s) => s.role === role)
  return mine.find((s) => s.active != null && s.active === s.name) ?? mine.find((s) => s.installed) ?? mine[0] ?? null
}
