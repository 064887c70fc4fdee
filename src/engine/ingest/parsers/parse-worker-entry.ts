import { parentPort } from 'node:worker_threads'
import type { FileProgress } from '../types'
import { parseFile } from './index'

/** Worker side of worker-pool.ts (protocol described there): parses one file per message. */
const port = parentPort!

/**
 * Progress of the file being parsed, sent when a whole per cent more of it is done (and at its
 * end): at most about a hundred messages for a 5,000-page PDF, none for a one-page file.
 */
function progressSender(id: number): (p: FileProgress) => void {
  let sent = -1
  let stage: FileProgress['stage'] = 'pages'
  return (p) => {
    // Text recognition's first message (done 0) always goes: it tells the pool how many pages
    // are to be recognised, which sets the file's time limit (worker-pool.ts).
    const first = p.stage !== stage
    stage = p.stage
    if (p.total < 2 && !(first && p.stage === 'ocr')) return
    const percent = Math.floor((100 * p.done) / p.total)
    if (!first && percent === sent && p.done < p.total) return
    sent = percent
    port.postMessage({ type: 'progress', id, progress: p })
  }
}

port.on('message', async (m: { type: 'parse'; id: number; bytes: Uint8Array; relativePath: string; ocr?: boolean }) => {
  if (m.type !== 'parse') return
  let doc
  try {
    doc = await parseFile(m.bytes, m.relativePath, { onProgress: progressSender(m.id), ocr: m.ocr !== false })
  } catch (err) {
    // parseFile turns every failure into a ParseError whose message is meant for the person.
    port.postMessage({ type: 'error', id: m.id, message: err instanceof Error ? err.message : String(err) })
    return
  }
  try {
    port.postMessage({ type: 'result', id: m.id, doc })
  } catch {
    // Metadata a parser passed through that cannot be cloned (a function, a class instance):
    // what JSON keeps of it is all the chunker and version detection look at.
    port.postMessage({ type: 'result', id: m.id, doc: { ...doc, meta: JSON.parse(JSON.stringify(doc.meta)) as unknown } })
  }
})

port.postMessage({ type: 'ready' })
