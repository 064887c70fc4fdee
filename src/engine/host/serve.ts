import type { Message } from 'vscode-jsonrpc/node'
import type { DownloadFetch } from '../models/install'
import { folderSpawner } from './open-folder'
import { serverSpawner } from './open-server'
import { Notify, parseMessage } from './protocol'
import { isNotification } from './rpc'

/**
 * The app's engine process: serves the library over a message port (protocol.ts). The port is
 * whatever the process was given: Electron's `process.parentPort` in a utility process, Node's
 * `process.send` in a forked child. Behind the port is the library (open-folder.ts): this process owns
 * the data folder, or, when `docent mcp`, `docent watch` or another CLI command already owns it,
 * relays every message to that owner over its socket (which then watches the folders for the app).
 * When that owner closes, this process exits; the app's client starts it again on the next
 * request, and it becomes the owner.
 */

export interface HostPort {
  postMessage(message: Message): void
  onMessage(listener: (message: unknown) => void): void
}

export interface ServeOptions {
  dataDir: string
  /**
   * A PostgreSQL server's URL instead of the data folder (the app's "Library location" setting):
   * this process connects to it itself, with the password from PGPASSWORD of its environment.
   */
  database?: string
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
  let shutdownAsked = false
  const log = (m: string): void => console.error(`[engine-host] ${m}`)
  const spawn = opts.database
    ? serverSpawner({
        database: opts.database,
        modelsDir: opts.modelsDir,
        ...(opts.appVersion ? { appVersion: opts.appVersion } : {}),
        log,
      })
    : folderSpawner({
        dataDir: opts.dataDir,
        modelsDir: opts.modelsDir,
        role: 'app',
        ...(opts.appVersion ? { appVersion: opts.appVersion } : {}),
        watchFolders: opts.watchFolders ?? true,
        ...(opts.downloadFetch ? { downloadFetch: opts.downloadFetch } : {}),
        log,
      })
  const library = spawn({
    onMessage: (raw) => {
      // Checked again here: when attached, this is what another process sent over its socket.
      const message = parseMessage(raw)
      if (message) port.postMessage(message)
      else console.error('[engine-host] dropped a malformed message from the library')
    },
    onExit: (detail) => {
      if (!shutdownAsked) console.error(`[engine-host] the library closed: ${detail}`)
      opts.exit(shutdownAsked ? 0 : 1)
    },
  })
  port.onMessage((raw) => {
    const message = parseMessage(raw)
    if (!message) {
      console.error('[engine-host] dropped a malformed message')
      return
    }
    if (isNotification(message, Notify.shutdown)) shutdownAsked = true
    library.postMessage(message)
  })
}
