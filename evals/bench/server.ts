import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { Engine } from '../../src/engine/engine'
import type { Queryable } from '../../src/engine/store/db'
import { keywordPostingsOf } from '../../src/engine/store/postings'
import { ensureVectorIndex, HNSW_SETTINGS, vectorIndexName } from '../../src/engine/store/vector-index'
import { resolveScope, type ResolvedScope } from '../../src/engine/retrieve/scope'
import { installPgserver, startPostgres, stopPostgres } from '../../src/test-support/pg-server'
import { repoRoot, tempDir } from '../../src/test-support/paths'
import { chunkSet, DIMS, makeQueries, MODEL, timedSearch, writeChunkSet, type BenchQuery, type SearchKind } from './corpus'
import { dirSizeMb, pct, printTable, r1 } from './machine'
import type { WorkerConfig } from './server-worker'

/**
 * `bench -- server`: a PostgreSQL server beside embedded PGlite, in the same run, on the synthetic
 * chunks of `bench -- query` written through the engine's own writer (precomputed 384-dimension
 * vectors, no embedding model). (1) Import throughput with 1, 2 and 4 importers, each its own
 * process and engine writing its own collection into a fresh database; PGlite has one writer per
 * data folder, so its row is one importer. (2) Keyword, vector and hybrid latency with 1 and 8
 * concurrent clients on the same store: PGlite serves one connection, so its 8 clients are 8 search
 * loops queued on one engine; the server is measured both as 8 loops on one engine's pool of 8 and
 * as 8 processes with an engine each. (3) HNSW build time and the sizes of the table, GIN and HNSW
 * indexes. The server is the one given (--database or DOCENT_BENCH_DATABASE_URL; its role needs
 * CREATEDB: each phase gets a fresh database, dropped after), or else one started from .pg (as
 * `npm run pg:dev` installs it) on a throwaway data folder, fsync on, stopped after.
 */
export interface ServerBenchOptions {
  database: string | null
  chunks: number
  queries: number
  importChunks: number
  importers: number[]
  clients: number
}

const KINDS: SearchKind[] = ['keyword', 'vector', 'hybrid']
const WORKER = path.join(repoRoot, 'evals/bench/server-worker.ts')
const load = () => r1(os.loadavg()[0]!)

/**
 * The server a bench runs on: the one given (--database), or else one started from .pg (as
 * `npm run pg:dev` installs it) on a throwaway data folder in `scratch`, fsync on; stop() ends it.
 */
export async function benchPostgres(database: string | null, scratch: string): Promise<{ url: string; stop: () => void }> {
  if (database) return { url: database, stop: () => {} }
  const install = path.join(repoRoot, '.pg')
  installPgserver(install, { log: (s) => process.stderr.write(`bench: ${s}\n`) })
  const data = path.join(scratch, 'pgdata')
  const { url } = await startPostgres(install, data)
  return { url, stop: () => stopPostgres(install, data) }
}

export async function benchServer(opts: ServerBenchOptions): Promise<Record<string, unknown>> {
  const scratch = await tempDir('docent-bench-server-')
  const { url, stop } = await benchPostgres(opts.database, scratch.dir)
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  const databases: string[] = []
  const freshDb = async (name: string) => {
    const db = `docent_bench_${name}_${process.pid}`
    await admin.query(`DROP DATABASE IF EXISTS ${db}`)
    // UTF-8 character classes, as the engine requires of a server database (store/pg.ts; UTF8_DATABASE in test-support/pg-test.ts).
    await admin.query(`CREATE DATABASE ${db} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'`)
    databases.push(db)
    const u = new URL(url!)
    u.pathname = `/${db}`
    return { name: db, url: u.toString() }
  }
  try {
    const imports = opts.importChunks > 0 ? await importPhase(opts, scratch.dir, freshDb, admin) : null
    const query = await queryPhase(opts, scratch.dir, (await freshDb('query')).url)
    return { server_bench: { options: opts, import: imports, ...query } }
  } finally {
    for (const db of databases) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined)
    await admin.end()
    stop()
    await scratch.cleanup()
  }
}

