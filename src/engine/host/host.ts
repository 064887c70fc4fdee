import type { z } from 'zod'
import { InvokeMap, isInvokeName, type Result } from '../../shared/api'
import { errorMessage } from '../../shared/errors'
import type { Engine } from '../engine'
import { ModelManager } from '../models/install'
import type { HostDeps } from './context'
import { createHandlers, internalHandlers, type Handlers } from './handlers'
import { ImportJobs } from './imports'
import { JobRegistry } from './jobs'
import { ModelUse } from './model-use'
import { INTERNAL_METHODS, ErrorCode, errorResult, isInternalName } from './protocol'
import { SourceError } from './source'
import { resumeAndWatch } from './startup'
import { HostError, validatedEmit, type Emit, type HandlerContext } from './types'

/**
 * The engine host: the contract's handler maps (handlers/) over one Engine, and `dispatch`, the one
 * entry point that validates names, inputs and outputs with the contract's zod schemas and answers
 * a Result. Nothing here imports Electron: the same host serves the utility process in the app and
 * the browser e2e harness in tests.
 */

export type { Emit, HandlerContext, HandlerInput } from './types'
export type { Handlers } from './handlers'
export { HostError } from './types'

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

export interface EngineHost {
  readonly handlers: Handlers
  /** Validates, calls, validates the answer. Never throws. */
  dispatch(name: unknown, rawInput: unknown): Promise<Result<unknown>>
  /** Ids of jobs still running (for tests and shutdown). */
  runningJobs(): string[]
  /** Jobs and questions still running: an owner closes the library only when none of them are. */
  activeWork(): number
  /**
   * Keeps every collection in step with its folder from now on, as the app does (`watchFolders`):
   * an owner started without it calls this when the app's engine process attaches to it.
   */
  watchFolders(): void
  /** Cancels every job and waits (bounded) for their final events. */
  shutdown(timeoutMs?: number): Promise<void>
}

export function createEngineHost(engine: Engine, opts: HostOptions): EngineHost {
  const emit = validatedEmit(opts.emit)
  const jobs = new JobRegistry()
  const modelUse = new ModelUse(engine)
  const deps: HostDeps = {
    engine,
    emit,
    jobs,
    modelUse,
    imports: new ImportJobs(engine, jobs, modelUse, emit, opts.watchFolders ?? false),
    models: opts.models ?? new ModelManager(engine.modelsDir),
    asks: new Map(),
    info: { dataDir: opts.dataDir, modelsDir: opts.modelsDir, appVersion: opts.appVersion },
  }
  const handlers = createHandlers(deps)
  const internal = internalHandlers(deps)

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

  let watching = false
  const watchFolders = (): void => {
    if (watching) return
    watching = true
    deps.imports.followFolders()
    void resumeAndWatch(engine, deps.imports, emit)
  }
  if (opts.watchFolders) watchFolders()

  return {
    handlers,
    dispatch,
    runningJobs: () => jobs.ids(),
    activeWork: () => jobs.ids().length + deps.asks.size,
    watchFolders,
    async shutdown(timeoutMs = 10_000) {
      const pending = jobs.all()
      for (const j of pending) j.controller.abort()
      for (const a of deps.asks.values()) a.abort()
      await Promise.race([
        Promise.allSettled(pending.map((j) => j.finished)),
        new Promise((r) => setTimeout(r, timeoutMs).unref()),
      ])
      deps.models.cancel()
    },
  }
}
