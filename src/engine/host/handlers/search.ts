import type { HostDeps } from '../context'
import type { HandlerMap } from '../types'

export type SearchHandlers = HandlerMap<'search'>

export function searchHandlers({ engine, modelUse }: HostDeps): SearchHandlers {
  return {
    search: async ({ query, scope, mode, rerank, k }) => modelUse.using(() => engine.search(query, { scope, mode, rerank, k })),
  }
}
