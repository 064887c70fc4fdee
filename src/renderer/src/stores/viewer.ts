import { create } from 'zustand'
import type { StoredTrace } from '../../../shared/trace'
import type { SourceView } from '../../../shared/api'
import { call, errorMessage } from '../docent'

/** The right-hand panel: a source opened at a cited passage, or the trace of an answer. */

export interface SourceState {
  chunkId: string
  /** What the person clicked, e.g. "Source 2", for the panel heading while loading. */
  label: string | null
  status: 'loading' | 'ready' | 'error'
  view: SourceView | null
  error: string | null
}

export interface TraceState {
  traceId: string
  question: string | null
  status: 'loading' | 'ready' | 'error'
  data: StoredTrace | null
  error: string | null
}

interface ViewerState {
  panel: 'source' | 'trace' | null
  source: SourceState | null
  trace: TraceState | null
  openSource(chunkId: string, label?: string | null): Promise<void>
  openTrace(traceId: string, question?: string | null): Promise<void>
  showPanel(panel: 'source' | 'trace'): void
  close(): void
}

export const useViewer = create<ViewerState>()((set, get) => ({
  panel: null,
  source: null,
  trace: null,

  openSource: async (chunkId, label = null) => {
    set({ panel: 'source', source: { chunkId, label, status: 'loading', view: null, error: null } })
    try {
      const view = await call('source.open', { chunkId })
      if (get().source?.chunkId === chunkId) set({ source: { chunkId, label, status: 'ready', view, error: null } })
    } catch (err) {
      if (get().source?.chunkId === chunkId)
        set({ source: { chunkId, label, status: 'error', view: null, error: errorMessage(err) } })
    }
  },

  openTrace: async (traceId, question = null) => {
    set({ panel: 'trace', trace: { traceId, question, status: 'loading', data: null, error: null } })
    try {
      const data = await call('trace.get', { traceId })
      if (get().trace?.traceId === traceId) set({ trace: { traceId, question, status: 'ready', data, error: null } })
    } catch (err) {
      if (get().trace?.traceId === traceId)
        set({ trace: { traceId, question, status: 'error', data: null, error: errorMessage(err) } })
    }
  },

  showPanel: (panel) => set({ panel }),
  close: () => set({ panel: null }),
}))
