import { z } from 'zod'
import { InvokeMap, isInvokeName, type Result } from '../shared/api'
import { ErrorCode, errorResult, type InternalName } from '../engine/host/protocol'

export { IPC_CHANNELS } from '../shared/channels'

/**
 * The IPC relay's logic, free of Electron so it can be tested: the sender check, then the
 * contract's name and input validation, before anything is forwarded to the engine process. Garbage
 * from a compromised renderer is answered here and never reaches the engine (which validates again).
 */

export interface EngineRequester {
  request(method: string, input: unknown): Promise<Result<unknown>>
}

export interface RelayDeps {
  engine: EngineRequester
  /** The URL of the frame that sent the message; see security.ts isAppRendererUrl. */
  isTrustedSender: (frameUrl: string | null | undefined) => boolean
}

const FORBIDDEN = 'This window may not call Docent.'

export function createInvokeRelay(
  deps: RelayDeps,
): (frameUrl: string | null | undefined, name: unknown, input: unknown) => Promise<Result<unknown>> {
  return async (frameUrl, name, input) => {
    if (!deps.isTrustedSender(frameUrl)) return errorResult(FORBIDDEN, ErrorCode.forbidden)
    if (!isInvokeName(name)) {
      return errorResult(
        `Unknown method "${typeof name === 'string' ? name.slice(0, 100) : typeof name}".`,
        ErrorCode.unknownMethod,
      )
    }
    const parsed = InvokeMap[name].input.safeParse(input ?? {})
    if (!parsed.success) return errorResult(`Invalid input for ${name}: ${parsed.error.message}`, ErrorCode.invalidInput)
    return deps.engine.request(name, parsed.data)
  }
}

const ChunkId = z.string().min(1).max(200)
const DOCUMENT_PATH: InternalName = 'source.path'

/**
 * "Open in the system app": the engine returns a path only for a chunk in the index whose file is
 * inside its collection folder; only then is it handed to the OS.
 */
export function createOpenExternalRelay(
  deps: RelayDeps & { openPath: (path: string) => Promise<string> },
): (frameUrl: string | null | undefined, chunkId: unknown) => Promise<Result<null>> {
  return async (frameUrl, chunkId) => {
    if (!deps.isTrustedSender(frameUrl)) return errorResult(FORBIDDEN, ErrorCode.forbidden)
    const id = ChunkId.safeParse(chunkId)
    if (!id.success) return errorResult('Invalid chunk id.', ErrorCode.invalidInput)
    const res = await deps.engine.request(DOCUMENT_PATH, { chunkId: id.data })
    if (!res.ok) return res
    const value = res.value
    const docPath = value && typeof value === 'object' && 'path' in value && typeof value.path === 'string' ? value.path : null
    if (!docPath) return errorResult('The engine did not return a document path.', ErrorCode.failed)
    // shell.openPath answers '' on success, else an error message.
    const problem = await deps.openPath(docPath)
    return problem ? errorResult(`Could not open ${docPath}: ${problem}`, ErrorCode.failed) : { ok: true, value: null }
  }
}
