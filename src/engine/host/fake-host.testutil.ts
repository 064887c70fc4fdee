/**
 * A stand-in engine process for EngineClient tests: speaks protocol.ts (JSON-RPC) over child_process IPC.
 * Modes (argv[2]):
 *   hang   ready; acknowledges collections.import / models.download / ask with an id (and one
 *          import progress event), answers collections.list, and never answers anything else (so requests stay pending)
 *   fatal  reports that the database could not be opened, then exits 1
 */
import { createMessageConnection, IPCMessageReader, IPCMessageWriter } from 'vscode-jsonrpc/node'

const mode = process.argv[2] ?? 'hang'
// vscode-jsonrpc's own reader and writer for a Node child's IPC: the client speaks plain JSON-RPC.
const connection = createMessageConnection(new IPCMessageReader(process), new IPCMessageWriter(process))
const send = (method: string, params: object): void => void connection.sendNotification(method, params)

if (mode === 'fatal') {
  connection.listen()
  send('fatal', { message: 'The index at /nowhere could not be opened: locked by another process' })
  setTimeout(() => process.exit(1), 20)
} else {
  let n = 0
  connection.onNotification('shutdown', () => process.exit(0))
  connection.onRequest((method: string) => {
    if (method === 'collections.list') return []
    if (method === 'collections.import') {
      const jobId = `imp_fake_${++n}`
      // After the answer, as a real import reports.
      setImmediate(() =>
        send('import.progress', {
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
        }),
      )
      return { jobId }
    }
    if (method === 'ask') return { requestId: `ask_fake_${++n}` }
    if (method === 'models.download') return { jobId: `mdl_fake_${++n}` }
    return new Promise(() => {})
  })
  connection.listen()
  send('ready', { pid: process.pid })
  // Stay alive until killed.
  setInterval(() => {}, 1 << 30)
}
