import type { DocentApi, InvokeInput, InvokeName, InvokeOutput } from '../../shared/api'

/** An engine call that answered `{ ok: false }`; the message is meant for people. */
export class DocentError extends Error {
  override readonly name = 'DocentError'
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

export function docent(): DocentApi {
  return window.docent
}

/** Invokes an engine method and unwraps its Result, so callers handle failures with try/catch once. */
export async function call<K extends InvokeName>(name: K, input: InvokeInput<K>): Promise<InvokeOutput<K>> {
  let res
  try {
    res = await docent().invoke(name, input)
  } catch (err) {
    // The bridge itself failed (preload missing, process gone): still a message, never a crash.
    throw new DocentError(err instanceof Error ? err.message : String(err), 'bridge')
  }
  if (!res.ok) throw new DocentError(res.error.message, res.error.code)
  return res.value
}

export { errorMessage } from '../../shared/errors'