/** A client process (server-worker.ts): lines in, JSON lines out. */
function worker(cfg: WorkerConfig) {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(cfg)], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const queue: unknown[] = []
  const waiting: ((v: unknown) => void)[] = []
  let failed: Error | null = null
  const fail = (e: Error) => {
    failed = e
    for (const w of waiting.splice(0)) w(Promise.reject(e))
  }
  createInterface({ input: child.stdout }).on('line', (line) => {
    const v = JSON.parse(line) as unknown
    const w = waiting.shift()
    if (w) w(v)
    else queue.push(v)
  })
  child.on('exit', (code) => code !== 0 && fail(new Error(`bench worker exited with ${code}`)))
  return {
    next: <T>(): Promise<T> =>
      queue.length
        ? Promise.resolve(queue.shift() as T)
        : failed
          ? Promise.reject(failed)
          : new Promise((r) => waiting.push(r as never)),
    send: (line: string) => child.stdin.write(line + '\n'),
    exited: new Promise<void>((r) => child.on('exit', () => r())),
  }
}

/** Samples the server's backends of `db`: how many of `importers` wait for an advisory lock (the write turns of ADR 0010). */
function waitSampler(admin: pg.Client | null, db: string, importers: number) {
  let samples = 0
  let waiting = 0
  let busy = false
  const t = setInterval(() => {
    if (!admin || busy) return
    busy = true
    admin
      .query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
        [db],
      )
      .then(({ rows }) => {
        samples++
        waiting += Number(rows[0]!.n)
      })
      .catch(() => undefined)
      .finally(() => (busy = false))
  }, 100)
  return () => {
    clearInterval(t)
    return admin && samples ? Math.round((100 * waiting) / (samples * importers)) : null
  }
}

async function parallelImport(cfgs: WorkerConfig[], admin: pg.Client | null = null, db = '') {
  const ws = cfgs.map(worker)
  await Promise.all(ws.map((w) => w.next()))
  const loadAtStart = load()
  const sampler = waitSampler(admin, db, cfgs.length)
  for (const w of ws) w.send('go')
  const results = await Promise.all(ws.map((w) => w.next<{ start: number; end: number; chunks: number }>()))
  const waitShare = sampler()
  await Promise.all(ws.map((w) => w.exited))
  const start = Math.min(...results.map((r) => r.start))
  const end = Math.max(...results.map((r) => r.end))
  const chunks = results.reduce((a, r) => a + r.chunks, 0)
  const perImporter = results.map((r) => r1(r.chunks / ((r.end - r.start) / 1000)))
  return {
    chunks,
    seconds: r1((end - start) / 1000),
    chunks_per_s: r1(chunks / ((end - start) / 1000)),
    per_importer: perImporter,
    write_turn_wait_pct: waitShare,
    load_1m: loadAtStart,
  }
}

