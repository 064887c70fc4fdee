import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { tempDir } from '../../src/test-support/paths'
import { chunkId, documentId, sha256Hex } from '../../src/engine/store/ids'
import { markSynced, replaceDocument, upsertCollection, type ChunkRow } from '../../src/engine/store/writer'
import { ensureVectorIndex, HNSW_SETTINGS, toVectorLiteral } from '../../src/engine/store/vector-index'
import { resolveScope } from '../../src/engine/retrieve/scope'
import { retrieveKeyword } from '../../src/engine/retrieve/keyword'
import { retrieveVector } from '../../src/engine/retrieve/vector'
import { fuseRanks } from '../../src/engine/retrieve/fuse'
import { countWords, extractExactTerms } from '../../src/engine/retrieve/exact-terms'
import { pct, printTable, r1, r3 } from './machine'
import { clusteredVectors, normalise, rng, sentence, vocabulary, zipfSampler } from './synthetic'

/**
 * Query latency at 10k and 100k chunks of synthetic text and clustered vectors, written through
 * the engine's own writer (so BM25 statistics and the HNSW index are the real ones), and HNSW
 * recall@10 against exact search on the same vectors. Baselines in the same run: an exact
 * brute-force scan in JavaScript and an exact scan in SQL (no index).
 */
const DIMS = 384
const MODEL = 'bench/clustered-random@384'
const CHUNKS_PER_DOC = 10

interface Tier {
  chunks: number
  rows: (string | number)[]
  result: Record<string, unknown>
}

export async function benchQuery(opts: { tiers: number[]; queries: number }): Promise<Record<string, unknown>> {
  const tiers: Tier[] = []
  for (const n of opts.tiers) tiers.push(await runTier(n, opts.queries))
  printTable(
    `Query latency (${opts.queries} queries per tier; ms; HNSW m=${HNSW_SETTINGS.m}, ef_construction=${HNSW_SETTINGS.efConstruction}, ef_search=${HNSW_SETTINGS.efSearch}, iterative scan relaxed_order)`,
    [
      'chunks',
      'keyword p50',
      'p95',
      'p99',
      'vector p50',
      'p95',
      'p99',
      'hybrid p50',
      'p95',
      'p99',
      'exact JS p50',
      'exact SQL p50',
      'HNSW recall@10',
      'exact SQL / HNSW p50',
    ],
    tiers.map((t) => t.rows),
  )
  return { query: tiers.map((t) => t.result) }
}

