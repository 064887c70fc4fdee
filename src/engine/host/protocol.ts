import { z } from 'zod'
import type { Result } from '../../shared/api'

/**
 * Message protocol between Electron main (the client, ./client.ts) and the engine
 * host running in a utility process (src/apps/engine-host.ts). Plain structured-clone data over
 * `utilityProcess` / `process.parentPort` in the app, over `child_process.fork` IPC in tests, and
 * as JSON frames over the data folder's socket between the folder's owner and the processes
 * attached to it (./socket.ts, ./library.ts), where a client's `shutdown` means it is leaving.
 *
 *   main -> host
 *     { type: 'request', id, method, input }
 *         `id` is a positive integer chosen by the client, unique per host process. `method` is an
 *         InvokeMap name (src/shared/api.ts) or an internal method (INTERNAL_METHODS below: callable
 *         by main, never relayed from the renderer). `input` is the raw input; the host validates
 *         it with the contract's zod schema whatever the client did.
 *     { type: 'shutdown' }
 *         Cancel running jobs, close the database, exit 0. The client kills the process if it has
 *         not exited after a grace period.
 *
 *   host -> main
 *     { type: 'ready', pid }
 *         Sent once, after the engine has opened its database. The client queues requests until then.
 *     { type: 'fatal', message }
 *         The engine could not start (database locked or corrupt, ...). The host exits right after;
 *         the client fails every pending request with `message`.
 *     { type: 'response', id, result }
 *         Exactly one per request. `result` is a Result (`{ok: true, value}` or
 *         `{ok: false, error: {message, code?}}`): errors cross the boundary serialized as data,
 *         never as exceptions, so a failing handler cannot take the host down.
 *     { type: 'event', event, payload }
 *         A pushed EventMap event, validated against its schema by the host before sending.
 *
 * Long jobs (imports, model downloads) answer their request at once with a jobId and then report
 * through events: `import.progress`* then exactly one `import.done`; `models.progress`* then exactly
 * one `models.done`. If the host process dies, the CLIENT emits the missing final events itself
 * (with an error) and fails pending requests, so the renderer never waits on a dead process
 * (AnythingLLM's worker manager does the same). The next request starts a new host.
 */

const ChunkInContext = z.object({
  chunk_id: z.string(),
  collection: z.string(),
  root: z.string(),
  path: z.string(),
  heading: z.string(),
  version: z.string().nullable(),
  page_start: z.number().int().nullable(),
  page_end: z.number().int().nullable(),
  text: z.string(),
  kind: z.string().nullable(),
  position: z.number().int().nullable(),
})

/**
 * Methods for the app's main process and for the processes that attach to an owner over its
 * socket (the CLI, the MCP server: host/socket.ts), never relayed from the renderer.
 */
export const INTERNAL_METHODS = {
  /** Absolute path of the document that holds an indexed chunk, for "open in the system app". */
  'source.path': { input: z.object({ chunkId: z.string().min(1).max(200) }), output: z.object({ path: z.string() }) },
  /** A passage with up to `around` chunks before and after it in its document (MCP get_passage); null when not indexed. */
  'passage.get': {
    input: z.object({ chunkId: z.string().min(1).max(200), around: z.number().int().min(0).max(5).default(1) }),
    output: z
      .object({ passage: ChunkInContext, previous: z.array(ChunkInContext), next: z.array(ChunkInContext) })
      .nullable(),
  },
} as const
export type InternalName = keyof typeof INTERNAL_METHODS

export function isInternalName(name: unknown): name is InternalName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(INTERNAL_METHODS, name)
}

export type ToHost = { type: 'request'; id: number; method: string; input: unknown } | { type: 'shutdown' }

export type FromHost =
  | { type: 'ready'; pid: number }
  | { type: 'fatal'; message: string }
  | { type: 'response'; id: number; result: Result<unknown> }
  | { type: 'event'; event: string; payload: unknown }

const ErrorShape = z.object({ message: z.string(), code: z.string().optional() })

const ToHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('request'), id: z.number().int().positive(), method: z.string(), input: z.unknown() }),
  z.object({ type: z.literal('shutdown') }),
])

const FromHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), pid: z.number() }),
  z.object({ type: z.literal('fatal'), message: z.string() }),
  z.object({
    type: z.literal('response'),
    id: z.number().int().positive(),
    result: z.union([
      z.object({ ok: z.literal(true), value: z.unknown() }),
      z.object({ ok: z.literal(false), error: ErrorShape }),
    ]),
  }),
  z.object({ type: z.literal('event'), event: z.string(), payload: z.unknown() }),
])

/** Messages are checked on arrival at both ends; anything else is dropped (and logged by the caller). */
export function parseToHost(raw: unknown): ToHost | null {
  const r = ToHostSchema.safeParse(raw)
  return r.success ? (r.data as ToHost) : null
}

export function parseFromHost(raw: unknown): FromHost | null {
  const r = FromHostSchema.safeParse(raw)
  return r.success ? (r.data as FromHost) : null
}

/** Error codes carried in `Result.error.code`. */
export const ErrorCode = {
  unknownMethod: 'unknown_method',
  invalidInput: 'invalid_input',
  invalidOutput: 'invalid_output',
  notAvailable: 'not_available',
  notFound: 'not_found',
  forbidden: 'forbidden',
  busy: 'busy',
  conflict: 'conflict',
  failed: 'failed',
  engineStopped: 'engine_stopped',
  timeout: 'timeout',
} as const

export function errorResult(message: string, code?: string): { ok: false; error: { message: string; code?: string } } {
  return { ok: false, error: code === undefined ? { message } : { message, code } }
}
