import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { repoRoot, tempDir } from '../../../test-support/paths'
import { makeScannedPdf } from './__fixtures__/scan'
import { MAX_IMAGE_PIXELS, parsePdf } from './pdf'

const run = promisify(execFile)

/**
 * Memory a PDF takes outside the parser thread's heap limit: pdf.js decodes an image whole into a
 * buffer (four bytes a pixel once drawn) and draws it through a canvas of its full size, none of
 * it on the JavaScript heap. A 12,000 x 12,000 image deflates to a few hundred kilobytes; drawn,
 * it took over a gigabyte, and a page of several such would take the engine down (the system's
 * out-of-memory killer ends the process, not the thread). Images over MAX_IMAGE_PIXELS are left
 * out of the drawing. Measured in a process of its own (test-support/parse-child.ts).
 */
describe('a PDF with an image of 144 million pixels', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('is read without decoding the image, and says why its page has no text', async () => {
    const dir = await tempDir()
    cleanups.push(dir.cleanup)
    const side = 12_000
    expect(side * side).toBeGreaterThan(MAX_IMAGE_PIXELS)
    const gray = new Uint8Array(side * side).fill(255)
    const file = path.join(dir.dir, 'bomb.pdf')
    await writeFile(file, makeScannedPdf([{ width: side, height: side, gray, png: new Uint8Array() }]))
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'src/test-support/parse-child.ts'), file],
      {
        cwd: repoRoot,
        maxBuffer: 1 << 24,
      },
    )
    const got = JSON.parse(stdout.trim().split('\n').at(-1)!) as { ok: boolean; error?: string; peakMb: number }
    expect(got.ok).toBe(false)
    expect(got.error).toBe('PDF has no text to read: its scanned image is too large to read (over 72 million pixels)')
    // Loading pdf.js and tesseract alone is about 500 MB; the drawn image alone would be 576 MB more.
    expect(got.peakMb).toBeLessThan(900)
  }, 300_000)

  it('beside other pages: they are read, and the page left out is named', async () => {
    const side = 9_000
    const gray = new Uint8Array(side * side).fill(255)
    const pdf = makeScannedPdf(['A typed page about plovers.', { width: side, height: side, gray, png: new Uint8Array() }])
    const d = await parsePdf(pdf, 'mixed.pdf')
    expect(d.sections.flatMap((s) => s.blocks).map((b) => b.text)).toEqual(['A typed page about plovers.'])
    expect(d.notices).toEqual(['page 2 holds a scanned image too large to read (over 72 million pixels) and was left out'])
  }, 300_000)
})
