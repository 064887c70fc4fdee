import type net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { MessageConnection } from 'vscode-jsonrpc/node'
import { errorMessage } from '../../shared/errors'
import { Engine } from '../engine'
import { ModelManager, type DownloadFetch } from '../models/install'
import { describeOwner, type OwnerLock, type OwnerRole } from '../store/lock'
import { createEngineHost, type EngineHost } from './host'
import { Notify } from './protocol'
import { RequestsInFlight } from './requests'
import { ChannelReader, ChannelWriter, notify, openConnection, serveRequests } from './rpc'
import { acceptClient, listenSocket, type Hello, type SocketChannel } from './socket'

/**
 * The owner of a data folder: the one process with the database open. It serves the host protocol
 * to its own process (in-process, no copy) and to every client attached to its socket: requests
 * are validated by host.dispatch exactly as over the app's IPC, events go to everyone (a write by
 * one client is news for the others).
 *
 * Closing: `idle` (a CLI command or the MCP server is done) stops taking new clients, then waits
 * until no request or job of an attached client is running, so nothing they started is lost; `now`
 * (the app quits, or a grace period ran out) cancels the jobs as the app always has. Either way
 * attached clients are told, and start or find the next owner on their next request.
 */

export interface OwnerOptions {
  dataDir: string
  modelsDir: string
  role: OwnerRole
  appVersion?: string
  /** Watch every collection's folder and resume interrupted imports (the app). */
  watchFolders: boolean
  downloadFetch?: DownloadFetch
  log: (message: string) => void
}

export type CloseMode = 'idle' | 'now'

interface Client {
  socket: net.Socket
  hello: Hello | null
  /** After the hello: the socket and the JSON-RPC connection over it. */
  channel: SocketChannel | null
  connection: MessageConnection | null
  /** Told `ready` (after the hello, once the engine is open). */
  ready: boolean
}

export class LibraryOwner {
  private engine: Engine | null = null
  private host: EngineHost | null = null
  private readonly clients = new Set<Client>()
  private readonly requests: RequestsInFlight
  private closing: Promise<void> | null = null
  private hurry = false
  private readonly opened: Promise<boolean>
  /** The owning process's own side of the protocol, in-process. */
  private readonly localReader: ChannelReader
  private readonly local: MessageConnection

  private constructor(
    private readonly opts: OwnerOptions,
    private readonly lock: OwnerLock,
    private readonly server: net.Server,
    send: (message: unknown) => void,
    private readonly onClosed: (detail: string) => void,
    onOpen: (engine: Engine) => void,
  ) {
    this.localReader = new ChannelReader(opts.log)
    // The connection handles each message in a turn of the event loop of its own, as over a message
    // port: a caller that sends request after request in a loop does not starve timers and I/O (an
    // in-process search is a chain of microtasks).
    this.local = openConnection(this.localReader, new ChannelWriter(send, opts.log))
    serveRequests(
      this.local,
      (method, input) => this.requests.serve(method, input),
      () => void this.close(this.opts.role === 'app' ? 'now' : 'idle'),
    )
    this.opened = this.open(onOpen)
    this.requests = new RequestsInFlight(this.opened, () => this.host)
  }

  /**
   * Listens on the lock's socket first (a client that arrives while the database opens waits for
   * `ready`), then opens the engine. Throws (lock released) when the socket cannot be served.
   */
  static async start(
    opts: OwnerOptions,
    lock: OwnerLock,
    handlers: { local: (message: unknown) => void; onClosed: (detail: string) => void; onOpen: (engine: Engine) => void },
  ): Promise<LibraryOwner> {
    let owner: LibraryOwner | null = null
    const early: net.Socket[] = []
    let server: net.Server
    try {
      server = await listenSocket(lock.info.socket!, (socket) => (owner ? owner.accept(socket) : early.push(socket)))
    } catch (err) {
      lock.release()
      throw err
    }
    owner = new LibraryOwner(opts, lock, server, handlers.local, handlers.onClosed, handlers.onOpen)
    for (const socket of early) owner.accept(socket)
    return owner
  }

  get pid(): number {
    return process.pid
  }

  /** The engine, once open (docent watch drives its own watches on it). */
  get openEngine(): Engine | null {
    return this.engine
  }

