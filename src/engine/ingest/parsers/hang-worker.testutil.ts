import { BroadcastChannel, parentPort, threadId } from 'node:worker_threads'
import { parseFile } from './index'

/**
 * A parse worker for tests (worker-pool.ts protocol): files whose name contains "hang" never
 * finish parsing, as a hostile PDF or a pathological Markdown file would not: a synchronous loop
 * that only terminating the thread ends; files named "hog" take memory until the heap limit ends them;
 * files named "segv" kill the whole process with SIGSEGV, as a native crash would. Every other file is parsed for real. Each parse is
 * announced on a broadcast channel with the worker's thread id, so a test can see the spin
 * start and a fresh worker take the next file.
 */
// The channel's name is repeated in worker-pool.test.ts: importing this module outside a worker would run it.

const port = parentPort!
const log = new BroadcastChannel('docent-test-parse-log')

port.on('message', async (m: { type: 'parse'; id: number; bytes: Uint8Array; relativePath: string }) => {
  log.postMessage({ relativePath: m.relativePath, threadId })
  if (m.relativePath.includes('hog')) {
    // Holds on to ever more memory, as a hostile file's object graph would.
    const held: number[][] = []
    for (;;) held.push(new Array<number>(1 << 20).fill(held.length))
  }
  if (m.relativePath.includes('segv')) {
    // What a native crash in pdf.js's canvas or tesseract's wasm does: the signal ends the whole
    // process this thread lives in, engine and all, with no chance to answer.
    process.kill(process.pid, 'SIGSEGV')
  }
  if (m.relativePath.includes('hang')) {
    for (;;) {
      // Spin: nothing but terminate() stops this.
    }
  }
  try {
    port.postMessage({ type: 'result', id: m.id, doc: await parseFile(m.bytes, m.relativePath) })
  } catch (err) {
    port.postMessage({ type: 'error', id: m.id, message: err instanceof Error ? err.message : String(err) })
  }
})

port.postMessage({ type: 'ready' })
