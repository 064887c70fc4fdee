import type { Engine } from '../engine'
import type { ModelManager } from '../models/install'
import type { ImportJobs } from './imports'
import type { JobRegistry } from './jobs'
import type { ModelUse } from './model-use'
import type { Emit } from './types'

/**
 * What the host's handler maps share: the engine, the validated event channel, the running jobs and
 * questions, and the model manager. Built once by createEngineHost (host.ts) and handed to each
 * domain's map in handlers/.
 */

export interface HostInfo {
  dataDir: string
  modelsDir: string
  appVersion?: string
}

export interface HostDeps {
  engine: Engine
  /** Validates each payload against EventMap before it leaves the host. */
  emit: Emit
  jobs: JobRegistry
  imports: ImportJobs
  modelUse: ModelUse
  models: ModelManager
  /** Questions being answered, by request id, so they can be cancelled. */
  asks: Map<string, AbortController>
  info: HostInfo
}
