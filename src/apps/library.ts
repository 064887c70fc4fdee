import { existsSync } from 'node:fs'
import path from 'node:path'
import type { z } from 'zod'
import type { AskEvent, AskResult } from '../shared/answer'
import type {
  EventName,
  EventPayload,
  ImportProgress,
  ImportReport,
  InvokeInput,
  InvokeName,
  InvokeOutput,
  Result,
} from '../shared/api'
import type { Engine } from '../engine/engine'
import { EngineClient, type SpawnEngine } from '../engine/host/client'
import { folderSpawner, type LibraryProcess, type LibraryState } from '../engine/host/open-folder'
import { ErrorCode, Notify, type INTERNAL_METHODS, type InternalName } from '../engine/host/protocol'
import { isNotification } from '../engine/host/rpc'
import { defaultDataDir, defaultModelsDir } from '../engine/paths'
import { holdsLibrary } from '../engine/store/db'
import type { OwnerRole } from '../engine/store/lock'
import { redactUrl } from '../engine/store/pg'
import { serverSpawner } from '../engine/host/open-server'

/**
 * The CLI's and the MCP server's way into a data folder (or, with `database` or DOCENT_DATABASE_URL,
 * a PostgreSQL server, each process connecting itself: host/open-server.ts): the app's own typed client (EngineClient)
 * over the library (engine/host/open-folder.ts), which attaches to the process that owns the folder
 * or becomes its owner. Errors come back as LibraryError. Reads are sent again once when the owner
 * went away before answering; an import interrupted that way is run again (documents it finished
 * are skipped as unchanged), so a client never loses a write to another process's exit.
 */

export class LibraryError extends Error {
  override readonly name = 'LibraryError'
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

/** Methods that change nothing, so sending one again after the owner went away is harmless. */
const RETRY_SAFE = new Set<string>([
  'collections.list',
  'collections.failures',
  'search',
  'threads.list',
  'threads.get',
  'trace.get',
  'source.open',
  'models.status',
  'settings.get',
  'app.info',
  'source.path',
  'passage.get',
])
/** Runs of one import when owners keep going away under it. */
const IMPORT_ATTEMPTS = 3

type Listener = (event: EventName, payload: unknown) => void
type InternalOutput<K extends InternalName> = z.output<(typeof INTERNAL_METHODS)[K]['output']>

export interface OpenLibraryOptions {
  data?: string | undefined
  /** A PostgreSQL server's URL instead of a data folder (a team library): `data` is then not used. */
  database?: string | undefined
  /** With `database`: never migrate or write on open (a read-only role). */
  readOnly?: boolean
  models?: string | undefined
  role: OwnerRole
  /** Called each time this process becomes the owner, with the open engine. */
  onOwn?: (engine: Engine) => void
  /** Another way to reach the engine (tests). */
  spawn?: SpawnEngine
  log?: (message: string) => void
}

export class Library {
  readonly dataDir: string
  readonly modelsDir: string
  private readonly client: EngineClient
  private readonly listeners = new Set<Listener>()
  private proc: LibraryProcess | null = null
  /** Bumped each time the connection to an owner (or this process's ownership) ends. */
  private generation = 0
  /** Whether the current connection got `ready`, and whether the last one to end had: only then is a request worth sending again. */
  private ready = false
  private lostAfterReady = false
  /** Set by close(): the connection ending then is ours, not news for the person. */
  private closing = false
  private lostWaiters: (() => void)[] = []

  constructor(opts: OpenLibraryOptions) {
    const database = opts.database ?? (process.env['DOCENT_DATABASE_URL'] || undefined)
    this.dataDir = database ? redactUrl(database) : path.resolve(opts.data ?? defaultDataDir())
    this.modelsDir = path.resolve(opts.models ?? defaultModelsDir())
    const log = opts.log ?? (() => {})
    const onOwn = opts.onOwn ? { onOwn: opts.onOwn } : {}
    const base =
      opts.spawn ??
      (database
        ? serverSpawner({ database, modelsDir: this.modelsDir, readOnly: opts.readOnly, ...onOwn, log }, (p) => (this.proc = p))
        : folderSpawner(
            { dataDir: this.dataDir, modelsDir: this.modelsDir, role: opts.role, ...onOwn, log },
            (p) => (this.proc = p),
          ))
    const spawn: SpawnEngine = (listeners) =>
      base({
        onMessage: (m) => {
          if (isNotification(m, Notify.ready)) this.ready = true
          listeners.onMessage(m)
        },
        onExit: (detail) => {
          if (this.ready && !this.closing) log(`${detail}; the next request opens the library again`)
          this.generation++
          this.lostAfterReady = this.ready
          this.ready = false
          for (const w of this.lostWaiters.splice(0)) w()
          listeners.onExit(detail)
        },
      })
    this.client = new EngineClient({
      spawn,
      onEvent: (event, payload) => {
        for (const l of [...this.listeners]) l(event, payload)
      },
      timeoutsMs: { default: 120_000 },
      // Its messages speak of an engine process; what a person needs to know is logged above.
      log: () => {},
    })
  }

