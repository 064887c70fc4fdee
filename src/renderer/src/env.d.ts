/// <reference types="vite/client" />
import type { DocentApi } from '../../shared/api'

declare global {
  interface Window {
    /** The preload's typed api (or the e2e harness's stand-in). */
    docent: DocentApi
    /** Renderer entry points that tests drive the same way the UI does. */
    docentApp?: { importFolders(paths: string[]): Promise<void> }
  }
}

export {}
