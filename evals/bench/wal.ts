import path from 'node:path'
import { openPGlite } from '../../src/engine/store/db'
import { tempDir } from '../../src/test-support/paths'
import { dirSizeMb, printTable } from './machine'

/**
 * The write-ahead log of an embedded store during a large write, with and without CHECKPOINT.
 * PGlite runs no checkpointer process, so nothing recycles pg_wal until the store closes; the
 * engine checkpoints every 500 documents of an import and after each sync (store/writer.ts).
 * Plain INSERTs (`batches` transactions of 20,000 rows of about 1 KB) stand in for an import's
 * document transactions, so the log grows past max_wal_size (1 GB) in about a minute.
 */
export async function benchWal(opts: { batches: number; every: number }): Promise<Record<string, unknown>> {
  const runs: Record<string, unknown>[] = []
  const rows: (string | number)[][] = []
  for (const every of [0, opts.every]) {
    const d = await tempDir('docent-bench-wal-')
    const dir = path.join(d.dir, 'db')
    const db = await openPGlite(dir)
    await db.exec('CREATE TABLE t (id int, body text)')
    const samples: number[] = []
    let peak = 0
    const t0 = performance.now()
    for (let b = 1; b <= opts.batches; b++) {
      await db.query(
        `INSERT INTO t SELECT g, repeat(md5(g::text), 30) FROM generate_series(${b * 20000}, ${b * 20000 + 19999}) g`,
      )
      if (every && b % every === 0) await db.exec('CHECKPOINT')
      const wal = Math.round(await dirSizeMb(path.join(dir, 'pg_wal')))
      peak = Math.max(peak, wal)
      if (b % Math.max(1, Math.floor(opts.batches / 4)) === 0) samples.push(wal)
    }
    const seconds = (performance.now() - t0) / 1000
    const table = await tableMb(db)
    await db.close()
    const closed = Math.round(await dirSizeMb(path.join(dir, 'pg_wal')))
    await d.cleanup()
    const label = every ? `CHECKPOINT every ${every} transactions` : 'no CHECKPOINT (before)'
    runs.push({
      checkpoint_every: every || null,
      seconds: Math.round(seconds),
      table_mb: table,
      pg_wal_mb_samples: samples,
      pg_wal_peak_mb: peak,
      pg_wal_after_close_mb: closed,
    })
    rows.push([label, Math.round(seconds), table, samples.join(' → '), peak, closed])
  }
  printTable(
    `pg_wal of an embedded store (PGlite) while ${opts.batches} transactions write about ${opts.batches * 20} MB`,
    ['writes', 'seconds', 'table MB', 'pg_wal MB at 1/4, 2/4, 3/4, end', 'pg_wal peak MB', 'pg_wal after close MB'],
    rows,
  )
  return { wal: runs }
}

async function tableMb(db: Awaited<ReturnType<typeof openPGlite>>): Promise<number> {
  const { rows } = await db.query<{ b: string }>(`SELECT pg_total_relation_size('t') AS b`)
  return Math.round(Number(rows[0]!.b) / 2 ** 20)
}