  /** Owner, attached (to whom), or not connected yet. */
  get state(): LibraryState {
    return this.proc?.state ?? { kind: 'starting' }
  }

  /** Counts the owner connections that have ended so far. */
  get connection(): number {
    return this.generation
  }

  /** Resolves once connection number `connection` has ended (the owner closed or died, or this process stopped owning). */
  whenLost(connection: number): Promise<void> {
    if (this.generation !== connection) return Promise.resolve()
    return new Promise((resolve) => this.lostWaiters.push(resolve))
  }

  on(listener: Listener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async invoke<K extends InvokeName>(name: K, input: InvokeInput<K>): Promise<InvokeOutput<K>> {
    return this.unwrap(name, () => this.client.invoke(name, input))
  }

  async internal<K extends InternalName>(
    name: K,
    input: z.input<(typeof INTERNAL_METHODS)[K]['input']>,
  ): Promise<InternalOutput<K>> {
    return this.unwrap(name, () => this.client.invokeInternal(name, input))
  }

  private async unwrap<T>(name: string, call: () => Promise<Result<T>>): Promise<T> {
    let r = await call()
    if (!r.ok && r.error.code === ErrorCode.engineStopped && RETRY_SAFE.has(name) && this.lostAfterReady) r = await call()
    if (!r.ok) throw new LibraryError(r.error.message, r.error.code)
    return r.value
  }

  /**
   * Imports (or syncs) a folder and resolves with the report once its job has ended; progress as it
   * goes. `signal` cancels the job. Refusals reject with a LibraryError whose code says why
   * (`would_empty_collection`, `conflict`, ...).
   */
  async importFolder(
    input: InvokeInput<'collections.import'>,
    opts: { onProgress?: (p: ImportProgress) => void; signal?: AbortSignal } = {},
  ): Promise<ImportReport> {
    for (let attempt = 1; ; attempt++) {
      const generation = this.generation
      try {
        return await this.importOnce(input, opts)
      } catch (err) {
        // The owner went away under the import: the next owner finishes it.
        if (this.generation === generation || !this.lostAfterReady || attempt >= IMPORT_ATTEMPTS || opts.signal?.aborted)
          throw err
      }
    }
  }

  private importOnce(
    input: InvokeInput<'collections.import'>,
    opts: { onProgress?: (p: ImportProgress) => void; signal?: AbortSignal },
  ): Promise<ImportReport> {
    return this.follow<ImportReport>(
      () => this.invoke('collections.import', input).then((started) => started.jobId),
      'jobId',
      (jobId) => void this.client.invoke('jobs.cancel', { jobId }),
      (event, payload, settle) => {
        if (event === 'import.progress') {
          const { jobId: _id, ...progress } = payload as EventPayload<'import.progress'>
          opts.onProgress?.(progress)
        } else if (event === 'import.done') {
          const done = payload as EventPayload<'import.done'>
          if (done.report && !done.error) settle.resolve(done.report)
          else settle.reject(new LibraryError(done.error ?? 'The import failed.', done.code))
        }
      },
      opts.signal,
    )
  }

  /**
   * Starts a job or a question and follows its events until `onEvent` settles it; `signal` cancels
   * it. Events can arrive before the id does (they travel apart): they are kept until it is known.
   */
  private follow<T>(
    start: () => Promise<string>,
    idKey: 'jobId' | 'requestId',
    cancelById: (id: string) => void,
    onEvent: (event: EventName, payload: unknown, settle: { resolve: (v: T) => void; reject: (e: unknown) => void }) => void,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      let id: string | null = null
      const early: { event: EventName; payload: unknown }[] = []
      const cancel = (): void => {
        if (id) cancelById(id)
      }
      const stop = (): void => {
        off()
        signal?.removeEventListener('abort', cancel)
      }
      const settle = {
        resolve: (v: T) => (stop(), resolve(v)),
        reject: (e: unknown) => (stop(), reject(e)),
      }
      const handle = (event: EventName, payload: unknown): void => {
        if ((payload as Record<string, unknown>)[idKey] === id) onEvent(event, payload, settle)
      }
      const off = this.on((event, payload) => (id === null ? early.push({ event, payload }) : handle(event, payload)))
      signal?.addEventListener('abort', cancel, { once: true })
      start().then((started) => {
        id = started
        for (const e of early.splice(0)) handle(e.event, e.payload)
        if (signal?.aborted) cancel()
      }, settle.reject)
    })
  }

