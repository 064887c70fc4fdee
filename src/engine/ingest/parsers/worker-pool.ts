import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { ParseError, type FileProgress, type ParsedDocument } from '../types'

/**
 * Parsing off the engine's thread. pdf.js, mammoth and the Markdown parser run synchronously for
 * long stretches, and a hostile or pathological file can make them run for minutes or forever: on
 * the engine's own thread that would freeze every search and question meanwhile. Here one worker
 * thread parses one file at a time (imports run one at a time anyway, and it leaves the other
 * core to the engine); a file that takes longer than the time limit gets its worker terminated
 * (the only way to stop synchronous code) and is reported as failed, and the next file gets a
 * fresh worker. Cancelling an import terminates the worker too.
 *
 * Messages (worker -> pool): {type:'ready'} once loaded | {type:'progress', id, progress} while a long
 * file is parsed (its pages) | {type:'result', id, doc} | {type:'error', id, message}
 * Messages (pool -> worker): {type:'parse', id, bytes, relativePath, ocr, deferOcrOver}
 */

/** Long enough for a legitimate 300 MB PDF on a slow machine, short enough that a stuck file ends. */
export const DEFAULT_PARSE_TIMEOUT_MS = 120_000

/**
 * The longest one page may take to recognise. A page takes 3-6 s at 300 dpi on a 2-core machine
 * (docs/parsers.md) and a minute when the machine is busy and the page turned sideways (OCRmyPDF's
 * cardinal.pdf, four such pages, failed at the old allowance of 30 s a page on a loaded machine).
 * The parser reports each page it recognises (progress, stage 'ocr'), and each report starts this
 * limit again: a slow machine finishes a scan, a page that never finishes stops it. How many pages
 * one file may have recognised is bounded by pdf-ocr.ts OCR_PAGE_CAP.
 */
export const DEFAULT_OCR_PAGE_TIMEOUT_MS = 180_000

type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; id: number; progress: FileProgress }
  | { type: 'result'; id: number; doc: ParsedDocument }
  | { type: 'error'; id: number; message: string }

/** Progress inside one file, page by page. */
export type ParseProgress = (p: FileProgress) => void

interface Task {
  id: number
  bytes: Uint8Array
  relativePath: string
  transfer: boolean
  /** ParseContext.ocr: false when the collection has text recognition off. */
  ocr: boolean
  /** ParseContext.deferOcrOver. */
  deferOcrOver: number | undefined
  signal: AbortSignal | undefined
  onProgress: ParseProgress | undefined
  resolve: (doc: ParsedDocument) => void
  reject: (err: Error) => void
  onAbort: () => void
}

/**
 * The parser thread's JavaScript heap, at most: a file whose parse needs more (a hostile PDF's
 * object graph, a spreadsheet's XML) ends that parse with a reason instead of taking the app's
 * memory. The pages text recognition reads are bounded by their pixel caps (pdf-render.ts,
 * image.ts), whose buffers and tesseract's wasm memory live outside this heap.
 */
export const DEFAULT_PARSE_HEAP_MB = 3072

export interface ParsePoolOptions {
  /** The worker's heap limit in MB (DEFAULT_PARSE_HEAP_MB); tests give a small one. */
  maxHeapMb?: number
  timeoutMs?: number
  /** The limit of each page of recognition (DEFAULT_OCR_PAGE_TIMEOUT_MS). */
  ocrPageTimeoutMs?: number
  /** The worker's entry module (a .ts or .js path); tests give one with a parser that never ends. */
  entry?: string
}

/** The parser itself could not be started (not the file's fault): the file is tried again next sync. */
export class ParserStartError extends ParseError {}

function abortError(): Error {
  return Object.assign(new Error('parsing was cancelled'), { name: 'AbortError' })
}

