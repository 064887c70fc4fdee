import type { Message, MessageConnection } from 'vscode-jsonrpc/node'
import type { z } from 'zod'
import {
  EventMap,
  type EventName,
  type EventPayload,
  type InvokeInput,
  type InvokeName,
  type InvokeOutput,
  type Result,
} from '../../shared/api'
import { errorMessage } from '../../shared/errors'
import {
  ErrorCode,
  errorResult,
  FatalParams,
  inputOf,
  Notify,
  ReadyParams,
  type INTERNAL_METHODS,
  type InternalName,
} from './protocol'
import { ChannelReader, ChannelWriter, openConnection, resultOfError } from './rpc'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Electron main's side of the engine protocol (engine/host/protocol.ts): starts the engine process
 * on first use, holds requests until it is ready, times requests out, relays events — and when the
 * process dies, answers every pending request with an error and sends the final event of every
 * job that was running, so nothing in the UI waits forever. The next request starts a new process.
 * Ids and matching answers to requests are the JSON-RPC connection's (rpc.ts).
 *
 * The process is injected (`spawn`): Electron's utilityProcess in the app (src/main/engine-process.ts),
 * Node's child_process in tests (node-spawner.ts), the library in-process or over its owner's
 * socket (open-folder.ts), a PostgreSQL server (open-server.ts).
 */

export interface EngineProcess {
  readonly pid: number | undefined
  postMessage(message: Message): void
  kill(): void
}

export interface EngineProcessListeners {
  onMessage(message: unknown): void
  /** Called exactly once, when the process has gone (exited, crashed, or failed to start). */
  onExit(detail: string): void
}

export type SpawnEngine = (listeners: EngineProcessListeners) => EngineProcess

export interface EngineClientOptions {
  spawn: SpawnEngine
  onEvent: <E extends EventName>(event: E, payload: EventPayload<E>) => void
  /** Per-method request timeouts in ms; `default` for the rest. */
  timeoutsMs?: Partial<Record<InvokeName | InternalName | 'default', number>>
  log?: (message: string) => void
}

const DEFAULT_TIMEOUTS: Partial<Record<InvokeName | InternalName | 'default', number>> = {
  default: 60_000,
  // The first search loads the embedding model and the reranker.
  search: 180_000,
  // Copies and hashes a model of up to several GB.
  'models.import': 30 * 60_000,
  'collections.remove': 5 * 60_000,
}

type RunningJob = { kind: 'import' } | { kind: 'models'; role: EventPayload<'models.done'>['role'] } | { kind: 'ask' }

/** One engine process and its connection; the next process is a new generation. */
interface Generation {
  proc: EngineProcess | null
  connection: MessageConnection
  reader: ChannelReader
  dead: boolean
  fatal: string | null
  /** Requests not answered yet: each fails with the message when the process has gone. */
  pending: Set<(stopped: string) => void>
  /** Resolves true at `ready`, false when the process went before it. */
  opened: Promise<boolean>
  markOpened: (ok: boolean) => void
  /** Resolves once the process has gone and its last messages were handled. */
  stopped: Promise<void>
  markStopped: () => void
  /** Running jobs (by jobId) and questions (by requestId) that are owed a final event. */
  jobs: Map<string, RunningJob>
  /** Jobs and questions whose final event already arrived, so a late response does not revive them. */
  finished: Set<string>
}

function isEventName(name: string): name is EventName {
  return Object.prototype.hasOwnProperty.call(EventMap, name)
}

function settleOnce<T>(): { promise: Promise<T>; settle: (value: T) => void } {
  let settle = (_: T): void => {}
  const promise = new Promise<T>((resolve) => (settle = resolve))
  return { promise, settle }
}

export class EngineClient {
  private gen: Generation | null = null
  private disposed = false
  private readonly timeouts: Partial<Record<string, number>>
  private readonly log: (message: string) => void

