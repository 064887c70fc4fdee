import path from 'node:path'
import { benchCompare } from './compare'
import { benchImport } from './import'
import { benchQuery } from './query'
import { printMachine, writeReport } from './machine'

/**
 * `npm run bench [-- suite ...]`: prints tables with this machine's figures and a baseline in the
 * same run, and writes JSON under evals/reports/. Suites: import, query, compare, models,
 * responsiveness (default: all), and real (the real models from `npm run models:dev`; not in the
 * default set: --models DIR, default $DOCENT_REAL_MODELS or .models; --questions N, --answers N), quant
 * (fp32 against int8 weights of the real embedder: imports, then pipeline and raw onnxruntime throughput in
 * interleaved rounds; --models DIR, --rounds 5, --passages 64, --imports no), and mcp
 * (start-up time and idle memory of `docent mcp`, after `npm run build`; not in the default set: --runs N),
 * and open (where a new and an existing library spend their first seconds, fresh processes; --runs N),
 * and server (a PostgreSQL server beside PGlite: parallel importers, concurrent searchers, HNSW and
 * sizes; not in the default set: --database URL or $DOCENT_BENCH_DATABASE_URL, else it starts one
 * from .pg; --chunks N, default 10000; --import-chunks N an importer, default 5000, 0 to skip the import table; --importers 1,2,4;
 * --clients 8; --queries 200), and rls (what row-level security costs a reader of a team library: the
 * same searches with the policies on and off, a non-superuser owner and a reader role; --database as
 * for server; --chunks N, default 100000; --queries 200; --rounds 3), and wal (pg_wal of an embedded store during a large write, with and
 * without CHECKPOINT; --batches 120, --every 10).
 * Benchmarks are never timed assertions in tests.
 *
 * Options: --docs N (synthetic import corpus, default 10000), --tiers 10000,100000, --queries 200;
 * query only: --vectors-max N (larger tiers are keyword only, default 100000), --sql-max N (larger
 * tiers skip keyword search's SQL path, default 100000), --store DIR (keep each tier's store in
 * DIR/<chunks>/ and use it again: a 1M tier loads for an hour), --chunks-per-doc N (documents of N
 * chunks when a tier is loaded, default 10; 1000 loads a keyword-only tier about three times faster
 * through the same writer), --anchors 0 (no FTS5 or bm25s), --report NAME (JSON in
 * evals/reports/bench-NAME.json, default query). Set DOCENT_BM25S_VENV for the bm25s venv.
 */
const SUITES = ['compare', 'query', 'import', 'models', 'responsiveness'] as const

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const opt = (name: string, fallback: string) => {
    const i = args.indexOf(`--${name}`)
    return i >= 0 && args[i + 1] ? args[i + 1]! : fallback
  }
  const positional = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1]!.startsWith('--')))
  const suites = positional.length ? positional : [...SUITES]
  printMachine()
  for (const suite of suites) {
    let result: Record<string, unknown>
    switch (suite) {
      case 'import':
        result = await benchImport({ docs: Number(opt('docs', '10000')) })
        break
      case 'query':
        result = await benchQuery({
          tiers: opt('tiers', '10000,100000').split(',').map(Number),
          queries: Number(opt('queries', '200')),
          vectorsMax: Number(opt('vectors-max', '100000')),
          sqlMax: Number(opt('sql-max', '100000')),
          store: opt('store', '') || null,
          chunksPerDoc: Number(opt('chunks-per-doc', '10')),
          anchors: opt('anchors', '1') !== '0',
          onTier: async (partial) => void (await writeReport(opt('report', 'query'), partial)),
        })
        break
      case 'compare':
        result = await benchCompare()
        break
      case 'models': {
        const { benchModels } = await import('./models')
        result = await benchModels()
        break
      }
      case 'quant': {
        const { benchQuant } = await import('./quant')
        result = await benchQuant({
          models: path.resolve(opt('models', process.env['DOCENT_REAL_MODELS'] ?? '.models')),
          rounds: Number(opt('rounds', '5')),
          passages: Number(opt('passages', '64')),
          imports: opt('imports', 'yes') !== 'no',
        })
        break
      }
      case 'real': {
        const { benchReal } = await import('./real')
        result = await benchReal({
          models: path.resolve(opt('models', process.env['DOCENT_REAL_MODELS'] ?? '.models')),
          questions: Number(opt('questions', '40')),
          answers: Number(opt('answers', '8')),
        })
        break
      }
      case 'server': {
        const { benchServer } = await import('./server')
        result = await benchServer({
          database: opt('database', process.env['DOCENT_BENCH_DATABASE_URL'] ?? '') || null,
          chunks: Number(opt('chunks', '10000')),
          queries: Number(opt('queries', '200')),
          importChunks: Number(opt('import-chunks', '5000')),
          importers: opt('importers', '1,2,4').split(',').map(Number),
          clients: Number(opt('clients', '8')),
        })
        break
      }
      case 'rls': {
        const { benchRls } = await import('./rls')
        result = await benchRls({
          database: opt('database', process.env['DOCENT_BENCH_DATABASE_URL'] ?? '') || null,
          chunks: Number(opt('chunks', '100000')),
          queries: Number(opt('queries', '200')),
          rounds: Number(opt('rounds', '3')),
        })
        break
      }
      case 'open': {
        const { benchOpen } = await import('./open')
        result = await benchOpen({ runs: Number(opt('runs', '5')) })
        break
      }
      case 'mcp': {
        const { benchMcp } = await import('./mcp')
        result = await benchMcp({ runs: Number(opt('runs', '5')) })
        break
      }
      case 'wal': {
        const { benchWal } = await import('./wal')
        result = await benchWal({ batches: Number(opt('batches', '120')), every: Number(opt('every', '10')) })
        break
      }
      case 'responsiveness': {
        const { benchResponsiveness } = await import('./responsiveness')
        result = await benchResponsiveness({ docs: Number(opt('docs', '10000')) })
        break
      }
      default:
        throw new Error(`unknown bench suite "${suite}"; choose from ${SUITES.join(', ')}, real, open, mcp, server, rls, wal`)
    }
    const file = await writeReport(suite === 'query' ? opt('report', 'query') : suite, result)
    process.stdout.write(`(written to ${file})\n\n`)
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exitCode = 1
})
