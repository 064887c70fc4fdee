import { connectionUrl } from '../../../shared/library'
import { checkServer } from '../../store/server-check'
import type { HandlerMap } from '../types'

export type LibraryHandlers = HandlerMap<'library.testConnection'>

/**
 * The settings screen's "Test connection": the engine's own open checks (store/server-check.ts) on
 * the URL the person typed, in the engine's process (main only relays). The password, when typed,
 * goes into the URL node-postgres connects with and nowhere else; every message it could appear in
 * is scrubbed by the store.
 */
export function libraryHandlers(): LibraryHandlers {
  return {
    'library.testConnection': async ({ url, requireTls, password }) => {
      const u = new URL(connectionUrl({ url, requireTls }))
      if (password) u.password = password
      return checkServer(u.toString())
    },
  }
}
