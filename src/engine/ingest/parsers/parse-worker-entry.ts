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
    // Every page of text recognition is reported (each takes seconds): each report starts the
    // page's time limit again (worker-pool.ts).
    const first = p.stage !== stage
    stage = p.stage
    if (p.stage === 'ocr') {
      port.postMessage({ type: 'progress', id, progress: p })
      return
    }
    if (p.total < 2) return
    const percent = Math.floor((100 * p.done) / p.total)
    if (!first && percent === sent && p.done < p.total) return
    sent = percent
    port.postMessage({ type: 'progress', id, progress: p })
  }
}

port.on(
  'message',
  async (m: { type: 'parse'; id: number; bytes: Uint8Array; relativePath: string; ocr?: boolean; deferOcrOver?: number }) => {
    if (m.type !== 'parse') return
    let doc
    try {
      doc = await parseFile(m.bytes, m.relativePath, {
        onProgress: progressSender(m.id),
        ocr: m.ocr !== false,
        deferOcrOver: m.deferOcrOver,
      })
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
  },
)

port.postMessage({ type: 'ready' })
