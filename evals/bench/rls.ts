import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { Engine } from '../../src/engine/engine'
import { grantRead, readableCollections } from '../../src/engine/store/access'
import { keywordPostingsOf } from '../../src/engine/store/postings'
import { ensureVectorIndex } from '../../src/engine/store/vector-index'
import { retrieveKeyword } from '../../src/engine/retrieve/keyword'
import { retrieveVector } from '../../src/engine/retrieve/vector'
import { resolveScope, type ResolvedScope } from '../../src/engine/retrieve/scope'
import { tempDir } from '../../src/test-support/paths'
import { chunkSet, DIMS, K, makeQueries, MODEL, timedSearch, writeChunkSet, type BenchQuery } from './corpus'
import { pct, printTable, r1 } from './machine'
import { benchPostgres } from './server'

/**
 * `bench -- rls`: what row-level security (migration 8, ADR 0011) costs a reader of a team library.
 * One library on a PostgreSQL server, owned by a non-superuser importer role (a superuser would
 * bypass the policies), with two collections: `bench` (--chunks, default 100,000 synthetic chunks
 * of `bench -- query`, with vectors and HNSW) and `other` (a tenth of that), which the reader may
 * not read. A reader role is granted `bench` as docs/postgres.md says, and searches it through its
 * own engine: keyword from the postings in memory (loaded through the policies), keyword in SQL,
 * vector and hybrid. The same reader, the same connection and the same queries are timed with the
 * policies on and then off (the owner's ALTER TABLE … DISABLE ROW LEVEL SECURITY on every table
 * that has them), in alternating rounds so that drift of the machine falls on both; the owner's
 * own searches (full access, policies on) are a third row. Results are checked equal across the
 * modes, so the figures compare the same work.
 */
export interface RlsBenchOptions {
  database: string | null
  chunks: number
  queries: number
  rounds: number
}

type Kind = 'keyword' | 'keyword_sql' | 'vector' | 'hybrid'
const KINDS: Kind[] = ['keyword', 'keyword_sql', 'vector', 'hybrid']
const load = () => r1(os.loadavg()[0]!)

function withUser(url: string, user: string, password: string, db?: string): string {
  const u = new URL(url)
  u.username = user
  u.password = password
  if (db) u.pathname = `/${db}`
  return u.toString()
}

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await c.query(text)
  } finally {
    await c.end()
  }
}

async function timed(engine: Engine, kind: Kind, q: BenchQuery, scope: ResolvedScope): Promise<number> {
  if (kind !== 'keyword_sql') return timedSearch(engine.db, kind, q, scope)
  const s = performance.now()
  await retrieveKeyword(engine.db, q.text, scope, K, { path: 'sql' })
  return performance.now() - s
}

/** The chunk ids the SQL searches (keyword and vector) return for some queries, as sets, to check the modes did the same work. */
async function resultIds(
  engine: Engine,
  queries: BenchQuery[],
  scope: ResolvedScope,
): Promise<{ keyword: string[]; vector: string[] }> {
  const out = { keyword: [] as string[], vector: [] as string[] }
  for (const q of queries.slice(0, 20)) {
    const kw = await retrieveKeyword(engine.db, q.text, scope, K, { path: 'sql' })
    const vec = await retrieveVector(engine.db, q.vector!, MODEL, scope, K)
    out.keyword.push(
      kw
        .map((h) => h.chunk_id)
        .sort()
        .join(','),
    )
    out.vector.push(
      vec
        .map((h) => h.chunk_id)
        .sort()
        .join(','),
    )
  }
  return out
}

/** The share of queries whose top-K set is the same in both runs. */
function sameShare(a: string[], b: string[]): number {
  return a.length ? Math.round((a.filter((x, i) => x === b[i]).length / a.length) * 100) / 100 : 1
}

