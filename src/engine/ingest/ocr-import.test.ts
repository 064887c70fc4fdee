import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { openSource } from '../host/source'
import { tempDir } from '../../test-support/paths'
import { makeScannedPdf, scanImage } from './parsers/__fixtures__/scan'

/**
 * Scans end to end on a real PGlite: a scanned PDF and an image are imported by text recognition,
 * their pages' confidence and word boxes are stored (migration 10) and reach the library's list
 * and the source view; the collection's OCR switch refuses them when off, with the reason, and the
 * next sync after switching reads them again.
 */
describe('importing scans', () => {
  let root: string
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const a = await tempDir()
    const d = await tempDir()
    cleanups.push(a.cleanup, d.cleanup)
    root = a.dir
    const pdf = makeScannedPdf([
      await scanImage(['Maintenance of the pelican pump', 'Grease the bearings every month.']),
      await scanImage(['Replace the gasket when the pump leaks.']),
    ])
    await writeFile(path.join(root, 'manual-scan.pdf'), pdf)
    await writeFile(path.join(root, 'note.png'), (await scanImage(['Warranty card for the marmot mixer.'])).png)
    await writeFile(path.join(root, 'readme.md'), '# Readme\n\nAn ordinary text file.\n')
    // Tiny grey type: tesseract reads it, unsure and partly wrong (confidence about 50).
    const faint = await scanImage(
      ['Smudged carbon copy of the quarterly ledger totals', 'with faint figures nobody could read'],
      900,
      200,
      10,
      '#555',
    )
    await writeFile(path.join(root, 'faint.png'), faint.png)
    engine = await Engine.open({ dataDir: d.dir, modelsDir: path.join(d.dir, 'none') })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('imports them, stores each recognised page, and shows where a passage is on its page', async () => {
    const r = await engine.importFolder(root, { collection: 'scans' })
    expect(r.failed).toEqual([])
    expect(r.imported).toBe(4)
    const [info] = await engine.catalog.list()
    expect(info).toMatchObject({
      id: 'scans',
      documents: 4,
      ocr_pages: 4,
      low_confidence_pages: 1,
      low_confidence_documents: 1,
      ocr: true,
    })

    const hit = (await engine.search('gasket leaks', { mode: 'keyword', k: 1 })).results[0]!
    // The two short pages make one passage, from page 1 to page 2.
    expect([hit.path, hit.page, hit.page_end]).toEqual(['manual-scan.pdf', 1, 2])
    const view = await openSource(engine, hit.chunk_id)
    expect(view.format).toBe('pdf')
    // Every word of the passage has its box: ten on page 1, seven on page 2, all in the top lines.
    expect(view.ocr!.map((p) => [p.page, p.boxes.length, p.low_confidence])).toEqual([
      [1, 10, false],
      [2, 7, false],
    ])
    for (const p of view.ocr!) {
      expect(p.confidence).toBeGreaterThan(80)
      for (const [x0, y0, x1, y1] of p.boxes) expect(0 < x0 && x0 < x1 && x1 < 1 && 0 < y0 && y0 < y1 && y1 < 0.4).toBe(true)
    }

    const img = (await engine.search('marmot mixer', { mode: 'keyword', k: 1 })).results[0]!
    expect(img.path).toBe('note.png')
    const iv = await openSource(engine, img.chunk_id)
    expect(iv).toMatchObject({ format: 'image', image_type: 'image/png', content: null, pdf_base64: null })
    expect(Buffer.from(iv.image_base64!, 'base64').subarray(1, 4).toString()).toBe('PNG')
    expect(iv.ocr![0]!.boxes).toHaveLength(6)

    const faint = (await engine.search('carbon copy quarterly', { mode: 'keyword', k: 1 })).results[0]!
    expect(faint.path).toBe('faint.png')
    const fv = (await openSource(engine, faint.chunk_id)).ocr![0]!
    expect(fv.low_confidence).toBe(true)
    expect(fv.confidence).toBeLessThan(70)

    const md = (await engine.search('ordinary text file', { mode: 'keyword', k: 1 })).results[0]!
    expect((await openSource(engine, md.chunk_id)).ocr).toBeUndefined()
  }, 120_000)

  it('with OCR off, the next sync refuses scans with the reason; on again, it reads them again', async () => {
    expect(await engine.catalog.setOcr('scans', false)).toBe(true)
    const off = await engine.importFolder(root, { collection: 'scans' })
    expect(off.failed.map((f) => [f.path, f.reason]).sort()).toEqual([
      ['faint.png', 'file is an image and text recognition is off for this collection'],
      [
        'manual-scan.pdf',
        'PDF has no text to read: its pages are scanned images and text recognition is off for this collection',
      ],
      ['note.png', 'file is an image and text recognition is off for this collection'],
    ])
    expect(off.unchanged + off.imported).toBe(1)
    expect((await engine.catalog.list())[0]!.ocr).toBe(false)
    expect(await engine.catalog.setOcr('scans', true)).toBe(true)
    const on = await engine.importFolder(root, { collection: 'scans' })
    expect(on.failed).toEqual([])
    expect(on.imported).toBe(4)
    expect((await engine.catalog.list())[0]!.ocr_pages).toBe(4)
    expect(await engine.catalog.setOcr('nope', true)).toBe(false)
  }, 120_000)
})
