/**
 * Raised when a model (embedder, reranker or chat LLM) cannot be loaded: the folder or file is
 * missing, a required file is absent, or the runtime rejected the file (truncated or corrupt).
 * The message names the path and what is wrong, so it can be shown to the user as is.
 */
export class ModelLoadError extends Error {
  override readonly name = 'ModelLoadError'
  /** The model folder (embedder/reranker) or .gguf file (LLM) that failed to load. */
  readonly modelPath: string
  /** Files that were expected but not found, relative to `modelPath` (empty when none). */
  readonly missing: readonly string[]

  constructor(modelPath: string, message: string, opts?: { missing?: readonly string[]; cause?: unknown }) {
    super(message, opts?.cause === undefined ? undefined : { cause: opts.cause })
    this.modelPath = modelPath
    this.missing = opts?.missing ?? []
  }
}

/** True when `err` is the error an aborted AbortSignal produces (DOMException or Error named AbortError). */
export function isAbortError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError'
}

export { errorMessage } from '../../../shared/errors'
