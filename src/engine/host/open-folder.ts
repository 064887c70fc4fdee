import { setTimeout as sleep } from 'node:timers/promises'
import type { Message } from 'vscode-jsonrpc/node'
import { errorMessage } from '../../shared/errors'
import type { Engine } from '../engine'
import type { DownloadFetch } from '../models/install'
import { describeOwner, lockIsStale, readLock, tryAcquireLock, type LockInfo, type OwnerRole } from '../store/lock'
import type { EngineProcess, EngineProcessListeners, SpawnEngine } from './client'
import { LibraryOwner, type CloseMode } from './owner'
import { Notify } from './protocol'
import { isNotification, notificationMessage } from './rpc'
import { connectSocket, socketPathFor, type SocketChannel } from './socket'

/**
 * Opening "the library" (a data folder) from any process: attach to the owner's socket when a live
 * process owns the folder, else take the lock and become the owner (owner.ts). The result is an
 * EngineProcess, so EngineClient (client.ts) drives both alike: it queues requests until `ready`,
 * and when the owner goes away it fails what was pending, sends the final events of the jobs it
 * knew, and on the next request calls this spawner again, which attaches to the next owner or
 * becomes it. The app's engine process (serve.ts), the CLI and the MCP server all open it so.
 */

export interface OpenFolderOptions {
  dataDir: string
  modelsDir: string
  role: OwnerRole
  appVersion?: string
  /** When owning: watch every collection's folder and resume interrupted imports (the app). */
  watchFolders?: boolean
  downloadFetch?: DownloadFetch
  /** How long to wait for an owner that holds the lock but does not answer yet (starting up, or closing); default 30 s. */
  attachTimeoutMs?: number
  /** Called each time this process becomes the owner, with the open engine. */
  onOwn?: (engine: Engine) => void
  log?: (message: string) => void
}

/** What one spawn became: useful to tests and to `docent watch`. */
export type LibraryState = { kind: 'starting' } | { kind: 'owner' } | { kind: 'attached'; owner: LockInfo } | { kind: 'gone' }

export interface LibraryProcess extends EngineProcess {
  readonly state: LibraryState
  /** Owner: close as `mode` says; attached: leave. */
  close(mode: CloseMode): void
}

export function folderSpawner(opts: OpenFolderOptions, onSpawn?: (proc: LibraryProcess) => void): SpawnEngine {
  return (listeners) => {
    const proc = new Opening(opts, listeners)
    onSpawn?.(proc)
    void proc.start()
    return proc
  }
}

class Opening implements LibraryProcess {
  state: LibraryState = { kind: 'starting' }
  private owner: LibraryOwner | null = null
  private channel: SocketChannel | null = null
  private stopped = false
  private ended = false
  private reattempts = 0
  private readonly log: (message: string) => void

  constructor(
    private readonly opts: OpenFolderOptions,
    private readonly listeners: EngineProcessListeners,
  ) {
    this.log = opts.log ?? ((m) => console.error(`[docent] ${m}`))
  }

  get pid(): number | undefined {
    if (this.state.kind === 'owner') return process.pid
    if (this.state.kind === 'attached') return this.state.owner.pid
    return undefined
  }

  postMessage(message: Message): void {
    if (this.owner) return this.owner.post(message)
    const shutdown = isNotification(message, Notify.shutdown)
    if (this.channel) {
      // Leaving: the owner keeps the library open for the others.
      if (shutdown) {
        this.stopped = true
        void this.channel.end()
      } else void this.channel.send(message)
      return
    }
    // EngineClient sends nothing but a shutdown before `ready`.
    if (shutdown) this.close('now')
  }

  kill(): void {
    this.close('now')
  }

  close(mode: CloseMode): void {
    this.stopped = true
    if (this.owner) void this.owner.close(mode)
    else if (this.channel) this.channel.socket.destroy()
  }

  async start(): Promise<void> {
    const { dataDir, role } = this.opts
    const began = Date.now()
    const deadline = began + (this.opts.attachTimeoutMs ?? 30_000)
    let noted = false
    try {
      for (;;) {
        if (this.stopped) return this.end('stopped before it opened the library')
        const holder = readLock(dataDir)
        if (holder?.socket && !lockIsStale(holder)) {
          const hello = { token: holder.token, role, pid: process.pid }
          const channel = await connectSocket(holder.socket, hello, (why) =>
            this.log(`dropped the connection to the owner: ${why}`),
          ).catch(() => null)
          if (channel) return this.attach(channel, holder)
        }
        const got = tryAcquireLock(dataDir, { role, socket: socketPathFor(dataDir) })
        if ('release' in got) return await this.own(got)
        if (Date.now() > deadline) return this.fail(busyMessage(dataDir, got))
        if (!noted && Date.now() - began > 2_000) {
          noted = true
          this.log(`waiting for ${describeOwner(got)}, which has the index open, to answer…`)
        }
        await sleep(150)
      }
    } catch (err) {
      this.fail(`The index at ${dataDir} could not be opened: ${errorMessage(err)}`)
    }
  }

  private attach(channel: SocketChannel, owner: LockInfo): void {
    const { socket } = channel
    this.channel = channel
    this.state = { kind: 'attached', owner }
    let greeted = false
    channel.listen((m) => {
      if (isNotification(m, Notify.ready)) greeted = true
      this.listeners.onMessage(m)
    })
    socket.on('close', () => {
      // Closed before `ready`: a dying owner whose listening socket outlived it by a moment (a
      // SIGKILLed process closes its files one by one). Nothing was sent yet: open the library again.
      if (!greeted && !this.stopped && this.channel === channel && this.reattempts++ < 5) {
        this.channel = null
        this.state = { kind: 'starting' }
        void this.start()
        return
      }
      this.end(`${describeOwner(owner)} closed the connection`)
    })
    if (this.stopped) socket.destroy()
  }

  private async own(lock: Parameters<typeof LibraryOwner.start>[1]): Promise<void> {
    this.owner = await LibraryOwner.start(
      {
        dataDir: this.opts.dataDir,
        modelsDir: this.opts.modelsDir,
        role: this.opts.role,
        ...(this.opts.appVersion ? { appVersion: this.opts.appVersion } : {}),
        watchFolders: this.opts.watchFolders ?? false,
        ...(this.opts.downloadFetch ? { downloadFetch: this.opts.downloadFetch } : {}),
        log: this.log,
      },
      lock,
      {
        local: (m) => this.listeners.onMessage(m),
        onClosed: (detail) => this.end(detail),
        onOpen: (engine) => this.opts.onOwn?.(engine),
      },
    )
    this.state = { kind: 'owner' }
    if (this.stopped) void this.owner.close('now')
  }

  private fail(message: string): void {
    this.listeners.onMessage(notificationMessage(Notify.fatal, { message }))
    this.end(message)
  }

  private end(detail: string): void {
    if (this.ended) return
    this.ended = true
    this.state = { kind: 'gone' }
    this.owner = null
    this.channel = null
    this.listeners.onExit(detail)
  }
}

function busyMessage(dataDir: string, holder: LockInfo): string {
  const how = holder.socket
    ? `which does not answer on ${holder.socket}`
    : 'which does not share it with other processes (a test or an evaluation run)'
  return `The index at ${dataDir} is open in ${describeOwner(holder)}, ${how}. Wait for it to finish or quit it, then try again.`
}