  /** Asks a question and resolves with the verified result; stages and draft tokens go to `onEvent`. */
  async ask(input: InvokeInput<'ask'>, opts: { onEvent?: (e: AskEvent) => void; signal?: AbortSignal } = {}): Promise<AskResult> {
    const generation = this.generation
    try {
      return await this.askOnce(input, opts)
    } catch (err) {
      if (this.generation === generation || !this.lostAfterReady || opts.signal?.aborted) throw err
      return this.askOnce(input, opts)
    }
  }

  private askOnce(
    input: InvokeInput<'ask'>,
    opts: { onEvent?: (e: AskEvent) => void; signal?: AbortSignal },
  ): Promise<AskResult> {
    let result: AskResult | null = null
    return this.follow<AskResult>(
      () => this.invoke('ask', input).then((started) => started.requestId),
      'requestId',
      (requestId) => void this.client.invoke('ask.cancel', { requestId }),
      (event, payload, settle) => {
        if (event === 'ask.event') {
          const e = (payload as EventPayload<'ask.event'>).event
          if (e.type === 'final') result = e.result
          opts.onEvent?.(e)
        } else if (event === 'ask.done') {
          const error = (payload as EventPayload<'ask.done'>).error
          if (result && !error) settle.resolve(result)
          else settle.reject(new LibraryError(error ?? 'The question was not answered.'))
        }
      },
      opts.signal,
    )
  }

  /**
   * Leaves the library. An owner first waits until no request or job an attached client started is
   * still running (nothing of theirs is lost), then closes the database and releases the folder.
   */
  async close(): Promise<void> {
    this.closing = true
    await this.client.dispose(24 * 3600_000)
  }
}

/**
 * For a command that only reads (search, ask, collections, watch; mcp without --allow-writes on a
 * --data folder): a data folder that holds no library is an error that names it, not a new empty
 * library answering "0 results" (a mistyped --data made a 39 MB one). `ingest` still creates one.
 * With `explicitOnly`, the app's own folder (no --data) may still be created: `docent mcp` is
 * started by an MCP client before anything was imported, and the app attaches to it later.
 * A library on a server (--database, DOCENT_DATABASE_URL) has no folder: nothing to check.
 */
export function requireLibraryFolder(
  values: { data?: string | undefined; database?: string | undefined },
  opts: { explicitOnly?: boolean } = {},
): void {
  if (values.database || process.env['DOCENT_DATABASE_URL']) return
  if (values.data === undefined && opts.explicitOnly) return
  const dir = path.resolve(values.data ?? defaultDataDir())
  if (holdsLibrary(dir)) return
  const what = values.data === undefined ? `the library folder ${dir}` : `the data folder ${dir} (--data)`
  const state = existsSync(dir) ? 'holds no Docent library' : 'does not exist'
  throw new LibraryError(
    `${what} ${state}: check the path${values.data === undefined ? ' (or DOCENT_HOME)' : ''}, or import a folder into it first: docent ingest <folder> --collection <name>${values.data === undefined ? '' : ` --data ${dir}`}`,
    'no_library',
  )
}

/** Runs `fn` on the library (attached to the folder's owner, or owning it) as a CLI command, then leaves it. */
export async function withLibrary<T>(
  values: { data?: string; database?: string; models?: string },
  fn: (lib: Library) => Promise<T>,
  opts: { mustExist?: boolean } = {},
): Promise<T> {
  // A command that reads must not make a library where there is none (requireLibraryFolder).
  if (opts.mustExist) requireLibraryFolder(values)
  const lib = new Library({
    data: values.data,
    database: values.database,
    models: values.models,
    role: 'cli',
    // Notes only (waiting for an owner, waiting for other clients' jobs before closing): stdout stays the command's.
    log: (m) => process.stderr.write(`docent: ${m}\n`),
  })
  try {
    return await fn(lib)
  } finally {
    await lib.close()
  }
}
