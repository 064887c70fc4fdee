import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { tempDir } from '../../src/test-support/paths'
import { ensureVectorIndex, HNSW_SETTINGS, toVectorLiteral } from '../../src/engine/store/vector-index'
import { keywordPostingsOf } from '../../src/engine/store/postings'
import { pruningScratchBytes } from '../../src/engine/retrieve/keyword-pruned'
import { resolveScope } from '../../src/engine/retrieve/scope'
import { retrieveKeyword, sameRanking, type KeywordHit, type KeywordScoring } from '../../src/engine/retrieve/keyword'
import { retrieveVector } from '../../src/engine/retrieve/vector'
import { fuseRanks } from '../../src/engine/retrieve/fuse'
import { bm25sAnchor, fts5Anchor, type Anchor } from './anchors'
import { dirSizeMb, pct, printTable, r1, r3 } from './machine'
import { chunkIdOf, chunkSet, DIMS, K, makeQueries, MODEL, writeChunkSet } from './corpus'

/**
 * Query latency at 10k and 100k chunks (and larger tiers, keyword only) of synthetic text and
 * clustered vectors, written through the engine's own writer (so BM25 statistics, postings and the
 * HNSW index are the real ones). Keyword search is timed on both of its paths: the postings in
 * memory (what a running engine uses) and SQL (what it uses until they are built; the only path
 * before ADR 0009), with a check that both rank alike. From the postings it is timed both ways,
 * alternately on each query: pruned (what searches use) and every candidate scored in full (before
 * the pruning), with a check that both return the same hits. Anchors in the same run, on the same chunks
 * and queries: SQLite FTS5 bm25() and bm25s (anchors.ts). Vector baselines: an exact brute-force
 * scan in JavaScript and an exact scan in SQL (no index), for HNSW recall@10.
 */

export interface QueryBenchOptions {
  tiers: number[]
  queries: number
  /** Tiers above this many chunks have no vectors (no vector or hybrid figures): keyword growth only. */
  vectorsMax: number
  /** Tiers above this many chunks skip the SQL path (its tail takes seconds a query there). */
  sqlMax: number
  /**
   * Keep each tier's store in `<store>/<chunks>/` and use it again when it already holds the tier
   * (a 1M tier takes an hour to load); null: a temporary folder, removed after the tier.
   */
  store: string | null
  /**
   * Chunks a document when a tier is loaded (10: the layout of the figures in docs/benchmarks.md).
   * Larger documents load a keyword-only tier through the same writer several times faster.
   */
  chunksPerDoc: number
  /** Runs SQLite FTS5 and bm25s on the same chunks and queries (off: Docent's figures only). */
  anchors: boolean
  /** Called with the report so far after each tier, so a tier that fails late loses nothing before it. */
  onTier?: (partial: Record<string, unknown>) => Promise<void>
}

interface Tier {
  row: (string | number)[]
  cpuRow: (string | number)[]
  memRow: (string | number)[]
  vecRow: (string | number)[] | null
  result: Record<string, unknown>
}

