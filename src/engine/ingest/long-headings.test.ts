import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { makePdf } from './parsers/__fixtures__/generate'
import { MAX_HEADING_CHARS } from './sync/chunk'

/**
 * A title or heading of hundreds of kilobytes (a PDF's Info Title, an HTML <title>, front matter)
 * went into the breadcrumb of every chunk of its document, and the breadcrumb through the
 * exact-term extraction, whose patterns are quadratic in a run of letters: 40,000 letters took
 * 1.9 s, a title of 4 MB hours, on the engine's own thread (no parser time limit there), so the
 * import and every search stood still. Titles and headings are cut to MAX_HEADING_CHARS before chunking.
 */
describe('a document with a title of hundreds of kilobytes', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('is imported with its title and headings cut short, in every chunk and in the document row', async () => {
    const folder = await tempDir()
    const data = await tempDir()
    cleanups.push(folder.cleanup, data.cleanup)
    const title = 'Annual' + 'report'.repeat(15_000)
    const pages = Array.from({ length: 20 }, (_, i) => [
      { size: 11, y: 700, text: `Page ${i + 1} on the godwit and the dunlin.` },
    ])
    await writeFile(path.join(folder.dir, 'huge-title.pdf'), makePdf(pages, { title }))
    await writeFile(path.join(folder.dir, 'huge-heading.md'), `# ${'Heading'.repeat(5_000)}\n\nThe curlew calls.\n`)
    await writeFile(path.join(folder.dir, 'ok.md'), '# Fine\n\nA plain note.\n')

    const engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'no-models') })
    try {
      const report = await engine.importFolder(folder.dir, { collection: 'long' })
      expect(report.failed).toEqual([])
      expect(report.imported).toBe(3)
      const docs = (
        await engine.db.query<{ path: string; title: string | null }>(
          "SELECT path, title FROM documents WHERE collection_id = 'long' ORDER BY path",
        )
      ).rows
      const pdf = docs.find((d) => d.path === 'huge-title.pdf')!
      expect(pdf.title!.length).toBeLessThanOrEqual(MAX_HEADING_CHARS)
      expect(pdf.title).toMatch(/^Annual(report)+r?e?p?o?r?…$/)
      const chunks = (await engine.db.query<{ heading: string }>("SELECT heading FROM chunks WHERE collection_id = 'long'")).rows
      expect(chunks.length).toBeGreaterThanOrEqual(3)
      for (const c of chunks) expect(c.heading.length).toBeLessThanOrEqual(3 * (MAX_HEADING_CHARS + 3))
      const hits = await engine.search('curlew', { mode: 'keyword', k: 5, scope: { version: 'all' } })
      expect(hits.results[0]?.text).toMatch(/curlew/)
      expect(chunks.map((c) => c.heading)).toContainEqual(expect.stringMatching(/^(Heading)+\w*…$/))
    } finally {
      await engine.close()
    }
  }, 600_000)
})
