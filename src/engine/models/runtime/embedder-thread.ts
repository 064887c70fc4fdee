import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { AutoTokenizer } from '@huggingface/transformers'
import type { Embedder } from '../../core/model-ports'
import type { EmbedderOptions } from './embedder'
import { errorMessage, ModelLoadError } from './errors'
import { checkModelFolder, configureOfflineEnv } from './onnx-common'
import { tokenCounterFor } from './token-count'

/**
 * The embedder in a worker thread. onnxruntime-node runs inference synchronously on the calling
 * thread (see embedder.ts), so embedding a batch on the engine's own thread would stall every
 * search and question that arrives meanwhile. Here the model lives in a worker; the engine's thread
 * keeps only the tokenizer, for the synchronous `countTokens` the chunker needs.
 *
 * Messages (worker <- engine): {type:'embed', id, texts, query} | {type:'abort', id} | {type:'dispose'}
 * Messages (worker -> engine): {type:'ready', id, dims, maxTokens} | {type:'load-error', message}
 *                              | {type:'result', id, vectors} | {type:'error', id, message, abort}
 * If the worker dies, every pending call rejects with the reason; the embedder is then unusable and
 * the engine reports the model as failed (it is loaded again on the next reload).
 */

type FromWorker =
  | { type: 'ready'; id: string; dims: number; maxTokens: number }
  | { type: 'load-error'; message: string }
  | { type: 'result'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; message: string; abort: boolean }

function startWorker(workerData: unknown): Worker {
  const here = path.dirname(fileURLToPath(import.meta.url))
  // Built app: electron-vite emits the entry beside the engine host bundle (out/main), while this
  // code may sit in a shared chunk one folder down (out/main/chunks).
  for (const built of [path.join(here, 'embedder-thread-entry.js'), path.join(here, '..', 'embedder-thread-entry.js')]) {
    if (existsSync(built)) return new Worker(built, { workerData })
  }
  // From source (tsx, vitest): register tsx's loader inside the worker, then load the TS entry.
  const entry = pathToFileURL(path.join(here, 'embedder-thread-entry.ts')).href
  const boot = `import('tsx/esm/api').then((m) => m.register()).then(() => import(${JSON.stringify(entry)}))`
  return new Worker(boot, { eval: true, workerData })
}

export async function loadEmbedderThreaded(dir: string, opts: EmbedderOptions = {}): Promise<Embedder> {
  configureOfflineEnv()
  const abs = await checkModelFolder(dir, 'embedding')
  const tokenizer = await loadTokenizer(abs)
  const worker = startWorker({ dir: abs, opts })
  const ready = await waitUntilReady(worker, abs)
  const calls = new WorkerCalls(worker)
  const countTokens = await tokenCounterFor(abs, (text) => tokenizer.encode(text, { add_special_tokens: false }).length)
  return {
    id: ready.id,
    dims: ready.dims,
    maxTokens: ready.maxTokens,
    countTokens,
    embedDocuments: (texts, signal) => calls.call(texts, false, signal),
    embedQuery: async (text) => {
      const [v] = await calls.call([text], true)
      if (!v) throw new Error(`embedder ${ready.id}: no vector for the query`)
      return v
    },
    dispose: async () => {
      if (calls.dead) return
      calls.fail(new Error('the embedder has been disposed'))
      worker.postMessage({ type: 'dispose' })
      await worker.terminate()
    },
  }
}

async function loadTokenizer(abs: string): Promise<Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>> {
  try {
    return await AutoTokenizer.from_pretrained(abs, { local_files_only: true })
  } catch (err) {
    throw new ModelLoadError(abs, `cannot load the tokenizer in ${abs}: ${errorMessage(err)}`, { cause: err })
  }
}

/** The worker's 'ready' message; a load error, a failed start or an early exit rejects (and the worker is ended). */
async function waitUntilReady(worker: Worker, abs: string): Promise<{ id: string; dims: number; maxTokens: number }> {
  return new Promise<{ id: string; dims: number; maxTokens: number }>((resolve, reject) => {
    const onMessage = (m: FromWorker) => {
      if (m.type === 'ready') done(() => resolve(m))
      else if (m.type === 'load-error') done(() => reject(new ModelLoadError(abs, m.message)))
    }
    const onError = (err: Error) =>
      done(() => reject(new ModelLoadError(abs, `the embedding worker failed to start: ${errorMessage(err)}`, { cause: err })))
    const onExit = (code: number) =>
      done(() => reject(new ModelLoadError(abs, `the embedding worker exited (code ${code}) while loading`)))
    // Only our own listeners are removed: Worker uses its 'message' listeners to start its port.
    const done = (settle: () => void) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit)
      settle()
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit)
  }).catch(async (err) => {
    await worker.terminate()
    throw err
  })
}

/** Embed calls to a ready worker, by id; when the worker dies, every pending call and every later one rejects. */
class WorkerCalls {
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>()
  private nextId = 1
  /** Why the worker can no longer embed, once it cannot. */
  dead: Error | null = null

  constructor(private readonly worker: Worker) {
    worker.on('message', (m: FromWorker) => this.settle(m))
    worker.on('error', (err) => this.fail(new Error(`the embedding worker crashed: ${errorMessage(err)}`)))
    worker.on('exit', (code) => this.fail(new Error(`the embedding worker stopped (exit code ${code})`)))
    // A worker waiting for work must not keep a CLI process alive.
    worker.unref()
  }

  call(texts: string[], query: boolean, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.dead) return Promise.reject(this.dead)
    if (signal?.aborted) return Promise.reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))
    const worker = this.worker
    const id = this.nextId++
    const onAbort = () => worker.postMessage({ type: 'abort', id })
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.ref()
      worker.postMessage({ type: 'embed', id, texts, query })
      signal?.addEventListener('abort', onAbort, { once: true })
    }).finally(() => {
      // One import signal serves thousands of calls: leaving listeners on it would leak.
      signal?.removeEventListener('abort', onAbort)
      if (this.pending.size === 0) worker.unref()
    })
  }

  fail(err: Error): void {
    this.dead ??= err
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
  }

  private settle(m: FromWorker): void {
    if (m.type !== 'result' && m.type !== 'error') return
    const p = this.pending.get(m.id)
    if (!p) return
    this.pending.delete(m.id)
    if (m.type === 'result') p.resolve(m.vectors)
    else {
      const err = new Error(m.message)
      if (m.abort) err.name = 'AbortError'
      p.reject(err)
    }
  }
}
