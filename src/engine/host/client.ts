import {
  EventMap,
  type EventName,
  type EventPayload,
  type InvokeInput,
  type InvokeName,
  type InvokeOutput,
  type Result,
} from '../../shared/api'
import type { z } from 'zod'
import {
  ErrorCode,
  errorResult,
  parseFromHost,
  type FromHost,
  type INTERNAL_METHODS,
  type InternalName,
  type ToHost,
} from './protocol'

/**
 * Electron main's side of the engine protocol (engine/host/protocol.ts): starts the engine process
 * on first use, matches responses to requests by id, times requests out, relays events — and when
 * the process dies, answers every pending request with an error and sends the final event of every
 * job that was running, so nothing in the UI waits forever. The next request starts a new process.
 *
 * The process is injected (`spawn`): Electron's utilityProcess in the app (engine-process.ts),
 * Node's child_process in tests (node-spawner.ts).
 */

export interface EngineProcess {
  readonly pid: number | undefined
  postMessage(message: ToHost): void
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

interface Pending {
  method: string
  input: unknown
  resolve: (r: Result<unknown>) => void
  timer: ReturnType<typeof setTimeout>
}

type RunningJob = { kind: 'import' } | { kind: 'models'; role: EventPayload<'models.done'>['role'] } | { kind: 'ask' }

interface Generation {
  proc: EngineProcess | null
  ready: boolean
  dead: boolean
  fatal: string | null
  queue: ToHost[]
  pending: Map<number, Pending>
  /** Running jobs (by jobId) and questions (by requestId) that are owed a final event. */
  jobs: Map<string, RunningJob>
  /** Jobs and questions whose final event already arrived, so a late response does not revive them. */
  finished: Set<string>
  /** Resolves when the process has gone. */
  exited: Promise<void>
  markExited: () => void
}

function isEventName(name: string): name is EventName {
  return Object.prototype.hasOwnProperty.call(EventMap, name)
}

export class EngineClient {
  private gen: Generation | null = null
  private nextId = 1
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
    const id = this.nextId++
    return new Promise((resolve) => {
      const ms = this.timeouts[method] ?? this.timeouts['default'] ?? 60_000
      const timer = setTimeout(() => {
        if (!gen.pending.delete(id)) return
        resolve(errorResult(`The engine did not answer ${method} within ${Math.round(ms / 1000)} s.`, ErrorCode.timeout))
      }, ms)
      timer.unref?.()
      gen.pending.set(id, { method, input, resolve, timer })
      this.send(gen, { type: 'request', id, method, input })
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
      gen.proc.postMessage({ type: 'shutdown' })
    } catch {
      gen.proc.kill()
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const graceOver = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)))
    if ((await Promise.race([gen.exited, graceOver])) === 'late') {
      gen.proc.kill()
      await Promise.race([gen.exited, new Promise((resolve) => setTimeout(resolve, 2_000))])
    }
    clearTimeout(timer)
  }

  private ensureStarted(): Generation {
    if (this.gen && !this.gen.dead) return this.gen
    let markExited = (): void => {}
    const exited = new Promise<void>((resolve) => (markExited = resolve))
    const gen: Generation = {
      proc: null,
      ready: false,
      dead: false,
      fatal: null,
      queue: [],
      pending: new Map(),
      jobs: new Map(),
      finished: new Set(),
      exited,
      markExited,
    }
    this.gen = gen
    try {
      gen.proc = this.opts.spawn({
        onMessage: (m) => this.onMessage(gen, m),
        onExit: (detail) => this.onExit(gen, detail),
      })
    } catch (err) {
      // Answer the request that is about to be queued, then start afresh next time.
      queueMicrotask(() => this.onExit(gen, `could not start: ${err instanceof Error ? err.message : String(err)}`))
    }
    return gen
  }

  private send(gen: Generation, msg: ToHost): void {
    if (!gen.ready || !gen.proc) {
      gen.queue.push(msg)
      return
    }
    try {
      gen.proc.postMessage(msg)
    } catch (err) {
      this.log(`send failed: ${err instanceof Error ? err.message : String(err)}`)
    }
  }

  private onMessage(gen: Generation, raw: unknown): void {
    const msg: FromHost | null = parseFromHost(raw)
    if (!msg) {
      this.log('dropped a malformed message from the engine')
      return
    }
    switch (msg.type) {
      case 'ready': {
        gen.ready = true
        for (const m of gen.queue.splice(0)) this.send(gen, m)
        return
      }
      case 'fatal': {
        gen.fatal = msg.message
        this.log(`engine failed to start: ${msg.message}`)
        return
      }
      case 'response': {
        const p = gen.pending.get(msg.id)
        if (!p) return // timed out earlier
        gen.pending.delete(msg.id)
        clearTimeout(p.timer)
        if (msg.result.ok) this.trackStartedJob(gen, p.method, p.input, msg.result.value)
        p.resolve(msg.result)
        return
      }
      case 'event': {
        if (!isEventName(msg.event)) {
          this.log(`dropped unknown event ${msg.event}`)
          return
        }
        const parsed = EventMap[msg.event].safeParse(msg.payload)
        if (!parsed.success) {
          this.log(`dropped malformed ${msg.event} event`)
          return
        }
        this.trackEvent(gen, msg.event, parsed.data)
        this.opts.onEvent(msg.event, parsed.data as EventPayload<typeof msg.event>)
        return
      }
    }
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
    gen.markExited()
    if (this.gen === gen) this.gen = null
    const message = gen.fatal ?? `The engine stopped unexpectedly (${detail}).`
    if (!this.disposed || gen.pending.size > 0) this.log(message)
    for (const [, p] of gen.pending) {
      clearTimeout(p.timer)
      p.resolve(errorResult(message, ErrorCode.engineStopped))
    }
    gen.pending.clear()
    gen.queue.length = 0
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
  }
}
