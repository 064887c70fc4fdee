import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { fixtureModels, tempDir } from '../../test-support/paths'
import type { SearchMode } from '../../shared/search'
import { storeBackends, type StoreBackend } from '../../test-support/backends'

/**
 * Contract: a scope selects the same chunk ids whichever retriever applies it. Every chunk in this
 * corpus mentions "widget", so with a large k each retriever must return exactly the in-scope set.
 */
for (const backend of storeBackends)
  describe.skipIf(backend.skip)(`scope filters are identical across retrievers (${backend.name})`, () => suite(backend))

function suite(backend: StoreBackend): void {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []
  const files: Record<string, string> = {
    'spec/2024-01-01/widget.md': '# Widget\n\nThe widget supports pairing.\n\n## Reset\n\nHold the widget button.\n',
    // Identical text in two releases: two chunks with their own versions, found as one result that names the other.
    'spec/2025-01-01/widget.md': '# Widget\n\nThe widget supports pairing.\n\n## Reset\n\nHold the widget button.\n',
    'spec/2025-01-01/sync.md': '# Sync\n\nThe widget syncs hourly.\n',
    'spec/draft/widget.md': '# Widget\n\nThe widget supports mesh pairing.\n',
    'guide/faq.md': '# FAQ\n\nIs the widget waterproof? Yes.\n',
  }

  beforeAll(async () => {
    const corpus = await tempDir()
    const data = await backend.place()
    cleanups.push(corpus.cleanup, data.cleanup)
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(corpus.dir, rel)), { recursive: true })
      await writeFile(path.join(corpus.dir, rel), text)
    }
    engine = await Engine.open({ ...data.options, modelsDir: fixtureModels })
    const r = await engine.importFolder(corpus.dir, { collection: 'widgets' })
    expect(r.failed).toEqual([])
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  async function expected(allowed: (v: string | null) => boolean): Promise<string[]> {
    const { rows } = await engine.db.query<{ id: string; version: string | null }>('SELECT id, version FROM chunks')
    return rows
      .filter((r) => allowed(r.version))
      .map((r) => r.id)
      .sort()
  }

  const cases: [string, (v: string | null) => boolean][] = [
    ['all', () => true],
    ['latest', (v) => v === null || v === '2025-01-01'],
    ['2024-01-01', (v) => v === null || v === '2024-01-01'],
    ['draft', (v) => v === null || v === 'draft'],
  ]

  for (const [version, allowed] of cases) {
    it(`version "${version}"`, async () => {
      const want = await expected(allowed)
      expect(want.length).toBeGreaterThan(0)
      for (const mode of ['keyword', 'vector', 'hybrid'] as SearchMode[]) {
        const res = await engine.search('widget', { scope: { collections: ['widgets'], version }, mode, k: 100 })
        expect(res.degraded, `${mode}: ${res.notices.join(' ')}`).toBe(false)
        // A copy of a section in another release is folded into its best-ranked copy (same-text.ts), which names it.
        const found = res.results.flatMap((h) => [h.chunk_id, ...(h.same_in ?? []).map((s) => s.chunk_id)])
        expect(found.sort(), `${mode} / ${version}`).toEqual(want)
      }
    })
  }

  it('keeps each release of identical text: one result with its version, naming the other with its own', async () => {
    const res = await engine.search('hold the widget button', {
      scope: { collections: ['widgets'], version: 'all' },
      mode: 'hybrid',
      k: 10,
    })
    const reset = res.results.filter((h) => h.heading === 'Widget > Reset')
    expect(reset).toHaveLength(1)
    const versions = [reset[0]!.version, ...(reset[0]!.same_in ?? []).map((s) => s.version)]
    expect(versions.sort()).toEqual(['2024-01-01', '2025-01-01'])
    expect(reset[0]!.same_in![0]!.path).not.toBe(reset[0]!.path)
  })

  it('reports cosine similarity in [-1, 1] and keeps each retriever rank', async () => {
    const res = await engine.search('widget pairing', {
      scope: { collections: ['widgets'], version: 'all' },
      mode: 'hybrid',
      k: 5,
    })
    for (const h of res.results) {
      if (h.scores.cosine !== null) expect(Math.abs(h.scores.cosine)).toBeLessThanOrEqual(1.0001)
      expect(h.scores.keyword_rank !== null || h.scores.vector_rank !== null).toBe(true)
      expect(h.scores.rrf).not.toBeNull()
    }
  })
}
