import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { approximateTokenCounter } from '../core/model-ports'
import { importFolder } from './importer'
import { makeScannedPdf, scanImage } from './parsers/__fixtures__/scan'
import { DEFER_OCR_OVER } from './sync/prepare'
import { ParsePool } from './parsers/worker-pool'
import type { ParsedDocument } from './types'

/** A real parser pool that records the order files are handed to it. */
class OrderPool extends ParsePool {
  readonly order: string[] = []
  override parse(bytes: Uint8Array, relativePath: string, opts: Parameters<ParsePool['parse']>[2] = {}): Promise<ParsedDocument> {
    this.order.push(relativePath)
    return super.parse(bytes, relativePath, opts)
  }
}

/**
 * A PDF with many pages to recognise takes minutes; a person expects the rest of the folder first.
 * Before, files were read in folder order, so a long scan first in the folder held every other
 * file back until it was recognised.
 */
describe('a PDF with many pages to recognise', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('is recognised after the rest of the folder, in the same import', async () => {
    const folder = await tempDir()
    const data = await tempDir()
    cleanups.push(folder.cleanup, data.cleanup)
    // Blank pages count among the pages to examine (telling them from scans is part of recognition).
    const pages = [await scanImage(['The scanned logbook of the lapwing survey.']), ...Array<string>(DEFER_OCR_OVER).fill('')]
    await writeFile(path.join(folder.dir, 'a-logbook.pdf'), makeScannedPdf(pages))
    await writeFile(path.join(folder.dir, 'b.md'), '# Bee\n\nA note on bees.\n')
    await writeFile(path.join(folder.dir, 'c.pdf'), makeScannedPdf(['A typed page on curlews.']))

    const engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'no-models') })
    const pool = new OrderPool()
    try {
      const report = await importFolder(engine.db, folder.dir, {
        collection: 'scans',
        embedder: null,
        tokenCounter: approximateTokenCounter,
        parsePool: pool,
      })
      expect(report.failed).toEqual([])
      expect(report.imported).toBe(3)
      // Looked at first (its text layer), put back, and recognised once the rest was read.
      expect(pool.order).toEqual(['a-logbook.pdf', 'b.md', 'c.pdf', 'a-logbook.pdf'])
      const hit = (await engine.search('lapwing logbook', { mode: 'keyword', k: 1, scope: { version: 'all' } })).results[0]
      expect(hit?.path).toBe('a-logbook.pdf')
    } finally {
      await pool.close()
      await engine.close()
    }
  }, 300_000)
})
