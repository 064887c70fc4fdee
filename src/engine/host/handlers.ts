import { randomUUID } from 'node:crypto'
import { stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { z } from 'zod'
import {
  EventMap,
  InvokeMap,
  Settings,
  isInvokeName,
  type EventName,
  type EventPayload,
  type ImportReport,
  type InvokeName,
  type InvokeOutput,
  type Result,
} from '../../shared/api'
import type { Engine } from '../engine'
import { collectionSlug } from '../store/ids'
import { activeModelPath } from '../paths'
import { ModelManager, type ModelStatus as ManagerModelStatus } from '../models/install'
import { INTERNAL_METHODS, ErrorCode, errorMessage, errorResult, isInternalName, type InternalName } from './protocol'
import { SourceError, indexedDocumentPath, openSource } from './source'

/**
 * The engine host: every InvokeMap method implemented on an Engine, in one typed handler map
 * (Actual Budget's shape), and `dispatch`, the one entry point that validates names, inputs and
 * outputs with the contract's zod schemas and answers a Result. Nothing here imports Electron: the
 * same host serves the utility process in the app and the browser e2e harness in tests.
 */

export type HandlerInput<K extends InvokeName> = z.output<(typeof InvokeMap)[K]['input']>
export type Emit = <E extends EventName>(event: E, payload: EventPayload<E>) => void

export interface HandlerContext {
  emit: Emit
}

export type Handlers = { [K in InvokeName]: (input: HandlerInput<K>, ctx: HandlerContext) => Promise<InvokeOutput<K>> }
type InternalHandlers = {
  [K in InternalName]: (
    input: z.output<(typeof INTERNAL_METHODS)[K]['input']>,
  ) => Promise<z.output<(typeof INTERNAL_METHODS)[K]['output']>>
}

export interface HostOptions {
  /** Receives every pushed event (validated against EventMap). */
  emit: Emit
  dataDir: string
  modelsDir: string
  appVersion?: string
  /** Model manager (downloads, imports, active model); one over engine.modelsDir by default. */
  models?: ModelManager
  /**
   * The app's behaviour: keep every collection in step with its folder (watch/), and resume
   * imports a crash or quit interrupted. Off in tests that drive imports themselves.
   */
  watchFolders?: boolean
}

/** A failure a person can act on, with a Result error code. */
export class HostError extends Error {
  override readonly name = 'HostError'
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

interface Job {
  id: string
  kind: 'import' | 'models'
  /** The collection (imports) or model role (downloads) it works on: one job per key at a time. */
  key: string
  /** The folder an import reads. */
  root?: string
  controller: AbortController
  finished: Promise<void>
}

export interface EngineHost {
  readonly handlers: Handlers
  /** Validates, calls, validates the answer. Never throws. */
  dispatch(name: unknown, rawInput: unknown): Promise<Result<unknown>>
  /** Ids of jobs still running (for tests and shutdown). */
  runningJobs(): string[]
  /** Cancels every job and waits (bounded) for their final events. */
  shutdown(timeoutMs?: number): Promise<void>
}

function emptyReport(collection: string, root: string, notice: string): ImportReport {
  return {
    collection,
    root,
    files_seen: 0,
    imported: 0,
    unchanged: 0,
    skipped: 0,
    failed: [],
    skipped_files: [],
    pruned: 0,
    chunks_total: 0,
    chunks_written: 0,
    texts_embedded: 0,
    cancelled: true,
    notices: [notice],
    ms: 0,
    timings: { walk: 0, read: 0, parse: 0, chunk: 0, embed: 0, write: 0 },
  }
}

function hardwareSummary(): string {
  const cpus = os.cpus()
  const model = cpus[0]?.model.trim() ?? 'unknown CPU'
  const gb = (os.totalmem() / 1024 ** 3).toFixed(1)
  return `${cpus.length} × ${model}, ${gb} GB RAM, ${process.platform}/${process.arch}`
}

export function createEngineHost(engine: Engine, opts: HostOptions): EngineHost {
  const jobs = new Map<string, Job>()
  const asks = new Map<string, AbortController>()

  // Models change under a running engine (download, import, new active model). Loaded ones are
  // swapped only when nothing is using them: imports, questions and searches in flight.
  type Role = 'embedding' | 'reranker' | 'llm'
  const staleModels = new Set<Role>()
  let modelUsers = 0
  const reloadIfIdle = async (): Promise<void> => {
    if (modelUsers > 0 || staleModels.size === 0) return
    const roles = [...staleModels]
    staleModels.clear()
    await engine.reloadModels(roles)
  }
  const modelsChanged = (role: Role): Promise<void> => {
    staleModels.add(role)
    return reloadIfIdle()
  }
  async function usingModels<T>(fn: () => Promise<T>): Promise<T> {
    modelUsers++
    try {
      return await fn()
    } finally {
      modelUsers--
      await reloadIfIdle().catch((err: unknown) => console.error(`[engine-host] model reload: ${errorMessage(err)}`))
    }
  }
  const models = opts.models ?? new ModelManager(engine.modelsDir)
  // One import at a time: they share the CPU and the embedding model, and PGlite has one connection.
  let importQueue: Promise<void> = Promise.resolve()

  const emit: Emit = (event, payload) => {
    const parsed = EventMap[event].safeParse(payload)
    if (!parsed.success) {
      console.error(`[engine-host] dropped malformed ${event} event: ${parsed.error.message}`)
      return
    }
    opts.emit(event, parsed.data as EventPayload<typeof event>)
  }

  function claim(kind: Job['kind'], key: string): Job {
    for (const j of jobs.values()) {
      if (j.kind === kind && j.key === key) {
        throw new HostError(
          kind === 'import' ? `"${key}" is already being imported.` : `A ${key} model is already being downloaded.`,
          ErrorCode.busy,
        )
      }
    }
    const job: Job = {
      id: `${kind === 'import' ? 'imp' : 'mdl'}_${randomUUID()}`,
      kind,
      key,
      controller: new AbortController(),
      finished: Promise.resolve(),
    }
    jobs.set(job.id, job)
    return job
  }

  function startImport(folder: string, collection: string, kinds: Record<string, string> | undefined): { jobId: string } {
    const job = claim('import', collection)
    job.root = folder
    const { signal } = job.controller
    const run = async (): Promise<void> => {
      let report: ImportReport | null = null
      let error: string | null = null
      try {
        report = signal.aborted
          ? emptyReport(collection, folder, 'Import cancelled before it started.')
          : await usingModels(() =>
              engine.ingest(folder, {
                collection,
                signal,
                onProgress: (p) => emit('import.progress', { ...p, jobId: job.id }),
                ...(kinds ? { kinds } : {}),
              }),
            )
      } catch (err) {
        error = errorMessage(err)
      } finally {
        jobs.delete(job.id)
        // The final event, whatever happened above: the renderer waits for exactly this.
        emit('import.done', { jobId: job.id, report, error })
        if (report && !(report.cancelled && report.imported === 0)) emit('collections.changed', { collection })
        if (report && !report.cancelled) void follow(collection)
      }
    }
    job.finished = importQueue = importQueue.then(run)
    return { jobId: job.id }
  }

  /** Watches a collection's folder so edits, additions and deletions reach the index by themselves. */
  async function follow(collection: string): Promise<void> {
    if (!opts.watchFolders) return
    try {
      await engine.watch(collection, {
        catchUp: false,
        onEvent: (e) => {
          if (e.type === 'sync-finished' && e.added + e.changed + e.removed > 0) emit('collections.changed', { collection })
          if (e.type === 'sync-failed' || e.type === 'watch-error')
            console.error(`[engine-host] watching ${collection}: ${e.error}`)
        },
      })
    } catch (err) {
      // A folder on a drive that is not connected: the collection stays searchable, unwatched.
      console.error(`[engine-host] cannot watch ${collection}: ${errorMessage(err)}`)
    }
  }

  async function modelStatus(): Promise<z.output<(typeof InvokeMap)['models.status']['output']>> {
    const statuses: ManagerModelStatus[] = await models.status()
    return statuses.map((s) => {
      // What the engine will actually load: the chosen model when it is on disk, else the first installed one.
      const effectivePath = activeModelPath(models.modelsDir, s.role)
      const name = s.installed ? s.active : effectivePath ? path.basename(effectivePath) : null
      const model = name === null ? null : (s.models.find((m) => m.name === name) ?? null)
      const problem =
        name !== null
          ? null
          : s.active
            ? `${s.active} is selected but not on disk; download or import it again.`
            : `No ${s.role} model is installed.`
      return {
        role: s.role,
        installed: name !== null,
        active: name,
        name,
        sizeBytes: model?.totalBytes ?? null,
        source: model?.source ?? null,
        problem,
      }
    })
  }

  async function readSettings(): Promise<Settings> {
    const { rows } = await engine.db.query<{ value: unknown }>(`SELECT value FROM settings WHERE key = 'app'`)
    const stored = rows[0]?.value
    const record: Record<string, unknown> = stored && typeof stored === 'object' ? { ...stored } : {}
    // Field by field, so one bad stored value falls back to its default without losing the others.
    const out: Record<string, unknown> = {}
    for (const [key, schema] of Object.entries(Settings.shape)) {
      const r = schema.safeParse(record[key])
      out[key] = r.success ? r.data : schema.parse(undefined)
    }
    return Settings.parse(out)
  }

  const handlers: Handlers = {
    'collections.list': async () => engine.collections(),

    'collections.import': async ({ folder, collection }) => {
      if (!path.isAbsolute(folder)) throw new HostError('The folder must be an absolute path.', ErrorCode.invalidInput)
      const root = path.resolve(folder)
      const st = await stat(root).catch(() => null)
      if (!st?.isDirectory()) throw new HostError(`${root} is not a folder that can be read.`, ErrorCode.notFound)
      let base: string
      try {
        base = collectionSlug(collection ?? path.basename(root))
      } catch (err) {
        throw new HostError(errorMessage(err), ErrorCode.invalidInput)
      }
      // Importing a folder into a collection that came from another folder would replace (prune)
      // its documents. A chosen name must be free or the same folder; a derived one gets a suffix.
      let id = base
      for (let n = 2; ; n++) {
        const existing = await engine.collectionRoot(id)
        // A queued import has not written its collection row yet: it holds the name too.
        const holder = existing?.root ?? [...jobs.values()].find((j) => j.kind === 'import' && j.key === id)?.root
        if (holder === undefined || path.resolve(holder) === root) return startImport(root, id, existing?.kinds)
        if (collection !== undefined) {
          throw new HostError(
            `The collection "${id}" already holds ${holder}; choose another name or remove it first.`,
            ErrorCode.conflict,
          )
        }
        id = `${base.slice(0, 60)}-${n}`
      }
    },

    'collections.resync': async ({ collection }) => {
      const existing = await engine.collectionRoot(collection)
      if (!existing) throw new HostError(`There is no collection "${collection}".`, ErrorCode.notFound)
      return startImport(existing.root, collection, existing.kinds)
    },

    'collections.remove': async ({ collection }) => {
      // A running import of this collection would write rows back: stop it and wait for its end first.
      for (const j of [...jobs.values()]) {
        if (j.kind === 'import' && j.key === collection) {
          j.controller.abort()
          await j.finished
        }
      }
      const removed = await engine.removeCollection(collection)
      if (removed) emit('collections.changed', { collection })
      return { removed }
    },

    'collections.failures': async ({ collection }) => engine.failedDocuments(collection),

    'jobs.cancel': async ({ jobId }) => {
      const job = jobs.get(jobId)
      if (!job) return { cancelled: false }
      job.controller.abort()
      return { cancelled: true }
    },

    search: async ({ query, scope, mode, rerank, k }) => usingModels(() => engine.search(query, { scope, mode, rerank, k })),

    ask: async ({ question, threadId, scope, searchOnly }) => {
      const requestId = `ask_${randomUUID()}`
      const controller = new AbortController()
      asks.set(requestId, controller)
      const { signal } = controller
      // Answers stream as ask.event (stages, draft tokens, the verified final result); ask.done closes every request.
      void (async () => {
        let error: string | null = null
        try {
          await usingModels(() =>
            engine.ask(
              { question, scope, ...(threadId ? { threadId } : {}), ...(searchOnly !== undefined ? { searchOnly } : {}) },
              { signal, onEvent: (event) => emit('ask.event', { requestId, event }) },
            ),
          )
        } catch (err) {
          error = signal.aborted ? 'The question was cancelled.' : errorMessage(err)
        } finally {
          asks.delete(requestId)
          emit('ask.done', { requestId, error })
        }
      })()
      return { requestId }
    },
    'ask.cancel': async ({ requestId }) => {
      const controller = asks.get(requestId)
      if (!controller) return { cancelled: false }
      controller.abort()
      return { cancelled: true }
    },
    'threads.list': async () => engine.threads(),
    'threads.get': async ({ threadId }) => {
      const thread = await engine.thread(threadId)
      if (!thread) throw new HostError('There is no conversation with that id (it may have been deleted).', ErrorCode.notFound)
      return thread
    },
    'threads.delete': async ({ threadId }) => ({ deleted: await engine.deleteThread(threadId) }),
    'trace.get': async ({ traceId }) => {
      const trace = await engine.trace(traceId)
      if (!trace) throw new HostError('There is no trace with that id (it may have been removed).', ErrorCode.notFound)
      return trace
    },

    'source.open': async ({ chunkId }) => openSource(engine, chunkId),

    'models.status': async () => modelStatus(),

    'models.download': async ({ role }) => {
      const job = claim('models', role)
      const { signal } = job.controller
      job.finished = (async () => {
        let error: string | null = null
        try {
          await models.download(role, {
            signal,
            onProgress: (p) =>
              emit('models.progress', {
                jobId: job.id,
                role,
                file: p.file,
                bytesDone: p.overallBytesDone,
                bytesTotal: p.overallBytesTotal,
                bytesPerSecond: p.bytesPerSecond,
                etaSeconds: p.etaSeconds,
              }),
          })
          await modelsChanged(role)
        } catch (err) {
          error = signal.aborted ? 'Download cancelled; it resumes where it stopped next time.' : errorMessage(err)
        } finally {
          jobs.delete(job.id)
          emit('models.done', { jobId: job.id, role, error })
        }
      })()
      return { jobId: job.id }
    },

    'models.import': async ({ path: source, role }) => {
      if (!path.isAbsolute(source)) throw new HostError('The model path must be absolute.', ErrorCode.invalidInput)
      const installed = await models.importFromDisk(source, role)
      const before = (await models.status()).find((s) => s.role === installed.role)
      // The first model of a role becomes the active one; otherwise the person chooses.
      if (!before?.installed) await models.setActive(installed.role, installed.name)
      await modelsChanged(installed.role)
      const after = (await modelStatus()).find((s) => s.role === installed.role)
      if (!after) throw new HostError(`No status for ${installed.role}.`, ErrorCode.failed)
      return after
    },

    'models.setActive': async ({ role, name }) => {
      await models.setActive(role, name)
      await modelsChanged(role)
      return modelStatus()
    },

    'settings.get': async () => readSettings(),

    'settings.set': async (patch) => {
      const current = await readSettings()
      const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))
      const next = Settings.parse({ ...current, ...changes })
      await engine.db.query(
        `INSERT INTO settings (key, value) VALUES ('app', $1::jsonb) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [JSON.stringify(next)],
      )
      return next
    },

    'app.info': async () => ({
      version: opts.appVersion ?? '0.0.0',
      dataDir: opts.dataDir,
      modelsDir: opts.modelsDir,
      hardware: hardwareSummary(),
    }),
  }

  const internal: InternalHandlers = {
    'source.path': async ({ chunkId }) => ({ path: await indexedDocumentPath(engine, chunkId) }),
  }

  async function dispatch(name: unknown, rawInput: unknown): Promise<Result<unknown>> {
    let spec: { input: z.ZodType; output: z.ZodType }
    // The handler maps are keyed by the same names as the schemas; TypeScript cannot correlate a
    // runtime name with both, so the call goes through this one erased signature.
    let call: (input: unknown) => Promise<unknown>
    if (isInvokeName(name)) {
      spec = InvokeMap[name]
      const handler = handlers[name] as (input: unknown, ctx: HandlerContext) => Promise<unknown>
      call = (input) => handler(input, { emit })
    } else if (isInternalName(name)) {
      spec = INTERNAL_METHODS[name]
      call = internal[name] as (input: unknown) => Promise<unknown>
    } else {
      return errorResult(
        `Unknown method "${typeof name === 'string' ? name.slice(0, 100) : typeof name}".`,
        ErrorCode.unknownMethod,
      )
    }
    const input = spec.input.safeParse(rawInput ?? {})
    if (!input.success) return errorResult(`Invalid input for ${name}: ${input.error.message}`, ErrorCode.invalidInput)
    let value: unknown
    try {
      value = await call(input.data)
    } catch (err) {
      if (err instanceof HostError || err instanceof SourceError) return errorResult(err.message, err.code)
      return errorResult(errorMessage(err), ErrorCode.failed)
    }
    // Strips what the contract does not promise (the retrieval trace, internal fields) and catches drift.
    const output = spec.output.safeParse(value)
    if (!output.success) {
      console.error(`[engine-host] ${name} answered outside the contract: ${output.error.message}`)
      return errorResult(`${name} returned data outside the contract.`, ErrorCode.invalidOutput)
    }
    return { ok: true, value: output.data }
  }

  if (opts.watchFolders) {
    // On start: finish imports a crash or quit interrupted (each resumes where it stopped), then
    // watch every collection; a catch-up sync picks up what changed while the app was closed.
    void (async () => {
      try {
        const unfinished = await engine.unfinishedImports()
        const resumed = new Set<string>()
        for (const u of unfinished) {
          // Only what a crash or quit interrupted: an import the person cancelled stays cancelled.
          if (u.state !== 'interrupted' || resumed.has(u.collection)) continue
          resumed.add(u.collection)
          startImport(u.root, u.collection, undefined)
        }
        for (const c of await engine.collections()) {
          if (resumed.has(c.id)) continue
          await engine
            .watch(c.id, {
              onEvent: (e) => {
                if (e.type === 'sync-finished' && e.added + e.changed + e.removed > 0)
                  emit('collections.changed', { collection: c.id })
              },
            })
            .catch((err: unknown) => console.error(`[engine-host] cannot watch ${c.id}: ${errorMessage(err)}`))
        }
      } catch (err) {
        console.error(`[engine-host] start-up sync: ${errorMessage(err)}`)
      }
    })()
  }

  return {
    handlers,
    dispatch,
    runningJobs: () => [...jobs.keys()],
    async shutdown(timeoutMs = 10_000) {
      const pending = [...jobs.values()]
      for (const j of pending) j.controller.abort()
      for (const a of asks.values()) a.abort()
      await Promise.race([
        Promise.allSettled(pending.map((j) => j.finished)),
        new Promise((r) => setTimeout(r, timeoutMs).unref()),
      ])
      models.cancel()
    },
  }
}
