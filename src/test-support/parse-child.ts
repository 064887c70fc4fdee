/**
 * Parses one file in a process of its own, on this thread (parseFile, as the parser worker does),
 * and prints what came of it with the process's peak resident memory, for tests of memory a
 * parser takes outside any JavaScript heap (decoded images, canvases, wasm):
 *
 *   node --import tsx src/test-support/parse-child.ts <file>
 */
import { readFile } from 'node:fs/promises'
import { parseFile } from '../engine/ingest/parsers/index'

const file = process.argv[2]
if (!file) throw new Error('usage: parse-child.ts <file>')
let outcome: { ok: true; notices: string[] } | { ok: false; error: string }
try {
  const doc = await parseFile(new Uint8Array(await readFile(file)), file)
  outcome = { ok: true, notices: doc.notices ?? [] }
} catch (e) {
  outcome = { ok: false, error: e instanceof Error ? e.message : String(e) }
}
const status = await readFile('/proc/self/status', 'utf8')
const peakMb = Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024)
process.stdout.write(JSON.stringify({ ...outcome, peakMb }) + '\n')
