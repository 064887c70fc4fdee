import { contextBridge, ipcRenderer, webUtils } from 'electron'
import type { DocentApi, EventName, EventPayload } from '../shared/api'
import { IPC_CHANNELS as CHANNELS } from '../shared/channels'

/**
 * The renderer's only door: one typed `api` exposed as `window.docent`. Type-only imports from the
 * contract keep this sandboxed preload tiny; the main process validates every call against the
 * contract's schemas. The channel names come from the module the main process uses too.
 */

type Listener = (payload: unknown) => void
const listeners = new Map<string, Set<Listener>>()

// One IPC subscription for the life of the page; the renderer's listeners come and go through `on`.
// The IpcRendererEvent (which exposes `sender`) never reaches page code.
ipcRenderer.on(CHANNELS.event, (_event, name: unknown, payload: unknown) => {
  if (typeof name !== 'string') return
  for (const listener of listeners.get(name) ?? []) {
    try {
      listener(payload)
    } catch (err) {
      console.error(`docent: a ${name} listener threw`, err)
    }
  }
})

const api = {
  invoke: (name, input) => ipcRenderer.invoke(CHANNELS.invoke, name, input),
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    const wrapped: Listener = (payload) => listener(payload as EventPayload<E>)
    let set = listeners.get(event)
    if (!set) listeners.set(event, (set = new Set()))
    set.add(wrapped)
    return () => {
      set.delete(wrapped)
    }
  },
  pathForFile: (file) => {
    try {
      return webUtils.getPathForFile(file)
    } catch {
      return ''
    }
  },
  pickFolder: () => ipcRenderer.invoke(CHANNELS.pickFolder),
  openExternal: (chunkId) => ipcRenderer.invoke(CHANNELS.openExternal, chunkId),
  libraryLocation: () => ipcRenderer.invoke(CHANNELS.libraryLocation),
  setLibraryLocation: (location) => ipcRenderer.invoke(CHANNELS.setLibraryLocation, location),
} satisfies DocentApi

contextBridge.exposeInMainWorld('docent', api)
