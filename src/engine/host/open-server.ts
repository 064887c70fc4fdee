import { setTimeout as sleep } from 'node:timers/promises'
import type { Message, MessageConnection } from 'vscode-jsonrpc/node'
import { errorMessage } from '../../shared/errors'
import { Engine } from '../engine'
import { redactUrl } from '../store/pg'
import type { EngineProcess, EngineProcessListeners, SpawnEngine } from './client'
import { createEngineHost, type EngineHost } from './host'
import { Notify } from './protocol'
import { RequestsInFlight } from './requests'
import { ChannelReader, ChannelWriter, notify, openConnection, serveRequests } from './rpc'
import type { LibraryProcess, LibraryState } from './open-folder'

/**
 * Opening a team library on a PostgreSQL server: no lock and no socket (those keep two processes
 * off one PGlite folder); every process connects to the server itself and runs its own host over
 * its own engine, so EngineClient drives it as it drives an owned folder. Writes from other
 * processes reach this one's searches through the store (ADR 0010).
 */
export interface OpenServerOptions {
  database: string
  modelsDir: string
  /** Never migrate or write on open (a read-only role: the MCP server without --allow-writes). */
  readOnly?: boolean
  appVersion?: string
  onOwn?: (engine: Engine) => void
  log?: (message: string) => void
}

export function serverSpawner(opts: OpenServerOptions, onSpawn?: (proc: LibraryProcess) => void): SpawnEngine {
  return (listeners) => {
    const proc = new ServerOpening(opts, listeners)
    onSpawn?.(proc)
    return proc
  }
}

class ServerOpening implements LibraryProcess, EngineProcess {
  state: LibraryState = { kind: 'starting' }
  private engine: Engine | null = null
  private host: EngineHost | null = null
  private readonly requests: RequestsInFlight
  private closing: Promise<void> | null = null
  private readonly opened: Promise<boolean>
  private readonly reader: ChannelReader
  private readonly local: MessageConnection

  constructor(
    private readonly opts: OpenServerOptions,
    private readonly listeners: EngineProcessListeners,
  ) {
    const log = opts.log ?? (() => {})
    this.reader = new ChannelReader(log)
    this.local = openConnection(this.reader, new ChannelWriter((m) => listeners.onMessage(m), log))
    serveRequests(
      this.local,
      (method, input) => this.requests.serve(method, input),
      () => void this.close(),
    )
    this.opened = this.open()
    this.requests = new RequestsInFlight(this.opened, () => this.host)
  }

  get pid(): number | undefined {
    return process.pid
  }

  private async open(): Promise<boolean> {
    try {
      this.engine = await Engine.open({
        database: this.opts.database,
        modelsDir: this.opts.modelsDir,
        readOnly: this.opts.readOnly,
      })
    } catch (err) {
      notify(this.local, Notify.fatal, {
        message: `The library at ${redactUrl(this.opts.database)} could not be opened: ${errorMessage(err)}`,
      })
      void this.close()
      return false
    }
    if (this.closing) return false
    this.host = createEngineHost(this.engine, {
      dataDir: redactUrl(this.opts.database),
      modelsDir: this.opts.modelsDir,
      appVersion: this.opts.appVersion,
      emit: (event, payload) => notify(this.local, event, payload),
      watchFolders: false,
    })
    this.state = { kind: 'owner' }
    this.opts.onOwn?.(this.engine)
    notify(this.local, Notify.ready, { pid: process.pid })
    return true
  }

  postMessage(message: Message): void {
    this.reader.deliver(message)
  }

  kill(): void {
    void this.close()
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown()
    return this.closing
  }

  private async shutDown(): Promise<void> {
    const log = this.opts.log ?? (() => {})
    await this.opened
    while (this.requests.busy()) await sleep(100)
    try {
      await this.host?.shutdown()
    } catch (err) {
      log(`shutdown: ${errorMessage(err)}`)
    }
    try {
      await this.engine?.close()
    } catch (err) {
      log(`closing the connection: ${errorMessage(err)}`)
    }
    this.state = { kind: 'gone' }
    setImmediate(() => this.listeners.onExit('closed'))
  }
}
