import { mkdir, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import { approximateTokenCounter, type TokenCounter } from '../core/model-ports'
import { importFolder, type ImportProgress } from './importer'
import { makePdf, type PdfText } from './parsers/__fixtures__/generate'
import { ParsePool } from './parsers/worker-pool'
import { tempDir } from '../../test-support/paths'
import { storeBackends, type StoreBackend } from '../../test-support/backends'
import type { ParsedDocument } from './types'

/**
 * The import defects of issue 26, each reproduced with real files on disk imported into a real
 * store (on-disk PGlite, and a PostgreSQL server where one runs): a NUL in a PDF's text, any write
 * a document's row or chunks are refused, text layers of control characters, failed files parsed
 * again on every sync, no progress inside a long file, and equal PDF headings nested under the first.
 */

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/

/** A real parser pool that counts what it is asked to parse (the files a sync really read and parsed). */
class CountingPool extends ParsePool {
  readonly parsed: string[] = []
  override parse(bytes: Uint8Array, relativePath: string, opts: Parameters<ParsePool['parse']>[2] = {}): Promise<ParsedDocument> {
    this.parsed.push(relativePath)
    return super.parse(bytes, relativePath, opts)
  }
}

for (const backend of storeBackends) describe.skipIf(backend.skip)(`import defects (${backend.name})`, () => suite(backend))

function suite(backend: StoreBackend): void {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []

  const folder = async (files: Record<string, string | Uint8Array>): Promise<string> => {
    const t = await tempDir('docent-defects-')
    cleanups.push(t.cleanup)
    for (const [rel, data] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(t.dir, rel)), { recursive: true })
      await writeFile(path.join(t.dir, rel), data)
    }
    return t.dir
  }
  const jobState = async (collection: string) =>
    (
      await engine.db.query<{ state: string; error: string | null }>(
        'SELECT state, error FROM import_jobs WHERE collection_id = $1 ORDER BY started_at DESC LIMIT 1',
        [collection],
      )
    ).rows[0]
  const synced = async (collection: string) =>
    (await engine.db.query<{ at: unknown }>('SELECT last_sync_at AS at FROM collections WHERE id = $1', [collection])).rows[0]
      ?.at ?? null

  beforeAll(async () => {
    const place = await backend.place()
    const models = await tempDir('docent-defects-models-')
    cleanups.push(place.cleanup, models.cleanup)
    engine = await Engine.open({ ...place.options, modelsDir: path.join(models.dir, 'none') })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('a NUL in a PDF or in front matter never reaches the store: the whole folder imports, and again', async () => {
    const root = await folder({
      'a-first.md': '# First\n\nThe osprey dives feet first.\n',
      // Chromium prints glyphs it has no font for as boxes that pdf.js reads as U+0000.
      'b-boxes.pdf': makePdf([
        [
          { size: 11, y: 700, text: 'The heron stands still in the shallows.' },
          { size: 11, y: 686, text: 'boxes', broken: 'nul' },
        ],
      ]),
      // YAML's "\0" escape is a NUL too.
      'c-title.md': '---\ntitle: "Nul\\0title"\nversion: "v1\\0"\n---\n\n# Egret\n\nThe egret wades.\n',
      'd-last.md': '# Last\n\nThe kingfisher waits on a branch.\n',
    })
    const report = await engine.importFolder(root, { collection: 'nul' })
    expect(report.failed).toEqual([])
    expect(report.imported).toBe(4)
    expect(await jobState('nul')).toMatchObject({ state: 'done', error: null })
    expect(await synced('nul')).not.toBeNull()
    const hits = await engine.search('heron shallows kingfisher egret', { mode: 'keyword', k: 10, scope: { version: 'all' } })
    expect(hits.results.map((h) => h.path).sort()).toEqual(['b-boxes.pdf', 'c-title.md', 'd-last.md'])
    for (const h of hits.results) expect(h.text + h.heading).not.toMatch(CONTROL)
    const { rows } = await engine.db.query<{ title: string | null; version: string | null }>(
      `SELECT title, version FROM documents WHERE collection_id = 'nul' AND path = 'c-title.md'`,
    )
    expect(rows[0]).toEqual({ title: 'Nultitle', version: 'v1' })
    const again = await engine.importFolder(root, { collection: 'nul' })
    expect(again).toMatchObject({ imported: 0, unchanged: 4, failed: [] })
  })

  it('any document the store refuses becomes that file’s failure with a reason; the rest imports and the sync completes', async () => {
    const root = await folder({
      'a.md': '# A\n\nThe avocet sweeps its bill.\n',
      'poison.md': '# Poison\n\nThe store refuses this one.\n',
      'z.md': '# Z\n\nThe zitting cisticola sings.\n',
    })
    // A real refusal by the real database (not a mock): a trigger that rejects one document's chunks.
    await engine.db.exec(`
      CREATE FUNCTION docent_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.path = 'poison.md' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER docent_test_refuse BEFORE INSERT ON chunks FOR EACH ROW EXECUTE FUNCTION docent_test_refuse();`)
    try {
      const report = await engine.importFolder(root, { collection: 'refused' })
      // The fault happened: the store refused poison.md's chunks, and said so.
      expect(report.failed).toEqual([{ path: 'poison.md', reason: expect.stringMatching(/refused by the test trigger/) }])
      expect(report.imported).toBe(2)
      expect(await jobState('refused')).toMatchObject({ state: 'done' })
      expect(await synced('refused')).not.toBeNull()
      const { rows } = await engine.db.query<{ path: string; status: string; chunks: number }>(
        `SELECT d.path, d.status, (SELECT count(*)::int FROM chunks c WHERE c.document_id = d.id) AS chunks
           FROM documents d WHERE d.collection_id = 'refused' ORDER BY d.path`,
      )
      expect(rows).toEqual([
        { path: 'a.md', status: 'indexed', chunks: 1 },
        { path: 'poison.md', status: 'failed', chunks: 0 },
        { path: 'z.md', status: 'indexed', chunks: 1 },
      ])
      expect(await checkIndexConsistency(engine.db)).toEqual([])
    } finally {
      await engine.db.exec('DROP TRIGGER docent_test_refuse ON chunks; DROP FUNCTION docent_test_refuse();')
    }
    // Once the store accepts it, the changed file imports.
    await writeFile(path.join(root, 'poison.md'), '# Poison\n\nNow the store takes it.\n')
    const after = await engine.importFolder(root, { collection: 'refused' })
    expect(after).toMatchObject({ imported: 1, unchanged: 2, failed: [] })
  })

  it('a page of control characters stays out of the index with a notice; stray ones never reach search results', async () => {
    const root = await folder({
      'fonts.pdf': makePdf(
        [
          [{ size: 11, y: 700, text: 'Page one tells of the dunlin and its winter flocks.' }],
          // The whole page set in a font without a usable ToUnicode map: C0 controls, no text.
          Array.from({ length: 12 }, (_, i) => ({
            size: 11,
            y: 700 - i * 14,
            text: 'garbled words of a broken font',
            broken: 'controls' as const,
          })),
          [
            { size: 11, y: 700, text: 'Page three tells of the sanderling at the tide line.' },
            { size: 11, y: 686, text: 'icon', broken: 'controls' },
          ],
        ],
        { title: 'Waders' },
      ),
    })
    const report = await engine.importFolder(root, { collection: 'fonts' })
    expect(report.failed).toEqual([])
    expect(report.notices).toContainEqual(
      expect.stringMatching(/^fonts\.pdf: page 2 has no readable text .*left out of the index/),
    )
    const { rows } = await engine.db.query<{ text: string; page_start: number }>(
      `SELECT text, page_start FROM chunks WHERE collection_id = 'fonts' ORDER BY position`,
    )
    expect(rows.map((r) => r.page_start)).not.toContain(2)
    for (const r of rows) expect(r.text).not.toMatch(CONTROL)
    const hits = await engine.search('dunlin sanderling tide', { mode: 'keyword', k: 20, scope: { version: 'all' } })
    expect(hits.results.length).toBeGreaterThan(0)
    for (const h of hits.results) expect(h.text + h.heading).not.toMatch(CONTROL)
  })

  it('a PDF whose every page is unreadable fails with a reason that says why', async () => {
    const root = await folder({
      'ok.md': '# Ok\n\nFine.\n',
      'all-broken.pdf': makePdf([[{ size: 11, y: 700, text: 'nothing readable here at all', broken: 'controls' }]]),
    })
    const report = await engine.importFolder(root, { collection: 'all-broken' })
    expect(report.failed).toEqual([{ path: 'all-broken.pdf', reason: expect.stringMatching(/no readable text.*character map/) }])
    expect(report.imported).toBe(1)
  })

  it('a failed file is not parsed again until it changes, and is still listed as failed', async () => {
    const root = await folder({
      'good.md': '# Good\n\nThe curlew calls.\n',
      'bad/broken.pdf': '%PDF-1.7\nthis is not really a pdf\n',
      'bad/binary.md': Buffer.from([0x23, 0x20, 0x00, 0x01, 0xff]),
    })
    const pool = new CountingPool()
    cleanups.push(() => pool.close())
    const sync = (counter: TokenCounter = approximateTokenCounter) =>
      importFolder(engine.db, root, { collection: 'failing', embedder: null, tokenCounter: counter, parsePool: pool })
    const first = await sync()
    expect(first.failed.map((f) => f.path).sort()).toEqual(['bad/binary.md', 'bad/broken.pdf'])
    expect(pool.parsed.sort()).toEqual(['bad/binary.md', 'bad/broken.pdf', 'good.md'])

    pool.parsed.length = 0
    const second = await sync()
    expect(pool.parsed).toEqual([])
    expect(second.failed).toEqual(first.failed)
    expect(second.notices).toContainEqual(expect.stringMatching(/^2 files that failed before were not read again/))
    expect((await engine.catalog.list()).find((c) => c.id === 'failing')).toMatchObject({ documents: 1, failed: 2 })

    // Touched but the same bytes: read (to compare its hash), not parsed, still failed.
    const later = new Date(Date.now() + 60_000)
    await utimes(path.join(root, 'bad/broken.pdf'), later, later)
    pool.parsed.length = 0
    const touched = await sync()
    expect(pool.parsed).toEqual([])
    expect(touched.failed).toEqual(first.failed)

    // Changed: parsed again (and still broken, with its reason).
    await writeFile(path.join(root, 'bad/broken.pdf'), '%PDF-1.7\nstill not a pdf, but other bytes\n')
    pool.parsed.length = 0
    const changed = await sync()
    expect(pool.parsed).toEqual(['bad/broken.pdf'])
    expect(changed.failed.map((f) => f.path).sort()).toEqual(['bad/binary.md', 'bad/broken.pdf'])

    // Other parsers (another build, or here another tokenizer): every failure is tried again.
    pool.parsed.length = 0
    await sync({ id: 'another-tokenizer', count: approximateTokenCounter.count })
    expect(pool.parsed.sort()).toEqual(['bad/binary.md', 'bad/broken.pdf', 'good.md'])
  })

  it('reports progress inside a long file: pages parsed of the total, through the import progress events', async () => {
    const pages: PdfText[][] = Array.from({ length: 300 }, (_, i) => [
      { size: 11, y: 700, text: `Page ${i + 1} of the long survey counts the godwits on the estuary.` },
    ])
    const root = await folder({ 'long.pdf': makePdf(pages, { title: 'Survey' }), 'short.md': '# Short\n\nA short note.\n' })
    const seen: ImportProgress[] = []
    await engine.importFolder(root, { collection: 'long', onProgress: (p) => seen.push(p) })
    const inside = seen.filter((p) => p.currentFile === 'long.pdf' && p.fileProgress)
    const done = inside.map((p) => p.fileProgress!.done)
    // Every tenth of a 300-page file is reported whatever the machine's speed.
    expect(inside.every((p) => p.fileProgress!.stage === 'pages' && p.fileProgress!.total === 300)).toBe(true)
    for (const tenth of [30, 60, 90, 120, 150, 180, 210, 240, 270, 300]) expect(done).toContain(tenth)
    expect([...done].sort((a, z) => a - z)).toEqual(done)
    // Between files, and for a file read in one go, there is no page count.
    expect(seen.filter((p) => p.currentFile === 'short.md').every((p) => !p.fileProgress)).toBe(true)
    expect(seen.at(-1)!.fileProgress ?? null).toBeNull()
  })

  it('equal-size PDF headings are siblings: no chapter is filed under the first one', async () => {
    const pages: PdfText[][] = Array.from({ length: 40 }, (_, i) => [
      { size: 20, y: 720, text: `Chapter ${i + 1}` },
      { size: 11, y: 690, text: `Chapter ${i + 1} is about plover number ${i + 1} and where it nests.` },
      { size: 11, y: 676, text: `A second line of the body of chapter ${i + 1}.` },
    ])
    const root = await folder({ 'chapters.pdf': makePdf(pages) })
    await engine.importFolder(root, { collection: 'chapters' })
    const { rows } = await engine.db.query<{ heading: string }>(
      `SELECT DISTINCT heading FROM chunks WHERE collection_id = 'chapters' ORDER BY heading`,
    )
    expect(rows.map((r) => r.heading).sort()).toEqual(pages.map((_, i) => `Chapter ${i + 1}`).sort())
    const hit = await engine.search('plover number 37', {
      mode: 'keyword',
      k: 1,
      scope: { collections: ['chapters'], version: 'all' },
    })
    expect(hit.results[0]).toMatchObject({ path: 'chapters.pdf', heading: 'Chapter 37', page: 37 })
  })
}