function startWorker(entry: string | undefined, maxHeapMb: number): Worker {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const resourceLimits = { maxOldGenerationSizeMb: maxHeapMb }
  if (!entry) {
    // Built app: electron-vite emits the entry beside the engine host bundle (out/main), while this
    // code may sit in a shared chunk one folder down (out/main/chunks). See embedder-thread.ts.
    for (const built of [path.join(here, 'parse-worker-entry.js'), path.join(here, '..', 'parse-worker-entry.js')]) {
      if (existsSync(built)) return new Worker(built, { resourceLimits })
    }
  }
  const file = entry ?? path.join(here, 'parse-worker-entry.ts')
  if (file.endsWith('.js')) return new Worker(file, { resourceLimits })
  // From source (tsx, vitest): register tsx's loader inside the worker, then load the TS entry.
  const url = pathToFileURL(file).href
  const boot = `import('tsx/esm/api').then((m) => m.register()).then(() => import(${JSON.stringify(url)}))`
  return new Worker(boot, { eval: true, resourceLimits })
}

export class ParsePool {
  private worker: Worker | null = null
  private ready: Promise<void> | null = null
  private readonly queue: Task[] = []
  private current: Task | null = null
  private timer: NodeJS.Timeout | null = null
  /** The running file's current limit (ms), and whether it is a page of recognition's. */
  private limitMs = 0
  private recognising = false
  private nextId = 1
  private closed = false
  readonly timeoutMs: number
  readonly ocrPageTimeoutMs: number
  readonly maxHeapMb: number

  constructor(private readonly opts: ParsePoolOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS
    this.maxHeapMb = opts.maxHeapMb ?? DEFAULT_PARSE_HEAP_MB
    this.ocrPageTimeoutMs = opts.ocrPageTimeoutMs ?? DEFAULT_OCR_PAGE_TIMEOUT_MS
  }

  /** Parses one file in the worker; rejects with a ParseError (the reason in words) or an AbortError. */
  parse(
    bytes: Uint8Array,
    relativePath: string,
    opts: {
      signal?: AbortSignal | undefined
      transfer?: boolean
      onProgress?: ParseProgress | undefined
      ocr?: boolean
      deferOcrOver?: number | undefined
    } = {},
  ): Promise<ParsedDocument> {
    if (this.closed) return Promise.reject(new Error('the parser pool is closed'))
    if (opts.signal?.aborted) return Promise.reject(abortError())
    return new Promise<ParsedDocument>((resolve, reject) => {
      const task: Task = {
        id: this.nextId++,
        bytes,
        relativePath,
        transfer: !!opts.transfer,
        ocr: opts.ocr !== false,
        deferOcrOver: opts.deferOcrOver,
        signal: opts.signal,
        onProgress: opts.onProgress,
        resolve,
        reject,
        onAbort: () => this.cancel(task),
      }
      opts.signal?.addEventListener('abort', task.onAbort, { once: true })
      this.queue.push(task)
      this.pump()
    })
  }

  /** Terminates the worker; queued and running parses reject. */
  async close(): Promise<void> {
    this.closed = true
    const err = new Error('the parser pool is closed')
    for (const t of this.queue.splice(0)) this.settle(t, () => t.reject(err))
    const running = this.current
    if (running) this.finish(running, () => running.reject(err))
    await this.kill()
  }

