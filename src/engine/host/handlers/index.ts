import type { InvokeName } from '../../../shared/api'
import type { HostDeps } from '../context'
import type { Handler } from '../types'
import { appHandlers, type AppHandlers } from './app'
import { askHandlers, type AskHandlers } from './ask'
import { collectionsHandlers, type CollectionsHandlers } from './collections'
import { jobsHandlers, type JobsHandlers } from './jobs'
import { libraryHandlers, type LibraryHandlers } from './library'
import { modelsHandlers, type ModelsHandlers } from './models'
import { searchHandlers, type SearchHandlers } from './search'
import { settingsHandlers, type SettingsHandlers } from './settings'
import { sourceHandlers, type SourceHandlers } from './source'
import { threadsHandlers, type ThreadsHandlers } from './threads'

export { internalHandlers, type InternalHandlers } from './source'

/**
 * Every InvokeMap method implemented on an Engine, one map per domain (Actual Budget's shape). The
 * `satisfies` below fails to compile when a method of the contract has no handler here.
 */
export type Handlers = CollectionsHandlers &
  JobsHandlers &
  SearchHandlers &
  AskHandlers &
  ThreadsHandlers &
  SourceHandlers &
  ModelsHandlers &
  SettingsHandlers &
  LibraryHandlers &
  AppHandlers

export function createHandlers(deps: HostDeps): Handlers {
  return {
    ...collectionsHandlers(deps),
    ...jobsHandlers(deps),
    ...searchHandlers(deps),
    ...askHandlers(deps),
    ...threadsHandlers(deps),
    ...sourceHandlers(deps),
    ...modelsHandlers(deps),
    ...settingsHandlers(deps),
    ...libraryHandlers(),
    ...appHandlers(deps),
  } satisfies { [K in InvokeName]: Handler<K> }
}
