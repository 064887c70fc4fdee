import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { importFolder } from './importer'
import { tempDir } from '../../test-support/paths'
import { storeBackends, type StoreBackend } from '../../test-support/backends'

/** Sync semantics on a small real folder, on a real on-disk PGlite and a real PostgreSQL server (no embedding model). */
for (const backend of storeBackends) describe.skipIf(backend.skip)(`incremental import (${backend.name})`, () => suite(backend))

function suite(backend: StoreBackend): void {
  let root: string
  let data: string
  let place: Awaited<ReturnType<StoreBackend['place']>>
  let engine: Engine
  let cleanups: (() => Promise<void>)[] = []

  const write = async (rel: string, text: string) => {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await writeFile(path.join(root, rel), text)
  }
  const chunksOf = async (p: string) =>
    (
      await engine.db.query<{ id: string; text: string; heading: string }>(
        'SELECT id, text, heading FROM chunks WHERE path = $1 ORDER BY heading, ordinal',
        [p],
      )
    ).rows
  const long = (n: number) =>
    Array.from({ length: n }, (_, i) => `Sentence number ${i} explains the retry policy in detail.`).join(' ')

  beforeAll(async () => {
    const a = await tempDir()
    const b = await tempDir()
    place = await backend.place()
    cleanups = [a.cleanup, b.cleanup, place.cleanup]
    root = a.dir
    data = b.dir
    await write('guide/intro.md', '# Intro\n\nWelcome to the widget manual.\n\n## Setup\n\nPlug in the widget.\n')
    await write('guide/retries.md', `# Retries\n\n## Policy\n\n${long(120)}\n`)
    await write('a/notes.md', '# Notes\n\nFirst notes file.\n')
    await write('b/notes.md', '# Notes\n\nSecond notes file.\n')
    engine = await Engine.open({ ...place.options, modelsDir: path.join(data, 'no-models') })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('imports, then a second import with no changes writes nothing', async () => {
    const first = await engine.importFolder(root, { collection: 'manual' })
    expect(first).toMatchObject({ collection: 'manual', imported: 4, unchanged: 0, failed: [] })
    expect(first.chunks_written).toBeGreaterThan(4)
    const second = await engine.importFolder(root, { collection: 'manual' })
    expect(second).toMatchObject({ imported: 0, unchanged: 4, chunks_written: 0, texts_embedded: 0, pruned: 0 })
    expect(second.chunks_total).toBe(first.chunks_total)
  })

  it('treats two files with the same name in different folders as different documents', async () => {
    const a = await chunksOf('a/notes.md')
    const b = await chunksOf('b/notes.md')
    expect(a).toHaveLength(1)
    expect(b).toHaveLength(1)
    expect(a[0]!.id).not.toBe(b[0]!.id)
  })

  it('reflects an edit exactly, keeping ids of untouched sections', async () => {
    const before = await chunksOf('guide/intro.md')
    await write(
      'guide/intro.md',
      '# Intro\n\nWelcome to the widget manual.\n\n## Setup\n\nPlug in the widget, then press the red button.\n',
    )
    const r = await engine.importFolder(root, { collection: 'manual' })
    expect(r.imported).toBe(1)
    const after = await chunksOf('guide/intro.md')
    expect(after.map((c) => c.id)).toEqual(before.map((c) => c.id))
    expect(after.find((c) => c.heading.endsWith('Setup'))!.text).toContain('red button')
    const hits = await engine.search('red button', { mode: 'keyword', k: 3 })
    expect(hits.results[0]!.path).toBe('guide/intro.md')
  })

  it('leaves no stale chunks when a document gets shorter', async () => {
    const before = await chunksOf('guide/retries.md')
    expect(before.length).toBeGreaterThan(2)
    await write('guide/retries.md', '# Retries\n\n## Policy\n\nRetry once.\n')
    await engine.importFolder(root, { collection: 'manual' })
    const after = await chunksOf('guide/retries.md')
    expect(after).toHaveLength(1)
    expect(after[0]!.text).toBe('Retry once.')
    const stale = await engine.search('sentence number explains', { mode: 'keyword', k: 5 })
    expect(stale.results.filter((h) => h.path === 'guide/retries.md' && h.text.includes('Sentence number'))).toHaveLength(0)
  })

  it('reflects a rename and a delete, and keeps BM25 statistics in step', async () => {
    await rename(path.join(root, 'a/notes.md'), path.join(root, 'a/renamed.md'))
    await rm(path.join(root, 'b/notes.md'))
    const r = await engine.importFolder(root, { collection: 'manual' })
    expect(r).toMatchObject({ imported: 1, pruned: 2 })
    expect(await chunksOf('a/notes.md')).toHaveLength(0)
    expect(await chunksOf('b/notes.md')).toHaveLength(0)
    expect(await chunksOf('a/renamed.md')).toHaveLength(1)
    const { rows } = await engine.db.query<{ stored: number; actual: number; len: number; actual_len: number }>(
      `SELECT c.chunk_count AS stored, (SELECT count(*)::int FROM chunks WHERE collection_id = c.id) AS actual,
              c.total_len::int AS len, (SELECT coalesce(sum(lex_len), 0)::int FROM chunks WHERE collection_id = c.id) AS actual_len
         FROM collections c WHERE id = 'manual'`,
    )
    expect(rows[0]!.stored).toBe(rows[0]!.actual)
    expect(rows[0]!.len).toBe(rows[0]!.actual_len)
    // Document frequencies equal a recount from the chunks themselves.
    const { rows: drift } = await engine.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT lexeme, count(*)::int AS df FROM chunks ch, unnest(ch.tsv) u WHERE ch.collection_id = 'manual' GROUP BY lexeme
       ) real FULL JOIN (SELECT lexeme, df FROM term_stats WHERE collection_id = 'manual') kept USING (lexeme)
       WHERE real.df IS DISTINCT FROM kept.df`,
    )
    expect(drift[0]!.n).toBe(0)
  })

  it('prunes nothing when a sync is cancelled before its walk reached the files', async () => {
    const before = await engine.catalog.list()
    // As docent watch does on Ctrl-C during a path-limited sync: the walk stops, having seen nothing.
    const r = await importFolder(engine.db, root, {
      collection: 'manual',
      embedder: null,
      tokenCounter: await engine.tokenCounter(),
      onlyPaths: ['a/renamed.md'],
      signal: AbortSignal.abort(),
    })
    expect(r).toMatchObject({ cancelled: true, pruned: 0 })
    expect(await chunksOf('a/renamed.md')).toHaveLength(1)
    expect(await engine.catalog.list()).toEqual(before)
  })

  it('survives a restart: the store reopens with the same content', async () => {
    const before = await engine.catalog.list()
    await engine.close()
    engine = await Engine.open({ ...place.options, modelsDir: path.join(data, 'no-models') })
    expect(await engine.catalog.list()).toEqual(before)
  })
}
