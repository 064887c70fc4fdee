import { cp, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import { vectorIndexName } from '../store/vector-index'
import { INDEX_MODEL_KEY, readIndexModel } from './embedding-switch'
import { fixtureModels, mcpCorpus, tempDir } from '../../test-support/paths'

/**
 * Changing the embedding model (ADR 0007): two copies of the fixture model, "alpha" (CLS
 * pooling) and "beta" (mean pooling), give different vectors. Selecting beta keeps search on
 * alpha's vectors until beta's are complete; a cancelled switch leaves alpha's index untouched and
 * the next attempt resumes from the cache.
 */

async function installModel(models: string, name: string, pooling: 'cls' | 'mean') {
  const dir = path.join(models, 'embedding', name)
  await cp(path.join(fixtureModels, 'embedding', 'tiny-random-bert'), dir, { recursive: true })
  await writeFile(path.join(dir, 'docent.json'), JSON.stringify({ pooling, queryPrefix: '' }))
}

const QUERY = 'how does the client initialize the connection lifecycle'

describe('switching the embedding model', () => {
  const cleanups: (() => Promise<void>)[] = []
  let models: string
  let corpus: string
  let engine: Engine
  let alphaHits: { chunk_id: string; cosine: number | null }[]

  const modelsOfChunks = async () =>
    (
      await engine.db.query<{ m: string | null; n: number }>(
        'SELECT embedding_model AS m, count(*)::int AS n FROM chunks GROUP BY 1 ORDER BY 1',
      )
    ).rows
  const vectorHits = async () =>
    (await engine.search(QUERY, { mode: 'vector', k: 8 })).results.map((h) => ({ chunk_id: h.chunk_id, cosine: h.scores.cosine }))
  const indexes = async () =>
    (await engine.db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'chunks'`)).rows.map(
      (r) => r.indexname,
    )

  beforeAll(async () => {
    const m = await tempDir()
    const c = await tempDir()
    cleanups.push(m.cleanup, c.cleanup)
    models = m.dir
    corpus = c.dir
    await cp(path.join(mcpCorpus, 'specification/2025-06-18'), path.join(corpus, 'specification/2025-06-18'), { recursive: true })
    await installModel(models, 'alpha', 'cls')
    engine = await Engine.open({ dataDir: null, modelsDir: models })
    await engine.importFolder(corpus, { collection: 'mcp' })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('records the model the index was built with', async () => {
    const alpha = (await engine.embedder()).model!
    expect(alpha.id).toMatch(/^embedding\/alpha@/)
    expect(await readIndexModel(engine.db)).toEqual({ id: alpha.id, dims: alpha.dims })
    expect(await modelsOfChunks()).toEqual([{ m: alpha.id, n: expect.any(Number) }])
    alphaHits = await vectorHits()
    expect(alphaHits.length).toBe(8)
    expect(await engine.embeddingSwitchPending()).toBeNull()
  })

  it('keeps answering with the old model after another is selected', async () => {
    await installModel(models, 'beta', 'mean')
    await writeFile(path.join(models, 'settings.json'), JSON.stringify({ embedding: 'beta' }))
    await engine.reloadModels(['embedding'])
    expect((await engine.embedder()).model!.id).toMatch(/^embedding\/alpha@/)
    expect(await engine.embeddingSwitchPending()).toEqual({ from: expect.stringMatching(/^embedding\/alpha@/), to: 'beta' })
    expect(await vectorHits()).toEqual(alphaHits)
  })

  it('a cancelled switch leaves the old index in place, and search used it throughout', async () => {
    const controller = new AbortController()
    let duringBuild: Promise<{ chunk_id: string; cosine: number | null }[]> | null = null
    const report = await engine.switchEmbeddingModel({
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'embedding' && p.textsDone > 0 && !duringBuild) {
          duringBuild = vectorHits()
          controller.abort()
        }
      },
    })
    expect(report).toMatchObject({ switched: false, cancelled: true, to: expect.stringMatching(/^embedding\/beta@/) })
    expect(await duringBuild).toEqual(alphaHits)
    const alphaId = (await engine.embedder()).model!.id
    expect(await modelsOfChunks()).toEqual([{ m: alphaId, n: expect.any(Number) }])
    expect((await readIndexModel(engine.db))!.id).toBe(alphaId)
    expect(await vectorHits()).toEqual(alphaHits)
    expect(await indexes()).toContain(vectorIndexName(alphaId))
    const partial = (
      await engine.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM embedding_cache WHERE model_id LIKE 'embedding/beta@%'`,
      )
    ).rows[0]!.n
    expect(partial).toBeGreaterThan(0)
  })

  it('a completed switch swaps every vector at once and resumes from what was built', async () => {
    const before = (
      await engine.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM embedding_cache WHERE model_id LIKE 'embedding/beta@%'`,
      )
    ).rows[0]!.n
    const distinct = (await engine.db.query<{ n: number }>(`SELECT count(DISTINCT embed_hash)::int AS n FROM chunks`)).rows[0]!.n
    const alphaId = (await engine.embedder()).model!.id
    const report = (await engine.switchEmbeddingModel())!
    expect(report.switched).toBe(true)
    expect(report.texts_embedded).toBe(distinct - before)
    const betaId = report.to
    expect((await engine.embedder()).model!.id).toBe(betaId)
    expect(await modelsOfChunks()).toEqual([{ m: betaId, n: expect.any(Number) }])
    expect(await readIndexModel(engine.db)).toEqual({ id: betaId, dims: expect.any(Number) })
    expect(await indexes()).toContain(vectorIndexName(betaId))
    expect(await indexes()).not.toContain(vectorIndexName(alphaId))
    expect(await engine.embeddingSwitchPending()).toBeNull()
    const betaHits = await vectorHits()
    expect(betaHits.length).toBe(8)
    expect(betaHits).not.toEqual(alphaHits)
    expect(await checkIndexConsistency(engine.db)).toEqual([])
  })

  it('the next import re-chunks with the new tokenizer from the cache and equals a clean import with it', async () => {
    const report = await engine.importFolder(corpus, { collection: 'mcp' })
    expect(report.texts_embedded).toBe(0)
    const snapshot = async (e: Engine) =>
      (await e.db.query(`SELECT id, text, embedding_model, md5(embedding::text) AS v FROM chunks ORDER BY id`)).rows
    const onlyBeta = await tempDir()
    cleanups.push(onlyBeta.cleanup)
    await installModel(onlyBeta.dir, 'beta', 'mean')
    const fresh = await Engine.open({ dataDir: null, modelsDir: onlyBeta.dir })
    try {
      await fresh.importFolder(corpus, { collection: 'mcp' })
      expect(await snapshot(engine)).toEqual(await snapshot(fresh))
    } finally {
      await fresh.close()
    }
  })

  it('infers the index model of a database from before the record', async () => {
    const id = (await engine.embedder()).model!.id
    await engine.db.query('DELETE FROM settings WHERE key = $1', [INDEX_MODEL_KEY])
    expect(await readIndexModel(engine.db)).toEqual({ id, dims: expect.any(Number) })
  })
})