  private spawn(): Promise<void> {
    if (this.ready) return this.ready
    const worker = startWorker(this.opts.entry, this.maxHeapMb)
    this.worker = worker
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: FromWorker) => {
        if (m.type === 'ready') {
          worker.off('message', onMessage)
          resolve()
        }
      }
      worker.on('message', onMessage)
      worker.once('error', reject)
      worker.once('exit', (code) => reject(new Error(`the parser worker exited (code ${code}) while starting`)))
    })
    worker.on('message', (m: FromWorker) => this.onMessage(worker, m))
    worker.on('error', (err) =>
      this.onDeath(
        worker,
        (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `needed more than ${this.maxHeapMb} MB of memory to parse, and was stopped`
          : `the parser stopped: ${err.message}`,
      ),
    )
    worker.on('exit', (code) => this.onDeath(worker, `the parser stopped (exit code ${code})`))
    // Rejections are handled where `ready` is awaited; this keeps an unobserved one quiet.
    this.ready.catch(() => undefined)
    return this.ready
  }

  private pump(): void {
    if (this.current || this.closed) return
    const task = this.queue.shift()
    if (!task) {
      // A worker waiting for work must not keep a CLI process alive.
      this.worker?.unref()
      return
    }
    this.current = task
    void this.spawn().then(
      () => {
        if (this.current !== task || !this.worker) return
        this.worker.ref()
        // The limit counts from the moment the worker has the file, not from its start-up.
        this.recognising = false
        this.restartLimit(task, this.timeoutMs)
        const bytes = task.bytes
        const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        this.worker.postMessage(
          { type: 'parse', id: task.id, bytes, relativePath: task.relativePath, ocr: task.ocr, deferOcrOver: task.deferOcrOver },
          task.transfer && whole && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [],
        )
      },
      (err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err)
        void this.kill()
        this.finish(task, () => task.reject(new ParserStartError(`could not start the parser: ${reason}`)))
      },
    )
  }

  private onMessage(worker: Worker, m: FromWorker): void {
    if (worker !== this.worker || m.type === 'ready') return
    const task = this.current
    if (!task || task.id !== m.id) return
    if (m.type === 'progress') {
      if (m.progress.stage === 'ocr') {
        this.recognising = true
        this.restartLimit(task, this.ocrPageTimeoutMs)
      }
      task.onProgress?.(m.progress)
      return
    }
    if (m.type === 'result') this.finish(task, () => task.resolve(m.doc))
    else this.finish(task, () => task.reject(new ParseError(m.message)))
  }

  private onDeath(worker: Worker, reason: string): void {
    if (worker !== this.worker) return
    this.worker = null
    this.ready = null
    const task = this.current
    if (task) this.finish(task, () => task.reject(new ParseError(reason)))
  }

  /** The running file has `ms` from now: from its start, or from the last page it recognised. */
  private restartLimit(task: Task, ms: number): void {
    if (this.current !== task) return
    if (this.timer) clearTimeout(this.timer)
    this.limitMs = ms
    this.timer = setTimeout(() => this.timeOut(task), ms)
  }

  private timeOut(task: Task): void {
    if (this.current !== task) return
    const seconds = Math.round(this.limitMs / 100) / 10
    void this.kill()
    const reason = this.recognising
      ? `text recognition of one page took longer than ${seconds} s`
      : `took longer than ${seconds} s to parse`
    this.finish(task, () => task.reject(new ParseError(reason)))
  }

  private cancel(task: Task): void {
    const i = this.queue.indexOf(task)
    if (i >= 0) {
      this.queue.splice(i, 1)
      this.settle(task, () => task.reject(abortError()))
    } else if (this.current === task) {
      void this.kill()
      this.finish(task, () => task.reject(abortError()))
    }
  }

  /** Terminates the worker (if any); the next parse starts a fresh one. */
  private async kill(): Promise<void> {
    const w = this.worker
    this.worker = null
    this.ready = null
    if (w) await w.terminate()
  }

  private settle(task: Task, done: () => void): void {
    task.signal?.removeEventListener('abort', task.onAbort)
    done()
  }

  /** Ends the running task and starts the next. */
  private finish(task: Task, done: () => void): void {
    if (this.current !== task) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.current = null
    this.settle(task, done)
    this.pump()
  }
}

let shared: ParsePool | null = null

/** Parses a file in the shared parser worker (see ParsePool), or in `pool` when one is given. */
export function parseIsolated(
  bytes: Uint8Array,
  relativePath: string,
  opts: {
    signal?: AbortSignal | undefined
    pool?: ParsePool | undefined
    onProgress?: ParseProgress | undefined
    /** Text recognition of scanned pages and images; on unless false. */
    ocr?: boolean | undefined
    deferOcrOver?: number | undefined
  } = {},
): Promise<ParsedDocument> {
  const pool = opts.pool ?? (shared ??= new ParsePool())
  // The caller hands the bytes over: they are read for this parse only (sync/parse.ts).
  return pool.parse(bytes, relativePath, {
    signal: opts.signal,
    transfer: true,
    onProgress: opts.onProgress,
    ocr: opts.ocr !== false,
    deferOcrOver: opts.deferOcrOver,
  })
}