export async function benchQuery(opts: QueryBenchOptions): Promise<Record<string, unknown>> {
  const tiers: Tier[] = []
  const failed: { chunks: number; error: string }[] = []
  const report = () => ({ query: tiers.map((t) => t.result), ...(failed.length ? { failed_tiers: failed } : {}) })
  for (const n of opts.tiers) {
    try {
      tiers.push(await runTier(n, opts))
    } catch (err) {
      // A larger tier can outgrow the machine; the tiers before it are still reported, and the failure is named.
      const error = err instanceof Error ? err.message : String(err)
      failed.push({ chunks: n, error })
      progress(n, `failed: ${error}`)
    }
    await opts.onTier?.(report())
  }
  const anchorsNote = (tiers[0]?.result['anchor_errors'] as string[] | undefined) ?? []
  printTable(
    `Keyword and hybrid query latency, ms p50 / p95 / p99 (${opts.queries} queries of 3-8 words of a chunk, top ${K}; anchors on the same chunks and queries)`,
    [
      'chunks',
      'Docent keyword',
      'Docent keyword, every candidate scored',
      'same hits',
      'Docent keyword, SQL path',
      'same top 50',
      'Docent hybrid',
      'SQLite FTS5 bm25()',
      'bm25s',
    ],
    tiers.map((t) => t.row),
  )
  for (const e of anchorsNote) process.stdout.write(`(${e})\n`)
  printTable(
    'Keyword search from the postings, CPU time of the process per search, ms p50 / p95 / p99 (the same searches as above; a busy machine adds its waits to the wall clock, not to this)',
    ['chunks', 'Docent keyword', 'every candidate scored'],
    tiers.map((t) => t.cpuRow),
  )
  printTable(
    'Memory and disk',
    [
      'chunks',
      'load s',
      'postings build s',
      'build / load',
      'postings MB',
      'scoring scratch MB',
      'RSS MB',
      'RSS growth for postings MB',
      'data folder MB',
      'GIN MB',
      'FTS5 MB',
      'bm25s index MB',
      'bm25s peak RSS MB',
    ],
    tiers.map((t) => t.memRow),
  )
  const vec = tiers.filter((t) => t.vecRow)
  if (vec.length)
    printTable(
      `Vector latency (ms; HNSW m=${HNSW_SETTINGS.m}, ef_construction=${HNSW_SETTINGS.efConstruction}, ef_search=${HNSW_SETTINGS.efSearch}, iterative scan relaxed_order)`,
      ['chunks', 'vector p50', 'p95', 'p99', 'exact JS p50', 'exact SQL p50', 'HNSW recall@10', 'exact SQL / HNSW p50'],
      vec.map((t) => t.vecRow!),
    )
  for (const f of failed) process.stdout.write(`(the ${f.chunks.toLocaleString('en-US')}-chunk tier failed: ${f.error})\n`)
  return report()
}

/** One line on stderr a phase, so a run of an hour shows where it is. */
function progress(chunks: number, what: string): void {
  process.stderr.write(
    `[bench query ${new Date().toISOString().slice(11, 19)}] ${chunks.toLocaleString('en-US')} chunks: ${what}\n`,
  )
}

const fmt = (xs: number[]) => (xs.length ? [r1(pct(xs, 50)), r1(pct(xs, 95)), r1(pct(xs, 99))] : null)
const r2 = (x: number) => Math.round(x * 100) / 100
const fmtFine = (xs: number[]) => (xs.length ? [r2(pct(xs, 50)), r2(pct(xs, 95)), r2(pct(xs, 99))] : null)
const cell = (xs: number[] | null | undefined) => (xs ? xs.map((x) => x.toLocaleString('en-US')).join(' / ') : 'n/a')

