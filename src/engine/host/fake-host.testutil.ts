/**
 * A stand-in engine process for EngineClient tests: speaks protocol.ts over child_process IPC.
 * Modes (argv[2]):
 *   hang   ready; acknowledges collections.import / models.download / ask with an id (and one
 *          import progress event), answers collections.list, and never answers anything else (so requests stay pending)
 *   fatal  reports that the database could not be opened, then exits 1
 */
import type { FromHost } from './protocol'

const mode = process.argv[2] ?? 'hang'
const send = (m: FromHost): void => {
  process.send?.(m)
}

if (mode === 'fatal') {
  send({ type: 'fatal', message: 'The index at /nowhere could not be opened: locked by another process' })
  setTimeout(() => process.exit(1), 20)
} else {
  let n = 0
  process.on('message', (raw: unknown) => {
    const msg = raw as { type: string; id: number; method: string; input: { role?: string } }
    if (msg.type === 'shutdown') process.exit(0)
    if (msg.type !== 'request') return
    if (msg.method === 'collections.list') send({ type: 'response', id: msg.id, result: { ok: true, value: [] } })
    if (msg.method === 'collections.import') {
      const jobId = `imp_fake_${++n}`
      send({ type: 'response', id: msg.id, result: { ok: true, value: { jobId } } })
      send({
        type: 'event',
        event: 'import.progress',
        payload: {
          jobId,
          phase: 'importing',
          collection: 'c',
          filesTotal: 10,
          filesDone: 1,
          currentFile: 'a.md',
          imported: 1,
          unchanged: 0,
          failed: 0,
          skipped: 0,
          chunksWritten: 1,
          textsEmbedded: 0,
          bytesTotal: 100,
          bytesDone: 10,
          elapsedMs: 5,
          etaMs: null,
        },
      })
    }
    if (msg.method === 'ask')
      send({ type: 'response', id: msg.id, result: { ok: true, value: { requestId: `ask_fake_${++n}` } } })
    if (msg.method === 'models.download') {
      const jobId = `mdl_fake_${++n}`
      send({ type: 'response', id: msg.id, result: { ok: true, value: { jobId } } })
    }
  })
  send({ type: 'ready', pid: process.pid })
  // Stay alive until killed.
  setInterval(() => {}, 1 << 30)
}
