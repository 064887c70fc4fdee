import { Engine } from '../engine'
import { ModelManager, type DownloadFetch } from '../models/install'
import { createEngineHost, type EngineHost } from './host'
import { errorMessage } from '../../shared/errors'
import { errorResult, ErrorCode, parseToHost, type FromHost } from './protocol'

/**
 * Serves the engine over a message port (protocol.ts). The port is whatever the process was given:
 * Electron's `process.parentPort` in a utility process, Node's `process.send` in a forked child.
 */

export interface HostPort {
  postMessage(message: FromHost): void
  onMessage(listener: (message: unknown) => void): void
}

export interface ServeOptions {
  dataDir: string
  modelsDir: string
  appVersion?: string
  /** Watch collections' folders and resume interrupted imports (the app); default true. */
  watchFolders?: boolean
  /** fetch for model downloads (the app passes Electron's net.fetch); default: the proxy variables' route. */
  downloadFetch?: DownloadFetch
  /** Called after shutdown with the exit code. */
  exit: (code: number) => void
}

export async function serveEngine(port: HostPort, opts: ServeOptions): Promise<void> {
  let host: EngineHost | null = null
  let opening: Promise<Engine | null> = Promise.resolve(null)
  let stopping = false
  const early: unknown[] = []

  const shutdown = async (code: number): Promise<void> => {
    if (stopping) return
    stopping = true
    try {
      await host?.shutdown()
      await (await opening)?.close()
    } catch (err) {
      console.error(`[engine-host] shutdown: ${errorMessage(err)}`)
    }
    opts.exit(code)
  }

  const handle = (raw: unknown): void => {
    const msg = parseToHost(raw)
    if (!msg) {
      console.error('[engine-host] dropped a malformed message')
      return
    }
    if (msg.type === 'shutdown') {
      void shutdown(0)
      return
    }
    if (!host) {
      early.push(raw)
      return
    }
    if (stopping) {
      port.postMessage({
        type: 'response',
        id: msg.id,
        result: errorResult('The engine is shutting down.', ErrorCode.engineStopped),
      })
      return
    }
    const { id } = msg
    void host.dispatch(msg.method, msg.input).then((result) => port.postMessage({ type: 'response', id, result }))
  }
  // Listen before opening the database so nothing sent meanwhile is lost.
  port.onMessage(handle)

  let engine: Engine
  const open = Engine.open({ dataDir: opts.dataDir, modelsDir: opts.modelsDir })
  opening = open.catch(() => null)
  try {
    engine = await open
  } catch (err) {
    port.postMessage({ type: 'fatal', message: `The index at ${opts.dataDir} could not be opened: ${errorMessage(err)}` })
    opts.exit(1)
    return
  }
  // Asked to stop while the database was opening: shutdown() closes it.
  if (stopping) return
  host = createEngineHost(engine, {
    dataDir: opts.dataDir,
    modelsDir: opts.modelsDir,
    appVersion: opts.appVersion,
    emit: (event, payload) => port.postMessage({ type: 'event', event, payload }),
    watchFolders: opts.watchFolders ?? true,
    ...(opts.downloadFetch ? { models: new ModelManager(engine.modelsDir, { fetchImpl: opts.downloadFetch }) } : {}),
  })
  port.postMessage({ type: 'ready', pid: process.pid })
  for (const raw of early.splice(0)) handle(raw)
}
