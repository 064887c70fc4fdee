import { z } from 'zod'
import type { Message } from 'vscode-jsonrpc/node'
import { PassageInDocument } from '../../shared/passage'

/**
 * The protocol between Electron main (the client, ./client.ts) and the engine host in its process
 * (src/apps/engine-host.ts): JSON-RPC 2.0, run by `vscode-jsonrpc` (./rpc.ts; ADR 0015). Messages
 * are structured-clone data over `utilityProcess` / `process.parentPort` in the app and over
 * `child_process.fork` IPC in tests, and `Content-Length`-framed JSON over the data folder's socket
 * between the folder's owner and the processes attached to it (./socket.ts, ./open-folder.ts), where a
 * client's `shutdown` means it is leaving.
 *
 *   main -> host
 *     request `<method>`, params = the input
 *         `method` is an InvokeMap name (src/shared/api.ts) or an internal method (INTERNAL_METHODS
 *         below: callable by main, never relayed from the renderer). The host validates the input
 *         with the contract's zod schema whatever the client did.
 *     notification `shutdown`
 *         Cancel running jobs, close the database, exit 0. The client kills the process if it has
 *         not exited after a grace period.
 *
 *   host -> main
 *     notification `ready` {pid}
 *         Sent once, after the engine has opened its database. The client holds requests until then.
 *     notification `fatal` {message}
 *         The engine could not start (database locked or corrupt, ...). The host exits right after;
 *         the client fails every pending request with `message`.
 *     the response to each request
 *         Its `result` is the method's output, validated against the contract by the host; a failure
 *         is a JSON-RPC error whose `data.code` is one of ErrorCode (below). The client turns both into
 *         a Result (`{ok: true, value}` or `{ok: false, error: {message, code?}}`): errors cross the
 *         boundary as data, never as exceptions, so a failing handler cannot take the host down.
 *     notification `<event>`, params = the payload
 *         A pushed EventMap event, validated against its schema by the host before sending.
 *
 * Long jobs (imports, model downloads) answer their request at once with a jobId and then report
 * through events: `import.progress`* then exactly one `import.done`; `models.progress`* then exactly
 * one `models.done`. If the host process dies, the CLIENT emits the missing final events itself
 * (with an error) and fails pending requests, so the renderer never waits on a dead process
 * (AnythingLLM's worker manager does the same). The next request starts a new host.
 */

/** The protocol's own notifications; every other notification is an EventMap event. */
export const Notify = {
  ready: 'ready',
  fatal: 'fatal',
  shutdown: 'shutdown',
  /** The first message on the owner's socket (socket.ts), before anything else is read. */
  hello: 'hello',
} as const

export const ReadyParams = z.object({ pid: z.number() })
export const FatalParams = z.object({ message: z.string() })

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
      .object({ passage: PassageInDocument, previous: z.array(PassageInDocument), next: z.array(PassageInDocument) })
      .nullable(),
  },
} as const
export type InternalName = keyof typeof INTERNAL_METHODS

export function isInternalName(name: unknown): name is InternalName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(INTERNAL_METHODS, name)
}

const RequestId = z.union([z.number().int().nonnegative(), z.string().min(1).max(200)])
const Method = z.string().min(1).max(200)
const RequestSchema = z.object({ jsonrpc: z.literal('2.0'), id: RequestId, method: Method, params: z.unknown().optional() })
const NotificationSchema = z.object({ jsonrpc: z.literal('2.0'), method: Method, params: z.unknown().optional() })
const ResponseSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: RequestId.nullable(),
    result: z.unknown().optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown() }).optional(),
  })
  .refine((m) => (m.result === undefined) !== (m.error === undefined), 'a response has a result or an error')

/**
 * Messages are checked on arrival at every end, before the JSON-RPC connection sees them; anything
 * that is not a JSON-RPC request, notification or response is dropped (and logged by the caller).
 */
export function parseMessage(raw: unknown): Message | null {
  if (raw === null || typeof raw !== 'object') return null
  const schema = 'method' in raw ? ('id' in raw ? RequestSchema : NotificationSchema) : ResponseSchema
  const r = schema.safeParse(raw)
  return r.success ? (r.data as Message) : null
}

/** A request's or notification's params as the one input they carry (vscode-jsonrpc sends a non-object input as `[input]`). */
export function inputOf(params: unknown): unknown {
  return Array.isArray(params) ? params[0] : params
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

/** JSON-RPC's own codes where one fits, else its implementation-defined server error; ErrorCode goes in `data.code`. */
export function jsonRpcErrorCode(code: string | undefined): number {
  if (code === ErrorCode.unknownMethod) return -32601
  if (code === ErrorCode.invalidInput) return -32602
  if (code === ErrorCode.invalidOutput) return -32603
  return -32000
}

export const ErrorData = z.object({ code: z.string().max(100).optional() }).nullish()