async function runTier(total: number, opts: QueryBenchOptions): Promise<Tier> {
  const withVectors = total <= opts.vectorsMax
  const withSql = total <= opts.sqlMax
  const data = opts.store
    ? { dir: path.join(opts.store, String(total)), cleanup: async () => undefined }
    : await tempDir('docent-bench-query-')
  const engine = await Engine.open({ dataDir: path.join(data.dir, 'db'), modelsDir: path.join(data.dir, 'none') })
  const set = chunkSet(total, { vectors: withVectors })
  const { texts, vectors } = set
  const { rows: have } = await engine.db.query<{ n: number }>(`SELECT coalesce(sum(chunk_count), 0)::int AS n FROM collections`)
  const reused = opts.store !== null && Number(have[0]!.n) === total && !withVectors
  let loadMs = NaN
  let indexMs = 0
  if (reused) progress(total, `using the store already in ${data.dir} (load time not measured in this run)`)
  else {
    if (Number(have[0]!.n) > 0) throw new Error(`${data.dir} holds another store: remove it or choose another --store`)
    progress(total, `loading${withVectors ? ' with vectors' : ', keyword only'}, ${opts.chunksPerDoc} chunks a document`)
    const t0 = performance.now()
    await writeChunkSet(engine.db, 'bench', set, opts.chunksPerDoc)
    loadMs = performance.now() - t0
    progress(total, `loaded in ${r1(loadMs / 1000)} s`)
    const t1 = performance.now()
    if (vectors) await ensureVectorIndex(engine.db, MODEL, DIMS)
    indexMs = performance.now() - t1
  }

  // The store's own layout (a reused store keeps the one it was loaded with): chunk ids depend on it.
  const { rows: layout } = await engine.db.query<{ per_doc: number }>(`SELECT max(chunk_count) AS per_doc FROM documents`)
  const perDoc = Number(layout[0]!.per_doc)

  // The postings a running engine searches: built once from the store (a search before they are
  // ready runs in SQL and starts the build; the bench waits for it instead).
  const rssBefore = process.memoryUsage.rss()
  const postings = keywordPostingsOf(engine.db)!
  const t2 = performance.now()
  await postings.warm()
  const buildMs = performance.now() - t2
  const rssAfter = process.memoryUsage.rss()
  const pstats = postings.stats()

  progress(total, `postings built in ${r1(buildMs / 1000)} s; querying`)
  const scope = await resolveScope(engine.db, { collections: ['bench'], version: 'all' })
  const queries = makeQueries(set, opts.queries)

  const kw: number[] = []
  const kwAll: number[] = []
  // CPU time of the process per search: on a busy machine the wall clock mostly shows the wait for a core.
  const kwCpu: number[] = []
  const kwAllCpu: number[] = []
  let sameHits = 0
  const kwSql: number[] = []
  const vec: number[] = []
  const hyb: number[] = []
  const exactJs: number[] = []
  const exactSql: number[] = []
  let agree = 0
  let recallSum = 0
  let recallSqlSum = 0
  for (const [qi, q] of queries.entries()) {
    // Pruned and every candidate scored, in turn first, so neither gains from the other's warm caches.
    const hits: Partial<Record<KeywordScoring, KeywordHit[]>> = {}
    for (const scoring of qi % 2 ? (['exhaustive', 'pruned'] as const) : (['pruned', 'exhaustive'] as const)) {
      const s = performance.now()
      const cpu = process.cpuUsage()
      hits[scoring] = await retrieveKeyword(engine.db, q.text, scope, K, { path: 'memory', scoring })
      const used = process.cpuUsage(cpu)
      ;(scoring === 'pruned' ? kw : kwAll).push(performance.now() - s)
      ;(scoring === 'pruned' ? kwCpu : kwAllCpu).push((used.user + used.system) / 1000)
    }
    const k = hits.pruned!
    if (JSON.stringify(k) === JSON.stringify(hits.exhaustive)) sameHits++
    let s: number
    if (withSql) {
      s = performance.now()
      const k2 = await retrieveKeyword(engine.db, q.text, scope, K, { path: 'sql' })
      kwSql.push(performance.now() - s)
      if (sameRanking(k, k2)) agree++
    }
    if (!q.vector || !vectors) continue
    s = performance.now()
    const v = await retrieveVector(engine.db, q.vector, MODEL, scope, K)
    vec.push(performance.now() - s)
    s = performance.now()
    const [k3, v3] = await Promise.all([
      retrieveKeyword(engine.db, q.text, scope, K, { path: 'memory' }),
      retrieveVector(engine.db, q.vector, MODEL, scope, K),
    ])
    fuseRanks({ keyword: k3, vector: v3 })
    hyb.push(performance.now() - s)

    s = performance.now()
    const exact = bruteForce(vectors, q.vector, 10)
    exactJs.push(performance.now() - s)
    s = performance.now()
    const { rows } = await engine.db.query<{ id: string }>(`SELECT id FROM chunks ORDER BY embedding <=> $1::vector LIMIT 10`, [
      toVectorLiteral(q.vector),
    ])
    exactSql.push(performance.now() - s)
    const exactIds = new Set(exact.map((i) => chunkIdOf('bench', i, perDoc)))
    recallSum += v.slice(0, 10).filter((h) => exactIds.has(h.chunk_id)).length / 10
    recallSqlSum += rows.filter((row) => exactIds.has(row.id)).length / 10
  }
  const { rows: sizes } = await engine.db.query<{ gin: string; stats: string }>(
    `SELECT pg_relation_size('chunks_tsv_gin') AS gin, pg_total_relation_size('term_stats') AS stats`,
  )
  const scratchBytes = pruningScratchBytes(postings)
  const rss = process.memoryUsage.rss()
  await engine.close()
  const dataMb = await dirSizeMb(path.join(data.dir, 'db'))

  const skipped: Anchor = { error: 'not run (--anchors 0)' }
  if (opts.anchors) progress(total, 'anchors: SQLite FTS5, then bm25s')
  const fts5 = opts.anchors
    ? await fts5Anchor(
        texts,
        queries.map((q) => q.text),
        data.dir,
      )
    : skipped
  const bm25s = opts.anchors
    ? await bm25sAnchor(
        texts,
        queries.map((q) => q.text),
        data.dir,
      )
    : skipped
  await data.cleanup()

  const n = queries.length
  const mb = (bytes: number) => r1(bytes / 2 ** 20)
  const recall = vectors ? r3(recallSum / n) : null
  const anchorErrors = [fts5.error && `FTS5: ${fts5.error}`, bm25s.error && `bm25s: ${bm25s.error}`].filter(Boolean) as string[]
  const anchor = (a: Anchor) => (a.error ? { error: a.error } : a)
  return {
    row: [
      total.toLocaleString('en-US'),
      cell(fmt(kw)),
      cell(fmt(kwAll)),
      `${sameHits}/${n}`,
      cell(fmt(kwSql)),
      withSql ? `${agree}/${n}` : 'n/a',
      cell(fmt(hyb)),
      cell(fts5.query_ms),
      cell(bm25s.query_ms),
    ],
    cpuRow: [total.toLocaleString('en-US'), cell(fmtFine(kwCpu)), cell(fmtFine(kwAllCpu))],
    memRow: [
      total.toLocaleString('en-US'),
      reused ? 'n/a' : r1(loadMs / 1000),
      r1(buildMs / 1000),
      reused ? 'n/a' : `${Math.round((100 * buildMs) / loadMs)}%`,
      mb(pstats.bytes),
      mb(scratchBytes),
      mb(rss),
      mb(rssAfter - rssBefore),
      dataMb,
      mb(Number(sizes[0]!.gin)),
      fts5.index_mb ?? 'n/a',
      bm25s.index_mb ?? 'n/a',
      bm25s.peak_rss_mb ?? 'n/a',
    ],
    vecRow: vectors
      ? [
          total.toLocaleString('en-US'),
          ...fmt(vec)!,
          r1(pct(exactJs, 50)),
          r1(pct(exactSql, 50)),
          recall!,
          r1(pct(exactSql, 50) / Math.max(pct(vec, 50), 0.01)),
        ]
      : null,
    result: {
      chunks: total,
      queries: n,
      load_s: reused ? null : r1(loadMs / 1000),
      store_reused: reused,
      vectors: !!vectors,
      hnsw_build_s: vectors ? r1(indexMs / 1000) : null,
      keyword_ms: fmt(kw),
      keyword_every_candidate_ms: fmt(kwAll),
      keyword_cpu_ms: fmtFine(kwCpu),
      keyword_every_candidate_cpu_ms: fmtFine(kwAllCpu),
      keyword_pruned_same_hits: sameHits / n,
      chunks_per_doc: perDoc,
      keyword_sql_path_ms: withSql ? fmt(kwSql) : null,
      keyword_paths_agree: withSql ? agree / n : null,
      vector_ms: fmt(vec),
      hybrid_ms: fmt(hyb),
      exact_js_ms: fmt(exactJs),
      exact_sql_ms: fmt(exactSql),
      hnsw_recall_at_10: recall,
      exact_sql_recall_check: vectors ? r3(recallSqlSum / n) : null,
      postings: {
        build_s: r1(buildMs / 1000),
        build_share_of_load: reused ? null : r3(buildMs / loadMs),
        terms: pstats.terms,
        postings: pstats.postings,
        typed_arrays_mb: mb(pstats.bytes),
        scoring_scratch_mb: mb(scratchBytes),
        rss_growth_mb: mb(rssAfter - rssBefore),
      },
      rss_mb: mb(rss),
      data_folder_mb: dataMb,
      gin_index_mb: mb(Number(sizes[0]!.gin)),
      term_stats_mb: mb(Number(sizes[0]!.stats)),
      anchors: { sqlite_fts5: anchor(fts5), bm25s: anchor(bm25s) },
      anchor_errors: anchorErrors,
    },
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
