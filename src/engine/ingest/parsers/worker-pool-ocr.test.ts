import { describe, expect, it } from 'vitest'
import type { FileProgress } from '../types'
import { makeScannedPdf, scanImage } from './__fixtures__/scan'
import { ParsePool } from './worker-pool'

/**
 * Text recognition in the real parser worker (parse-worker-entry.ts, which starts tesseract.js's
 * own worker thread from inside it): each page of recognition has a time limit of its own, and
 * cancelling stops it at once.
 */

const WORDS = ['apple', 'banana', 'cherry', 'damson', 'elder', 'fig']
const lines = (page: number) =>
  Array.from({ length: 14 }, (_, i) => `Line ${i + 1} of the ${WORDS[page - 1]} page, scanned for the time limit test.`)

async function scan(pages: number): Promise<Uint8Array> {
  const images = []
  for (let p = 1; p <= pages; p++) images.push(await scanImage(lines(p), 1240, 1754))
  return makeScannedPdf(images)
}

describe('text recognition in the parser worker', () => {
  it('gives each recognised page a time limit of its own: a scan longer than the base limit is read, a page over its limit is stopped', async () => {
    const pdf = await scan(3)
    // A first run in a fresh pool (as each below is) times the start (pdf.js loading, reading the
    // pages) and the recognition; the base limit is set a third of the way into the recognition.
    const first = new ParsePool()
    const w0 = Date.now()
    let toOcr = 0
    await first.parse(pdf.slice(), 'first.pdf', {
      onProgress: (p) => void (p.stage === 'ocr' && !toOcr && (toOcr = Date.now() - w0)),
    })
    const all = Date.now() - w0
    await first.close()
    const base = Math.round((toOcr + (all - toOcr) / 3) / 100) * 100

    const strict = new ParsePool({ timeoutMs: base, ocrPageTimeoutMs: 100 })
    const fail = await strict.parse(pdf.slice(), 'scan.pdf').catch((e: unknown) => e)
    await strict.close()
    expect((fail as Error).message).toBe('text recognition of one page took longer than 0.1 s')

    const progress: FileProgress[] = []
    const lenient = new ParsePool({ timeoutMs: base, ocrPageTimeoutMs: all })
    const doc = await lenient.parse(pdf.slice(), 'scan.pdf', { onProgress: (p) => progress.push(p) })
    await lenient.close()
    expect(doc.pages!.every((p) => p.ocr && p.ocr.confidence > 80)).toBe(true)
    expect(doc.sections.flatMap((s) => s.blocks).map((b) => b.page)).toContain(3)
    expect(progress.filter((p) => p.stage === 'ocr').map((p) => p.done)).toEqual([0, 1, 2, 3])
  }, 120_000)

  it('cancelling during recognition rejects at once and stops the work', async () => {
    const pdf = await scan(6)
    const pool = new ParsePool()
    const ac = new AbortController()
    let abortedAt = 0
    const parse = pool.parse(pdf, 'scan.pdf', {
      signal: ac.signal,
      onProgress: (p) => {
        if (p.stage === 'ocr' && p.done === 1 && !abortedAt) {
          abortedAt = Date.now()
          ac.abort()
        }
      },
    })
    const e = await parse.catch((x: unknown) => x)
    expect((e as Error).name).toBe('AbortError')
    expect(Date.now() - abortedAt).toBeLessThan(1000)
    // The worker and tesseract's thread inside it are gone: this process is idle again.
    await new Promise((r) => setTimeout(r, 300))
    const cpu0 = process.cpuUsage()
    await new Promise((r) => setTimeout(r, 1000))
    const cpu = process.cpuUsage(cpu0)
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(400)
    await pool.close()
  }, 120_000)
})