async function importPhase(
  opts: ServerBenchOptions,
  scratch: string,
  freshDb: (name: string) => Promise<{ name: string; url: string }>,
  admin: pg.Client,
) {
  const n = opts.importChunks
  const rows: Record<string, unknown>[] = []
  const pglite = await parallelImport([
    { mode: 'import', dataDir: path.join(scratch, 'import-pglite'), collection: 'import-0', chunks: n, seed: 1 },
  ])
  rows.push({ store: 'PGlite', importers: 1, ...pglite })
  for (const importers of opts.importers) {
    const db = await freshDb(`import${importers}`)
    // Migrate once before the clock starts, as a library that exists already.
    await (await Engine.open({ database: db.url, poolSize: 1 })).close()
    const r = await parallelImport(
      Array.from({ length: importers }, (_, k) => ({
        mode: 'import' as const,
        database: db.url,
        collection: `import-${k}`,
        chunks: n,
        seed: k + 1,
      })),
      admin,
      db.name,
    )
    rows.push({ store: 'server', importers, ...r })
    await admin.query(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`)
  }
  const base = rows.find((r) => r['store'] === 'server' && r['importers'] === 1)?.['chunks_per_s'] as number | undefined
  printTable(
    `Import throughput: each importer its own process and engine writing ${n.toLocaleString('en-US')} chunks (precomputed vectors, no model) into its own collection; fresh store each row`,
    [
      'store',
      'importers',
      'chunks',
      'wall s',
      'chunks/s total',
      'chunks/s per importer',
      'vs server 1 importer',
      'importers waiting for the write turn (sampled)',
      'load at start',
    ],
    rows.map((r) => [
      r['store'] === 'PGlite' ? 'PGlite (one writer per data folder)' : 'PostgreSQL server',
      r['importers'] as number,
      (r['chunks'] as number).toLocaleString('en-US'),
      r['seconds'] as number,
      r['chunks_per_s'] as number,
      (r['per_importer'] as number[]).join(' / '),
      base ? `${r1((r['chunks_per_s'] as number) / base)}×` : 'n/a',
      r['write_turn_wait_pct'] == null ? 'n/a' : `${r['write_turn_wait_pct'] as number}%`,
      r['load_1m'] as number,
    ]),
  )
  return rows
}

interface Store {
  name: string
  engine: Engine
  scope: ResolvedScope
  loadS: number
  hnswS: number
  sizes: Record<string, number | string>
  versions: Record<string, string>
}

async function openStore(name: string, engine: Engine, opts: ServerBenchOptions, dataDir: string | null): Promise<Store> {
  const set = chunkSet(opts.chunks, { vectors: true })
  process.stderr.write(`bench: loading ${opts.chunks} chunks into ${name} (load ${load()})\n`)
  let t = performance.now()
  await writeChunkSet(engine.db, 'bench', set)
  const loadS = r1((performance.now() - t) / 1000)
  process.stderr.write(`bench: building HNSW on ${name} (load ${load()})\n`)
  t = performance.now()
  await ensureVectorIndex(engine.db, MODEL, DIMS)
  const hnswS = r1((performance.now() - t) / 1000)
  await keywordPostingsOf(engine.db)!.warm()
  const scope = await resolveScope(engine.db, { collections: ['bench'], version: 'all' })
  const sizes = await storeSizes(engine.db)
  if (dataDir) sizes['data_folder_mb'] = await dirSizeMb(dataDir)
  const { rows } = await engine.db.query<{ pg: string; vector: string; mwm: string; workers: string }>(
    `SELECT current_setting('server_version') AS pg, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
            current_setting('maintenance_work_mem') AS mwm, current_setting('max_parallel_maintenance_workers') AS workers`,
  )
  const v = rows[0]!
  return {
    name,
    engine,
    scope,
    loadS,
    hnswS,
    sizes,
    versions: { postgres: v.pg, pgvector: v.vector, maintenance_work_mem: v.mwm, max_parallel_maintenance_workers: v.workers },
  }
}

async function storeSizes(db: Queryable): Promise<Record<string, number | string>> {
  const { rows } = await db.query<Record<string, string>>(
    `SELECT pg_table_size('chunks') AS table, pg_relation_size('chunks_tsv_gin') AS gin,
            pg_relation_size('${vectorIndexName(MODEL)}') AS hnsw, pg_total_relation_size('chunks') AS chunks_total,
            pg_database_size(current_database()) AS database`,
  )
  const mb = (b: string) => r1(Number(b) / 2 ** 20)
  const r = rows[0]!
  return {
    table_mb: mb(r['table']!),
    gin_mb: mb(r['gin']!),
    hnsw_mb: mb(r['hnsw']!),
    chunks_total_mb: mb(r['chunks_total']!),
    database_mb: mb(r['database']!),
  }
}

type Latencies = Record<SearchKind, number[]> & { qps: Record<SearchKind, number>; load_1m: number }

/** `clients` loops searching at once on one engine, each over its share of the queries. */
async function inProcess(store: Store, queries: BenchQuery[], clients: number): Promise<Latencies> {
  const out = { qps: {}, load_1m: load() } as Latencies
  for (const kind of KINDS) {
    const ms: number[] = []
    const t = performance.now()
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = c; i < queries.length; i += clients)
          ms.push(await timedSearch(store.engine.db, kind, queries[i]!, store.scope))
      }),
    )
    out[kind] = ms
    out.qps[kind] = r1(queries.length / ((performance.now() - t) / 1000))
  }
  return out
}

/** `clients` processes with an engine each (read-only, pool of 2), all running each kind at once. */
async function processes(url: string, queriesFile: string, total: number, clients: number): Promise<Latencies> {
  const per = Math.ceil(total / clients)
  const ws = Array.from({ length: clients }, (_, c) =>
    worker({ mode: 'search', database: url, queriesFile, from: c * per, count: per }),
  )
  await Promise.all(ws.map((w) => w.next()))
  const out = { qps: {}, load_1m: load() } as Latencies
  for (const kind of KINDS) {
    const t = performance.now()
    for (const w of ws) w.send(kind)
    const rs = await Promise.all(ws.map((w) => w.next<{ ms: number[] }>()))
    out[kind] = rs.flatMap((r) => r.ms)
    out.qps[kind] = r1(out[kind].length / ((performance.now() - t) / 1000))
  }
  for (const w of ws) w.send('done')
  await Promise.all(ws.map((w) => w.exited))
  return out
}

async function queryPhase(opts: ServerBenchOptions, scratch: string, url: string) {
  const pgliteDir = path.join(scratch, 'query-pglite')
  const server = await openStore('server', await Engine.open({ database: url, poolSize: opts.clients }), opts, null)
  const pglite = await openStore(
    'PGlite',
    await Engine.open({ dataDir: pgliteDir, modelsDir: path.join(scratch, 'none') }),
    opts,
    pgliteDir,
  )
  const queries = makeQueries(chunkSet(opts.chunks, { vectors: true }), opts.queries)
  const queriesFile = path.join(scratch, 'queries.json')
  await writeFile(queriesFile, JSON.stringify(queries.map((q) => ({ ...q, vector: Array.from(q.vector!) }))))
  const c = opts.clients
  const runs: { label: string; l: Latencies }[] = []
  const failures: string[] = []
  const step = async (label: string, f: () => Promise<Latencies>) => {
    process.stderr.write(`bench: ${label} (load ${load()})\n`)
    try {
      runs.push({ label, l: await f() })
    } catch (err) {
      // One failed step (a client that could not open) leaves the others' figures printed.
      failures.push(`${label}: ${err instanceof Error ? err.message : String(err)}`)
      process.stderr.write(`bench: ${failures.at(-1)}\n`)
    }
  }
  await step('PGlite, 1 client', () => inProcess(pglite, queries, 1))
  await step(`PGlite, ${c} clients queued on one engine (one connection)`, () => inProcess(pglite, queries, c))
  await step('server, 1 client', () => inProcess(server, queries, 1))
  await step(`server, ${c} clients on one engine's pool of ${c}`, () => inProcess(server, queries, c))
  await step(`server, ${c} client processes, an engine each`, () => processes(url, queriesFile, queries.length, c))
  await pglite.engine.close()
  await server.engine.close()

  const cell = (xs: number[]) => `${r1(pct(xs, 50))} / ${r1(pct(xs, 95))}`
  printTable(
    `Search latency on ${opts.chunks.toLocaleString('en-US')} chunks, ms p50 / p95 (${opts.queries} queries a kind in all, top 50; keyword from the postings in memory; queries/s = all clients together)`,
    ['clients', 'keyword', 'vector', 'hybrid', 'queries/s kw / vec / hyb', 'load at start'],
    runs.map(({ label, l }) => [
      label,
      cell(l.keyword),
      cell(l.vector),
      cell(l.hybrid),
      KINDS.map((k) => l.qps[k]).join(' / '),
      l.load_1m,
    ]),
  )
  printTable(
    `Load, HNSW build (m=${HNSW_SETTINGS.m}, ef_construction=${HNSW_SETTINGS.efConstruction}) and sizes, ${opts.chunks.toLocaleString('en-US')} chunks`,
    [
      'store',
      'versions',
      'load s',
      'chunks/s',
      'HNSW build s',
      'table MB',
      'GIN MB',
      'HNSW MB',
      'chunks + indexes MB',
      'database MB',
    ],
    [server, pglite].map((s) => [
      s.name,
      `PostgreSQL ${s.versions['postgres']}, pgvector ${s.versions['pgvector']}`,
      s.loadS,
      r1(opts.chunks / s.loadS),
      s.hnswS,
      s.sizes['table_mb']!,
      s.sizes['gin_mb']!,
      s.sizes['hnsw_mb']!,
      s.sizes['chunks_total_mb']!,
      s.sizes['database_mb']!,
    ]),
  )
  const f = (xs: number[]) => [r1(pct(xs, 50)), r1(pct(xs, 95)), r1(pct(xs, 99))]
  return {
    chunks: opts.chunks,
    failed_steps: failures,
    search: runs.map(({ label, l }) => ({
      clients: label,
      load_1m: l.load_1m,
      keyword_ms: f(l.keyword),
      vector_ms: f(l.vector),
      hybrid_ms: f(l.hybrid),
      queries_per_s: l.qps,
    })),
    stores: [server, pglite].map((s) => ({
      store: s.name,
      load_s: s.loadS,
      hnsw_build_s: s.hnswS,
      sizes: s.sizes,
      versions: s.versions,
    })),
  }
}
