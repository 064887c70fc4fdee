import { parentPort } from 'node:worker_threads'
import { parseFile } from './index'

/** Worker side of worker-pool.ts (protocol described there): parses one file per message. */
const port = parentPort!

port.on('message', async (m: { type: 'parse'; id: number; bytes: Uint8Array; relativePath: string }) => {
  if (m.type !== 'parse') return
  let doc
  try {
    doc = await parseFile(m.bytes, m.relativePath)
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
