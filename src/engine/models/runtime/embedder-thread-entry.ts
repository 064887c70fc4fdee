import { parentPort, workerData } from 'node:worker_threads'
import type { Embedder } from '../../core/model-ports'
import { loadEmbedder, type EmbedderOptions } from './embedder'
import { errorMessage, isAbortError } from './errors'

/** Worker side of embedder-thread.ts (protocol described there). */
const port = parentPort!
const { dir, opts } = workerData as { dir: string; opts: EmbedderOptions }
const running = new Map<number, AbortController>()
let embedder: Embedder | null = null

port.on(
  'message',
  async (
    m: { type: 'embed'; id: number; texts: string[]; query: boolean } | { type: 'abort'; id: number } | { type: 'dispose' },
  ) => {
    if (m.type === 'abort') return running.get(m.id)?.abort()
    if (m.type === 'dispose') {
      await embedder?.dispose()
      return
    }
    if (!embedder) return port.postMessage({ type: 'error', id: m.id, message: 'embedder not loaded', abort: false })
    const controller = new AbortController()
    running.set(m.id, controller)
    try {
      const vectors = m.query
        ? [await embedder.embedQuery(m.texts[0] ?? '')]
        : await embedder.embedDocuments(m.texts, controller.signal)
      port.postMessage(
        { type: 'result', id: m.id, vectors },
        vectors.map((v) => v.buffer as ArrayBuffer),
      )
    } catch (err) {
      port.postMessage({ type: 'error', id: m.id, message: errorMessage(err), abort: isAbortError(err) })
    } finally {
      running.delete(m.id)
    }
  },
)

loadEmbedder(dir, opts).then(
  (e) => {
    embedder = e
    port.postMessage({ type: 'ready', id: e.id, dims: e.dims, maxTokens: e.maxTokens })
  },
  (err) => port.postMessage({ type: 'load-error', message: errorMessage(err) }),
)