  constructor(private readonly opts: EngineClientOptions) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeoutsMs }
    this.log = opts.log ?? ((m) => console.error(`[engine-client] ${m}`))
  }

  /** Pid of the running engine process, if any (tests kill it). */
  get pid(): number | undefined {
    return this.gen?.proc?.pid
  }

  invoke<K extends InvokeName>(name: K, input: InvokeInput<K>): Promise<Result<InvokeOutput<K>>> {
    // The host validates the output against the same contract before answering.
    return this.request(name, input) as Promise<Result<InvokeOutput<K>>>
  }

  invokeInternal<K extends InternalName>(
    name: K,
    input: z.input<(typeof INTERNAL_METHODS)[K]['input']>,
  ): Promise<Result<z.output<(typeof INTERNAL_METHODS)[K]['output']>>> {
    return this.request(name, input) as Promise<Result<z.output<(typeof INTERNAL_METHODS)[K]['output']>>>
  }

  /** Sends any method; the host rejects names and inputs outside the contract. */
  request(method: string, input: unknown): Promise<Result<unknown>> {
    if (this.disposed) return Promise.resolve(errorResult('The app is closing.', ErrorCode.engineStopped))
    const gen = this.ensureStarted()
    const ms = this.timeouts[method] ?? this.timeouts['default'] ?? 60_000
    return new Promise((resolve) => {
      let settled = false
      const settle = (r: Result<unknown>): void => {
        if (settled) return
        settled = true
        gen.pending.delete(stop)
        clearTimeout(timer)
        resolve(r)
      }
      const stop = (message: string): void => settle(errorResult(message, ErrorCode.engineStopped))
      gen.pending.add(stop)
      const timer = setTimeout(
        () => settle(errorResult(`The engine did not answer ${method} within ${Math.round(ms / 1000)} s.`, ErrorCode.timeout)),
        ms,
      )
      timer.unref?.()
      void gen.opened.then((ok) => {
        if (!ok) return
        try {
          gen.connection.sendRequest(method, input).then(
            (value: unknown) => {
              // An answer after the time-out is dropped, as the request was.
              if (settled) return
              this.trackStartedJob(gen, method, input, value)
              settle({ ok: true, value })
            },
            (err: unknown) => settle(resultOfError(err)),
          )
        } catch (err) {
          settle(errorResult(errorMessage(err), ErrorCode.engineStopped))
        }
      })
    })
  }

  /** Asks the engine to close its database and exit; kills it after `graceMs`. No restart afterwards. */
  async dispose(graceMs = 5_000): Promise<void> {
    this.disposed = true
    await this.stopProcess(graceMs)
  }

  /**
   * Stops the engine process as dispose() does, but the client stays usable: the next request
   * starts a new process, from what `spawn` gives then (the app's library moved to another location).
   */
  async restart(graceMs = 5_000): Promise<void> {
    await this.stopProcess(graceMs)
  }

  private async stopProcess(graceMs: number): Promise<void> {
    const gen = this.gen
    if (!gen?.proc || gen.dead) return
    try {
      // Straight to the process, ready or not: one that is still opening its database closes it.
      gen.proc.postMessage({ jsonrpc: '2.0', method: Notify.shutdown } as Message)
    } catch {
      gen.proc.kill()
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const graceOver = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)))
    if ((await Promise.race([gen.stopped, graceOver])) === 'late') {
      gen.proc.kill()
      await Promise.race([gen.stopped, sleep(2_000)])
    }
    clearTimeout(timer)
  }

  private ensureStarted(): Generation {
    if (this.gen && !this.gen.dead) return this.gen
    const opened = settleOnce<boolean>()
    const stopped = settleOnce<void>()
    const reader = new ChannelReader(
      (m) => this.log(`${m} from the engine`),
      (method, params) => this.onNotification(gen, method, inputOf(params)),
    )
    const gen: Generation = {
      proc: null,
      connection: openConnection(reader, new ChannelWriter((m) => gen.proc?.postMessage(m), this.log)),
      reader,
      dead: false,
      fatal: null,
      pending: new Set(),
      opened: opened.promise,
      markOpened: opened.settle,
      stopped: stopped.promise,
      markStopped: stopped.settle,
      jobs: new Map(),
      finished: new Set(),
    }
    gen.connection.onNotification((method, params) => this.onNotification(gen, method, inputOf(params)))
    this.gen = gen
    try {
      gen.proc = this.opts.spawn({
        onMessage: (m) => reader.deliver(m),
        onExit: (detail) => this.onExit(gen, detail),
      })
    } catch (err) {
      // Answer the request that is about to be queued, then start afresh next time.
      queueMicrotask(() => this.onExit(gen, `could not start: ${err instanceof Error ? err.message : String(err)}`))
    }
    return gen
  }

  private onNotification(gen: Generation, method: string, params: unknown): void {
    if (method === Notify.ready) {
      if (ReadyParams.safeParse(params).success) gen.markOpened(true)
      else this.log('dropped a malformed ready from the engine')
      return
    }
    if (method === Notify.fatal) {
      const fatal = FatalParams.safeParse(params)
      if (!fatal.success) return this.log('dropped a malformed fatal from the engine')
      gen.fatal = fatal.data.message
      this.log(`engine failed to start: ${fatal.data.message}`)
      return
    }
    if (!isEventName(method)) {
      this.log(`dropped unknown event ${method}`)
      return
    }
    const parsed = EventMap[method].safeParse(params)
    if (!parsed.success) {
      this.log(`dropped malformed ${method} event`)
      return
    }
    this.trackEvent(gen, method, parsed.data)
    this.opts.onEvent(method, parsed.data as EventPayload<typeof method>)
  }

  private trackStartedJob(gen: Generation, method: string, input: unknown, value: unknown): void {
    if (method === 'ask') {
      const requestId =
        value && typeof value === 'object' && 'requestId' in value && typeof value.requestId === 'string' ? value.requestId : null
      if (requestId && !gen.finished.has(requestId)) gen.jobs.set(requestId, { kind: 'ask' })
      return
    }
    const jobId = value && typeof value === 'object' && 'jobId' in value && typeof value.jobId === 'string' ? value.jobId : null
    if (!jobId || gen.finished.has(jobId)) return
    if (method === 'collections.import' || method === 'collections.resync') gen.jobs.set(jobId, { kind: 'import' })
    if (method === 'models.download') {
      const role = EventMap['models.done'].shape.role.safeParse(
        input && typeof input === 'object' && 'role' in input ? input.role : null,
      )
      if (role.success) gen.jobs.set(jobId, { kind: 'models', role: role.data })
    }
  }

  private trackEvent(gen: Generation, event: EventName, payload: object): void {
    if (event === 'ask.done' || event === 'ask.event') {
      const requestId = 'requestId' in payload && typeof payload.requestId === 'string' ? payload.requestId : null
      if (!requestId) return
      if (event === 'ask.done') {
        gen.jobs.delete(requestId)
        gen.finished.add(requestId)
      } else if (!gen.finished.has(requestId)) gen.jobs.set(requestId, { kind: 'ask' })
      return
    }
    const jobId = 'jobId' in payload && typeof payload.jobId === 'string' ? payload.jobId : null
    if (!jobId) return
    if (event === 'import.done' || event === 'models.done') {
      gen.jobs.delete(jobId)
      gen.finished.add(jobId)
    } else if (event === 'import.progress' && !gen.finished.has(jobId)) {
      gen.jobs.set(jobId, { kind: 'import' })
    } else if (event === 'models.progress' && !gen.finished.has(jobId)) {
      const role = EventMap['models.progress'].shape.role.safeParse('role' in payload ? payload.role : null)
      if (role.success) gen.jobs.set(jobId, { kind: 'models', role: role.data })
    }
  }

  private onExit(gen: Generation, detail: string): void {
    if (gen.dead) return
    gen.dead = true
    // The next request starts a new process at once; this one's last messages are handled first.
    if (this.gen === gen) this.gen = null
    gen.reader.afterDelivered(() => this.onGone(gen, detail))
  }

  private onGone(gen: Generation, detail: string): void {
    const message = gen.fatal ?? `The engine stopped unexpectedly (${detail}).`
    if (!this.disposed || gen.pending.size > 0) this.log(message)
    gen.markOpened(false)
    for (const stop of [...gen.pending]) stop(message)
    gen.connection.dispose()
    for (const [jobId, job] of gen.jobs) {
      if (job.kind === 'import')
        this.opts.onEvent('import.done', {
          jobId,
          report: null,
          error: `${message} The import did not finish; run it again to continue.`,
        })
      else if (job.kind === 'models')
        this.opts.onEvent('models.done', {
          jobId,
          role: job.role,
          error: `${message} The download did not finish; it resumes next time.`,
        })
      else this.opts.onEvent('ask.done', { requestId: jobId, error: `${message} The question was not answered; ask it again.` })
    }
    gen.jobs.clear()
    gen.markStopped()
  }
}