  /** A message from the owning process itself. */
  post(message: unknown): void {
    this.localReader.deliver(message)
  }

  close(mode: CloseMode): Promise<void> {
    if (mode === 'now') this.hurry = true
    this.closing ??= this.shutDown()
    return this.closing
  }

  private async open(onOpen: (engine: Engine) => void): Promise<boolean> {
    try {
      this.engine = await Engine.open({ dataDir: this.opts.dataDir, modelsDir: this.opts.modelsDir, lock: this.lock })
    } catch (err) {
      const message = `The index at ${this.opts.dataDir} could not be opened: ${errorMessage(err)}`
      this.broadcast(Notify.fatal, { message })
      void this.close('now')
      return false
    }
    if (this.closing) return false
    this.host = createEngineHost(this.engine, {
      dataDir: this.opts.dataDir,
      modelsDir: this.opts.modelsDir,
      appVersion: this.opts.appVersion,
      emit: (event, payload) => this.broadcast(event, payload),
      watchFolders: this.opts.watchFolders,
      ...(this.opts.downloadFetch
        ? { models: new ModelManager(this.engine.modelsDir, { fetchImpl: this.opts.downloadFetch }) }
        : {}),
    })
    onOpen(this.engine)
    notify(this.local, Notify.ready, { pid: process.pid })
    for (const c of this.clients) this.greet(c)
    return true
  }

  private broadcast(method: string, params: object): void {
    notify(this.local, method, params)
    for (const c of this.clients) if (c.connection && (c.ready || method === Notify.fatal)) notify(c.connection, method, params)
  }

  private greet(c: Client): void {
    if (c.ready || !c.connection || !c.hello || !this.host || this.closing) return
    c.ready = true
    notify(c.connection, Notify.ready, { pid: process.pid })
    // The app and `docent watch` keep every folder in step; whoever owns the library does it for them.
    if (c.hello.role === 'app' || c.hello.role === 'watch') this.host.watchFolders()
  }

  private accept(socket: net.Socket): void {
    if (this.closing) {
      socket.destroy()
      return
    }
    const c: Client = { socket, hello: null, channel: null, connection: null, ready: false }
    this.clients.add(c)
    const reader = new ChannelReader((m) => this.opts.log(`${m} from a client`))
    socket.on('close', () => {
      this.clients.delete(c)
      c.connection?.dispose()
    })
    acceptClient(socket, this.lock.info.token, {
      onHello: (hello, channel) => {
        c.hello = hello
        c.channel = channel
        c.connection = openConnection(reader, new ChannelWriter((m) => channel.send(m), this.opts.log))
        // A client's shutdown means it is leaving, not that the library should close.
        serveRequests(
          c.connection,
          (method, input) => this.requests.serve(method, input),
          () => void channel.end(),
        )
        this.greet(c)
      },
      onMessage: (raw) => reader.deliver(raw),
      onBad: (why) => this.opts.log(`closed a connection: ${why}`),
    })
  }

  /** True while a client's request, a job or a question is running. */
  private busy(): boolean {
    return this.requests.busy()
  }

  private async shutDown(): Promise<void> {
    // No new clients from here on. (Its callback would wait for every connection to end: not awaited.)
    this.server.close()
    if (!this.hurry && (await this.opened) && this.busy()) {
      this.opts.log(`waiting for the requests and jobs still running before closing the library (${this.clients.size} clients)`)
      while (!this.hurry && this.busy()) await sleep(100)
    }
    try {
      await this.host?.shutdown()
    } catch (err) {
      this.opts.log(`shutdown: ${errorMessage(err)}`)
    }
    const bye = { message: `The library's owner, ${describeOwner(this.lock.info)}, has closed it.` }
    for (const c of this.clients) {
      if (c.ready && c.connection) notify(c.connection, Notify.fatal, bye)
      void (c.channel ? c.channel.end() : c.socket.end())
    }
    try {
      await this.engine?.close()
    } catch (err) {
      this.opts.log(`closing the database: ${errorMessage(err)}`)
    }
    // Released by engine.close(); by hand when the engine never opened.
    this.lock.release()
    this.onClosed('closed')
  }
}
