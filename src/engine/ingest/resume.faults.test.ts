import { cp } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import type { ImportProgress } from './importer'
import { fixtureModels, mcpCorpus, tempDir } from '../../test-support/paths'
import { ingestAndKill } from '../../test-support/ingest-child'

/**
 * Crash-and-resume: a real `docent ingest` (with the fixture embedding model) is SIGKILLed at a
 * random point, several times; after each, the engine reopens, lists the import as unfinished,
 * and importing again completes it without re-embedding finished documents, leaving an index
 * equal to a clean import of the same folder. DOCENT_RESUME_SEED replays a run's kill points.
 */

const RUNS = 5

/** mulberry32: a tiny seeded generator, so a failing run can be replayed from its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function indexSnapshot(engine: Engine) {
  const chunks = (
    await engine.db.query(
      `SELECT id, path, heading, ordinal, position, text, embed_hash, embedding_model, md5(embedding::text) AS vector
         FROM chunks ORDER BY id`,
    )
  ).rows
  const docs = (await engine.db.query(`SELECT path, status, sha256, chunk_count, version, kind FROM documents ORDER BY path`))
    .rows
  return { chunks, docs }
}

const count = async (engine: Engine, sql: string) => Number((await engine.db.query<{ n: number }>(sql)).rows[0]!.n)

describe('an import killed at random points resumes to the same index', () => {
  const cleanups: (() => Promise<void>)[] = []
  let corpus: string
  let clean: Awaited<ReturnType<typeof indexSnapshot>>
  let cleanTexts = 0
  let files = 0

  beforeAll(async () => {
    const c = await tempDir()
    cleanups.push(c.cleanup)
    corpus = c.dir
    // One release of the spec and its guides: 37 documents, ~740 chunks.
    await cp(path.join(mcpCorpus, 'specification/2025-06-18'), path.join(corpus, 'specification/2025-06-18'), { recursive: true })
    await cp(path.join(mcpCorpus, 'docs/2025-06-18'), path.join(corpus, 'docs/2025-06-18'), { recursive: true })
    const engine = await Engine.open({ dataDir: null, modelsDir: fixtureModels })
    try {
      const progress: ImportProgress[] = []
      const report = await engine.importFolder(corpus, { collection: 'mcp', onProgress: (p) => progress.push(p) })
      expect(report.failed).toEqual([])
      files = report.imported
      cleanTexts = report.texts_embedded
      clean = await indexSnapshot(engine)
      expect(clean.chunks.every((c) => (c as { embedding_model: string | null }).embedding_model)).toBe(true)
      // ETA sanity on the clean run: mid-import, elapsed + ETA lands near the real total.
      const total = report.ms
      const mid = progress.filter(
        (p) => p.phase !== 'scanning' && p.etaMs !== null && p.filesDone >= files * 0.25 && p.filesDone <= files * 0.75,
      )
      expect(mid.length).toBeGreaterThan(0)
      const predicted = mid.map((p) => p.elapsedMs + p.etaMs!)
      console.log(
        `ETA check: import took ${total} ms; mid-import predictions ${Math.min(...predicted)}-${Math.max(...predicted)} ms`,
      )
      for (const p of predicted) {
        expect(p).toBeGreaterThan(total / 3)
        expect(p).toBeLessThan(total * 3)
      }
      expect(progress.at(-1)).toMatchObject({ phase: 'done', etaMs: 0 })
    } finally {
      await engine.close()
    }
  })
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  const seed = Number(process.env['DOCENT_RESUME_SEED'] ?? Date.now() % 1_000_000)
  const random = seeded(seed)
  const passed: string[] = []

  for (let run = 1; run <= RUNS; run++) {
    it(`run ${run}/${RUNS} (seed ${seed})`, async () => {
      const data = await tempDir()
      cleanups.push(data.cleanup)
      // Kill somewhere between the first written batch and most of the folder.
      const killAfterDocs = 1 + Math.floor(random() * Math.max(1, files * 0.5))
      const delayMs = Math.floor(random() * 800)
      const child = await ingestAndKill(corpus, {
        data: data.dir,
        models: fixtureModels,
        collection: 'mcp',
        killAfterDocs,
        delayMs,
      })

      // The kill points leave at least half the folder to go: the import must not have finished.
      // Check that the fault happened (our SIGKILL ended the child mid-import) before checking consistency.
      expect(child.signal, `ingest ended with code ${child.code} before the kill: no fault`).toBe('SIGKILL')
      expect(child.killed).toBe(true)
      expect(child.last?.phase).not.toBe('done')

      const engine = await Engine.open({ dataDir: data.dir, modelsDir: fixtureModels })
      try {
        expect(await checkIndexConsistency(engine.db)).toEqual([])
        expect(await engine.unfinishedImports()).toEqual([
          expect.objectContaining({ collection: 'mcp', root: corpus, state: 'interrupted' }),
        ])
        const done = await count(engine, `SELECT count(*)::int AS n FROM documents WHERE status = 'indexed'`)
        const cachedBefore = await count(engine, `SELECT count(*)::int AS n FROM embedding_cache`)

        // Documents were left to import: the kill interrupted the import, it did not follow it.
        expect(done).toBeLessThan(files)
        const resumed = await engine.importFolder(corpus, { collection: 'mcp' })
        expect(resumed.failed).toEqual([])
        // Finished documents are skipped; only the rest are read, chunked and written.
        expect(resumed.unchanged).toBe(done)
        expect(resumed.imported).toBe(files - done)
        // Nothing embedded twice: only texts the cache did not hold yet went to the model.
        expect(resumed.texts_embedded).toBe(cleanTexts - cachedBefore)
        expect(await engine.unfinishedImports()).toEqual([])
        expect(await checkIndexConsistency(engine.db)).toEqual([])
        expect(await indexSnapshot(engine)).toEqual(clean)
        const line = `killed ${delayMs} ms after ${killAfterDocs}+ docs (last progress: ${child.last?.imported ?? 0} written, ${child.last?.phase}); ${done} documents survived, ${cachedBefore} texts cached; resume imported ${resumed.imported}, skipped ${resumed.unchanged}, embedded ${resumed.texts_embedded}`
        passed.push(line)
        console.log(`crash-and-resume run ${run}: ${line}`)
      } finally {
        await engine.close()
      }
    })
  }

  it('all runs passed', () => {
    expect(passed).toHaveLength(RUNS)
  })
})
