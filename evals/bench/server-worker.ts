import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { keywordPostingsOf } from '../../src/engine/store/postings'
import { resolveScope } from '../../src/engine/retrieve/scope'
import { chunkSet, timedSearch, writeChunkSet, type BenchQuery, type SearchKind } from './corpus'

/**
 * One client of `bench -- server`, in its own process (PGlite and Node run one thread each): an
 * importer writing its own collection, or a searcher with its own engine. It opens and prepares,
 * prints {"ready":true}, then runs each step when the parent writes a line ("go" or a search kind)
 * and prints its result as one JSON line, so all clients start each step together.
 */
export type WorkerConfig =
  | { mode: 'import'; database?: string; dataDir?: string; collection: string; chunks: number; seed: number }
  | { mode: 'search'; database: string; queriesFile: string; from: number; count: number }

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2]!) as WorkerConfig
  const say = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n')
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  const next = async () => ((await lines.next()).value as string | undefined)?.trim()
  if (cfg.mode === 'import') {
    const engine = await Engine.open(
      cfg.database
        ? { database: cfg.database, poolSize: 2 }
        : { dataDir: cfg.dataDir!, modelsDir: path.join(cfg.dataDir!, 'none') },
    )
    const set = chunkSet(cfg.chunks, { vectors: true, seed: cfg.seed })
    say({ ready: true })
    await next()
    const start = Date.now()
    await writeChunkSet(engine.db, cfg.collection, set)
    const end = Date.now()
    await engine.close()
    say({ start, end, chunks: cfg.chunks })
    return
  }
  const engine = await Engine.open({ database: cfg.database, readOnly: true, poolSize: 2 })
  await keywordPostingsOf(engine.db)!.warm()
  const scope = await resolveScope(engine.db, { collections: ['bench'], version: 'all' })
  const all = JSON.parse(readFileSync(cfg.queriesFile, 'utf8')) as { text: string; vector: number[]; target: number }[]
  const queries: BenchQuery[] = all
    .slice(cfg.from, cfg.from + cfg.count)
    .map((q) => ({ ...q, vector: Float32Array.from(q.vector) }))
  say({ ready: true })
  for (let kind = await next(); kind && kind !== 'done'; kind = await next()) {
    const ms: number[] = []
    for (const q of queries) ms.push(await timedSearch(engine.db, kind as SearchKind, q, scope))
    say({ kind, ms })
  }
  await engine.close()
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`server-worker: ${err instanceof Error ? err.stack : String(err)}\n`)
    process.exit(1)
  },
)
