import type { DocentApi } from './api'

/** `window.docent`, exposed by the preload (src/preload/index.ts) and by the browser e2e harness. */
declare global {
  interface Window {
    docent: DocentApi
  }
}

export {}
