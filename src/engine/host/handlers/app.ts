import os from 'node:os'
import type { HostDeps } from '../context'
import type { HandlerMap } from '../types'

export type AppHandlers = HandlerMap<'app.info'>

function hardwareSummary(): string {
  const cpus = os.cpus()
  const model = cpus[0]?.model.trim() ?? 'unknown CPU'
  const gb = (os.totalmem() / 1024 ** 3).toFixed(1)
  return `${cpus.length} × ${model}, ${gb} GB RAM, ${process.platform}/${process.arch}`
}

export function appHandlers({ info }: HostDeps): AppHandlers {
  return {
    'app.info': async () => ({
      // An empty version (a build that did not set one) reads as unknown, like none at all.
      version: info.appVersion || '0.0.0',
      dataDir: info.dataDir,
      modelsDir: info.modelsDir,
      hardware: hardwareSummary(),
    }),
  }
}