export async function benchRls(opts: RlsBenchOptions): Promise<Record<string, unknown>> {
  const scratch = await tempDir('docent-bench-rls-')
  const { url, stop } = await benchPostgres(opts.database, scratch.dir)
  const tag = `${process.pid}`
  const db = `docent_bench_rls_${tag}`
  const owner = `docent_bench_owner_${tag}`
  const reader = `docent_bench_reader_${tag}`
  const engines: Engine[] = []
  try {
    await sql(url, `CREATE DATABASE ${db} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'`)
    await sql(url, `CREATE ROLE ${owner} LOGIN PASSWORD 'owner' CREATEROLE; CREATE ROLE ${reader} LOGIN PASSWORD 'reader'`)
    const superDb = withUser(url, new URL(url).username, decodeURIComponent(new URL(url).password), db)
    await sql(superDb, `CREATE EXTENSION IF NOT EXISTS vector; GRANT CREATE, USAGE ON SCHEMA public TO ${owner}`)
    const ownerUrl = withUser(url, owner, 'owner', db)
    const readerUrl = withUser(url, reader, 'reader', db)

    const own = await Engine.open({ database: ownerUrl, modelsDir: path.join(scratch.dir, 'none') })
    engines.push(own)
    const set = chunkSet(opts.chunks, { vectors: true })
    process.stderr.write(`bench: loading ${opts.chunks} chunks (load ${load()})\n`)
    let t = performance.now()
    await writeChunkSet(own.db, 'bench', set)
    await writeChunkSet(own.db, 'other', chunkSet(Math.max(1000, Math.round(opts.chunks / 10)), { vectors: true, seed: 7 }))
    const loadS = r1((performance.now() - t) / 1000)
    process.stderr.write(`bench: building HNSW (load ${load()})\n`)
    t = performance.now()
    await ensureVectorIndex(own.db, MODEL, DIMS)
    const hnswS = r1((performance.now() - t) / 1000)

    // The grants of docs/postgres.md ("Permissions"), then the reader's read role for `bench` only.
    await sql(superDb, `GRANT CONNECT ON DATABASE ${db} TO ${reader}; GRANT USAGE ON SCHEMA public TO ${reader}`)
    await sql(ownerUrl, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${reader}`)
    await grantRead(own.db, reader, 'bench')
    await sql(superDb, 'ANALYZE')

    const rd = await Engine.open({ database: readerUrl, modelsDir: path.join(scratch.dir, 'none'), poolSize: 2 })
    engines.push(rd)
    const readable = await readableCollections(rd.db)
    if (JSON.stringify(readable) !== '["bench"]')
      throw new Error(`the reader should read bench alone, reads ${JSON.stringify(readable)}`)
    const hidden = await rd.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM chunks WHERE collection_id = 'other'`)
    if (hidden.rows[0]!.n !== 0) throw new Error('the policies let the reader see the other collection')
    await keywordPostingsOf(rd.db)!.warm()
    await keywordPostingsOf(own.db)!.warm()
    const scopeOf = (e: Engine) => resolveScope(e.db, { collections: ['bench'], version: 'all' })
    const readerScope = await scopeOf(rd)
    const ownerScope = await scopeOf(own)
    const queries = makeQueries(set, opts.queries)

    const { rows: tables } = await own.db.query<{ t: string }>(
      `SELECT relname AS t FROM pg_class WHERE relkind = 'r' AND relrowsecurity AND relnamespace = 'public'::regnamespace ORDER BY 1`,
    )
    const policies = async (on: boolean) => {
      for (const { t } of tables) await own.db.exec(`ALTER TABLE ${t} ${on ? 'ENABLE' : 'DISABLE'} ROW LEVEL SECURITY`)
      // Without the policies the reader's store mark counts the other collection's rows too, so
      // its postings catch up (reading nothing it may not read: the scope keeps to bench) first.
      await keywordPostingsOf(rd.db)!.warm()
    }

    type Mode = 'reader, policies on' | 'reader, policies off' | 'owner (full access), policies on'
    const ms: Record<Mode, Record<Kind, number[]>> = {} as never
    const runMode = async (mode: Mode, e: Engine, scope: ResolvedScope) => {
      const into = (ms[mode] ??= { keyword: [], keyword_sql: [], vector: [], hybrid: [] })
      for (const q of queries.slice(0, 5)) for (const k of KINDS) await timed(e, k, q, scope) // warm the plans
      // Keyword search in SQL takes hundreds of ms at 100k chunks: a quarter of the queries.
      for (const k of KINDS)
        for (const q of k === 'keyword_sql' ? queries.slice(0, Math.ceil(queries.length / 4)) : queries)
          into[k].push(await timed(e, k, q, scope))
    }
    const same: Record<string, { keyword: string[]; vector: string[] }> = {}
    for (let round = 0; round < opts.rounds; round++) {
      process.stderr.write(`bench: round ${round + 1} of ${opts.rounds}, policies on (load ${load()})\n`)
      await policies(true)
      await runMode('reader, policies on', rd, readerScope)
      same['on'] ??= await resultIds(rd, queries, readerScope)
      await runMode('owner (full access), policies on', own, ownerScope)
      process.stderr.write(`bench: round ${round + 1} of ${opts.rounds}, policies off (load ${load()})\n`)
      await policies(false)
      await runMode('reader, policies off', rd, readerScope)
      same['off'] ??= await resultIds(rd, queries, readerScope)
    }
    await policies(true)
    // HNSW with a filter is approximate: the policy's filter can change which neighbours a scan
    // visits, so the vector sets are reported, not required equal; keyword in SQL is exact.
    const sameResults = {
      keyword: sameShare(same['on']!.keyword, same['off']!.keyword),
      vector: sameShare(same['on']!.vector, same['off']!.vector),
    }

    const modes = Object.keys(ms) as Mode[]
    const off = ms['reader, policies off']
    const cell = (xs: number[]) => `${r1(pct(xs, 50))} / ${r1(pct(xs, 95))}`
    const ratio = (xs: number[], base: number[]) => (Math.round((pct(xs, 95) / pct(base, 95)) * 100) / 100).toFixed(2)
    printTable(
      `Search latency of a reader with row-level security on and off, ${opts.chunks.toLocaleString('en-US')} chunks readable ` +
        `(+ ${Math.round(opts.chunks / 10).toLocaleString('en-US')} not), ms p50 / p95, ${opts.queries} queries × ${opts.rounds} rounds a kind (keyword in SQL: a quarter of them), top ${K}, 1 client`,
      ['who', 'keyword (memory)', 'keyword (SQL)', 'vector', 'hybrid', 'hybrid p95 ÷ policies off'],
      modes.map((m) => [
        m,
        cell(ms[m].keyword),
        cell(ms[m].keyword_sql),
        cell(ms[m].vector),
        cell(ms[m].hybrid),
        ratio(ms[m].hybrid, off.hybrid),
      ]),
    )
    process.stdout.write(`load ${loadS} s, HNSW build ${hnswS} s; tables with policies: ${tables.map((r) => r.t).join(', ')}\n`)
    process.stdout.write(
      `the same top-${K} set with the policies on and off (20 queries): keyword in SQL ${sameResults.keyword * 100}%, vector ${sameResults.vector * 100}%\n`,
    )
    const f = (xs: number[]) => [r1(pct(xs, 50)), r1(pct(xs, 95)), r1(pct(xs, 99))]
    return {
      rls_bench: {
        options: opts,
        load_s: loadS,
        hnsw_build_s: hnswS,
        tables_with_policies: tables.map((r) => r.t),
        same_results_on_off: sameResults,
        modes: modes.map((m) => ({
          who: m,
          keyword_memory_ms: f(ms[m].keyword),
          keyword_sql_ms: f(ms[m].keyword_sql),
          vector_ms: f(ms[m].vector),
          hybrid_ms: f(ms[m].hybrid),
          hybrid_p95_vs_off: Number(ratio(ms[m].hybrid, off.hybrid)),
        })),
      },
    }
  } finally {
    for (const e of engines.reverse()) await e.close().catch(() => undefined)
    await sql(url, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined)
    await sql(
      url,
      `DROP ROLE IF EXISTS ${reader}; DROP ROLE IF EXISTS docent_${db}_read_bench; DROP ROLE IF EXISTS ${owner}`,
    ).catch(() => undefined)
    stop()
    await scratch.cleanup()
  }
}
