import type { DocentApi, EventName, EventPayload, InvokeInput, InvokeName, InvokeOutput, Result } from '../../src/shared/api'
import type { LibraryLocationInfo, SaveLibraryLocation } from '../../src/shared/library'

/**
 * The browser stand-in for the preload: defines `window.docent` with the preload's exact shape,
 * over Playwright bindings instead of Electron IPC. Runs INSIDE the page (page.addInitScript
 * serializes this function), so it must not close over anything from this module.
 *
 *   __docentInvoke(name, input)  -> dispatch(name, input) over the real engine host (Node side)
 *   __docentPickFolder()         -> the harness's pickFolder option
 *   __docentOpenExternal(id)     -> records the request after the engine resolves the path
 *   __docentLibraryLocation()    -> main's library location store (src/main/location-setting.ts)
 *   __docentSetLibraryLocation() -> the same store's save, then the harness reopens the engine there
 *   __docentEmit(name, payload)  <- the harness pushes engine events into the page's bus
 */

export interface StandInOptions {
  /** File name -> filesystem path, what webUtils.getPathForFile would answer for dropped folders. */
  dropPaths: Record<string, string>
}

interface PageBindings {
  __docentInvoke(name: string, input: unknown): Promise<Result<unknown>>
  __docentPickFolder(): Promise<string | null>
  __docentOpenExternal(chunkId: string): Promise<Result<null>>
  __docentLibraryLocation(): Promise<Result<LibraryLocationInfo>>
  __docentSetLibraryLocation(input: SaveLibraryLocation): Promise<Result<LibraryLocationInfo>>
}

export function installDocentStandIn(options: StandInOptions): void {
  const page = globalThis as unknown as PageBindings & Record<string, unknown>
  const listeners = new Map<string, Set<(payload: unknown) => void>>()

  const api = {
    invoke<K extends InvokeName>(name: K, input: InvokeInput<K>): Promise<Result<InvokeOutput<K>>> {
      // Node answers with data checked against the contract's output schema (dispatch).
      return page.__docentInvoke(name, input) as Promise<Result<InvokeOutput<K>>>
    },
    on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
      const wrapped = (payload: unknown): void => listener(payload as EventPayload<E>)
      let set = listeners.get(event)
      if (!set) listeners.set(event, (set = new Set()))
      set.add(wrapped)
      return () => {
        set.delete(wrapped)
      }
    },
    pathForFile: (file: File): string => options.dropPaths[file.name] ?? '',
    pickFolder: () => page.__docentPickFolder(),
    openExternal: (chunkId: string) => page.__docentOpenExternal(chunkId),
    libraryLocation: () => page.__docentLibraryLocation(),
    setLibraryLocation: (input: SaveLibraryLocation) => page.__docentSetLibraryLocation(input),
  } satisfies DocentApi

  Object.defineProperty(globalThis, '__docentEmit', {
    value: (name: string, payload: unknown): number => {
      const set = listeners.get(name)
      for (const listener of set ?? []) {
        try {
          listener(payload)
        } catch (err) {
          console.error(`docent: a ${name} listener threw`, err)
        }
      }
      return set?.size ?? 0
    },
  })
  // Like contextBridge: a frozen object the page cannot replace.
  Object.defineProperty(globalThis, 'docent', {
    value: Object.freeze(api),
    writable: false,
    configurable: false,
    enumerable: true,
  })
}
