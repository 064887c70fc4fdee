import type { z } from 'zod'
import type { HostDeps } from '../context'
import type { INTERNAL_METHODS, InternalName } from '../protocol'
import { indexedDocumentPath, openSource } from '../source'
import type { HandlerMap } from '../types'

export type SourceHandlers = HandlerMap<'source.open'>

/** Methods main and attached clients may call but the renderer may not (protocol.ts INTERNAL_METHODS). */
export type InternalHandlers = {
  [K in InternalName]: (
    input: z.output<(typeof INTERNAL_METHODS)[K]['input']>,
  ) => Promise<z.output<(typeof INTERNAL_METHODS)[K]['output']>>
}

export function sourceHandlers({ engine }: HostDeps): SourceHandlers {
  return {
    'source.open': async ({ chunkId }) => openSource(engine, chunkId),
  }
}

export function internalHandlers({ engine }: HostDeps): InternalHandlers {
  return {
    'source.path': async ({ chunkId }) => ({ path: await indexedDocumentPath(engine, chunkId) }),
    'passage.get': async ({ chunkId, around }) => engine.passages.inContext(chunkId, around),
  }
}