async function runTier(total: number, queries: number): Promise<Tier> {
  const data = await tempDir('docent-bench-query-')
  const engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'none') })
  const r = rng(total)
  const words = vocabulary(30_000, 11)
  const sample = zipfSampler(words.length, r)
  const vectors = clusteredVectors(total, DIMS, Math.max(50, Math.round(total / 500)), 13)
  const texts: string[] = []
  const t0 = performance.now()
  await upsertCollection(engine.db, 'bench', '/bench')
  const versions = ['1.0', '2.0', null]
  for (let d = 0; d < total / CHUNKS_PER_DOC; d++) {
    const rel = `part-${Math.floor(d / 100)}/doc-${d}.md`
    const chunks: ChunkRow[] = []
    for (let c = 0; c < CHUNKS_PER_DOC; c++) {
      const i = d * CHUNKS_PER_DOC + c
      const text = Array.from({ length: 8 }, () => sentence(words, sample, 14)).join(' ')
      texts.push(text)
      const heading = `Doc ${d} > Section ${c}`
      chunks.push({
        id: chunkId('bench', rel, [heading], 0),
        ordinal: 0,
        heading,
        pageStart: null,
        pageEnd: null,
        text,
        embedHash: sha256Hex(text),
        tokenCount: 150,
        lexLen: countWords(text),
        exactTerms: extractExactTerms(text),
        embedding: vectors[i]!,
        embeddingModel: MODEL,
      })
    }
    await replaceDocument(
      engine.db,
      {
        id: documentId('bench', rel),
        collectionId: 'bench',
        path: rel,
        size: 0,
        mtimeMs: 0,
        sha256: sha256Hex(rel),
        version: versions[d % 3]!,
        kind: null,
        title: null,
        pageCount: null,
        chunker: 'bench',
      },
      chunks,
    )
  }
  await markSynced(engine.db, 'bench')
  const loadMs = performance.now() - t0
  const t1 = performance.now()
  await ensureVectorIndex(engine.db, MODEL, DIMS)
  const indexMs = performance.now() - t1

  const scope = await resolveScope(engine.db, { collections: ['bench'], version: 'all' })
  const qr = rng(99)
  const kw: number[] = []
  const vec: number[] = []
  const hyb: number[] = []
  const exactJs: number[] = []
  const exactSql: number[] = []
  let recallSum = 0
  let recallSqlSum = 0
  for (let q = 0; q < queries; q++) {
    // A question made of a few words of one chunk, and a vector near that chunk's.
    const target = Math.floor(qr() * total)
    const tw = texts[target]!.replace(/\./g, '').split(' ')
    const query = Array.from({ length: 4 }, () => tw[Math.floor(qr() * tw.length)]).join(' ')
    const qv = normalise(Float32Array.from(vectors[target]!, (x) => x + (qr() - 0.5) * 0.05))

    let s = performance.now()
    const k = await retrieveKeyword(engine.db, query, scope, 50)
    kw.push(performance.now() - s)
    s = performance.now()
    const v = await retrieveVector(engine.db, qv, MODEL, scope, 50)
    vec.push(performance.now() - s)
    s = performance.now()
    const [k2, v2] = await Promise.all([
      retrieveKeyword(engine.db, query, scope, 50),
      retrieveVector(engine.db, qv, MODEL, scope, 50),
    ])
    fuseRanks({ keyword: k2, vector: v2 })
    hyb.push(performance.now() - s)
    void k

    s = performance.now()
    const exact = bruteForce(vectors, qv, 10)
    exactJs.push(performance.now() - s)
    s = performance.now()
    const { rows } = await engine.db.query<{ id: string }>(`SELECT id FROM chunks ORDER BY embedding <=> $1::vector LIMIT 10`, [
      toVectorLiteral(qv),
    ])
    exactSql.push(performance.now() - s)
    const exactIds = new Set(exact.map((i) => chunkIdOf(i)))
    recallSum += v.slice(0, 10).filter((h) => exactIds.has(h.chunk_id)).length / 10
    recallSqlSum += rows.filter((row) => exactIds.has(row.id)).length / 10
  }
  await engine.close()
  await data.cleanup()
  const recall = r3(recallSum / queries)
  const fmt = (xs: number[]) => [r1(pct(xs, 50)), r1(pct(xs, 95)), r1(pct(xs, 99))]
  const exactSqlP50 = pct(exactSql, 50)
  const rowOut: (string | number)[] = [
    total.toLocaleString('en-US'),
    ...fmt(kw),
    ...fmt(vec),
    ...fmt(hyb),
    r1(pct(exactJs, 50)),
    r1(exactSqlP50),
    recall,
    r1(exactSqlP50 / Math.max(pct(vec, 50), 0.01)),
  ]
  return {
    chunks: total,
    rows: rowOut,
    result: {
      chunks: total,
      queries,
      load_s: r1(loadMs / 1000),
      hnsw_build_s: r1(indexMs / 1000),
      keyword_ms: fmt(kw),
      vector_ms: fmt(vec),
      hybrid_ms: fmt(hyb),
      exact_js_ms: fmt(exactJs),
      exact_sql_ms: fmt(exactSql),
      hnsw_recall_at_10: recall,
      exact_sql_recall_check: r3(recallSqlSum / queries),
    },
  }

  function chunkIdOf(i: number): string {
    const d = Math.floor(i / CHUNKS_PER_DOC)
    const c = i % CHUNKS_PER_DOC
    return chunkId('bench', `part-${Math.floor(d / 100)}/doc-${d}.md`, [`Doc ${d} > Section ${c}`], 0)
  }
}

function bruteForce(vectors: Float32Array[], q: Float32Array, k: number): number[] {
  const best: { i: number; s: number }[] = []
  for (let i = 0; i < vectors.length; i++) {
    const v = vectors[i]!
    let dot = 0
    for (let d = 0; d < v.length; d++) dot += v[d]! * q[d]!
    if (best.length < k || dot > best[best.length - 1]!.s) {
      best.push({ i, s: dot })
      best.sort((a, b) => b.s - a.s)
      if (best.length > k) best.pop()
    }
  }
  return best.map((b) => b.i)
}
