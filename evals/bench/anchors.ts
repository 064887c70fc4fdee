import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { repoRoot } from '../../src/test-support/paths'
import { pct, r1 } from './machine'

/**
 * The anchors the keyword latency is read against, on the query bench's own chunks and queries:
 * SQLite FTS5 ranked by bm25() (better-sqlite3, in this process; what GPT4All uses for its
 * keyword side) and bm25s (precomputed sparse scores in memory, Python, from a throw-away venv).
 * Either one that cannot run says why in `error`; Docent's figures are printed all the same.
 */
export interface Anchor {
  build_s?: number
  query_ms?: number[]
  index_mb?: number
  peak_rss_mb?: number
  version?: string
  error?: string
}

const K = 50
export const BM25S_VENV = process.env['DOCENT_BM25S_VENV'] ?? '/tmp/venv-bm25s'

interface SqliteDb {
  exec(sql: string): void
  prepare(sql: string): { run(...a: unknown[]): unknown; all(...a: unknown[]): unknown[]; get(...a: unknown[]): unknown }
  transaction(fn: () => void): () => void
  close(): void
}

/** FTS5 over the same texts; queries are the words OR-ed, ranked by bm25(), top 50. */
export function fts5Anchor(texts: string[], queries: string[], dir: string): Anchor {
  let Database: new (file: string) => SqliteDb
  try {
    Database = createRequire(import.meta.url)('better-sqlite3') as typeof Database
  } catch (err) {
    return { error: `better-sqlite3 is not installed (${firstLine(err)}); run npm ci` }
  }
  const file = path.join(dir, 'fts5.sqlite')
  const db = new Database(file)
  try {
    const t0 = performance.now()
    db.exec('PRAGMA journal_mode = WAL; CREATE VIRTUAL TABLE chunks USING fts5(text)')
    const insert = db.prepare('INSERT INTO chunks (rowid, text) VALUES (?, ?)')
    for (let start = 0; start < texts.length; start += 10_000) {
      db.transaction(() => {
        for (let i = start; i < Math.min(texts.length, start + 10_000); i++) insert.run(i + 1, texts[i])
      })()
    }
    db.exec("INSERT INTO chunks (chunks) VALUES ('optimize')")
    const build = performance.now() - t0
    const search = db.prepare(`SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ${K}`)
    const match = (q: string) => [...new Set(q.toLowerCase().match(/\w+/g) ?? [])].map((w) => `"${w}"`).join(' OR ')
    search.all(match(queries[0] ?? 'x'))
    const times = queries.map((q) => {
      const s = performance.now()
      search.all(match(q))
      return performance.now() - s
    })
    const version = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v
    db.close()
    return { build_s: r1(build / 1000), query_ms: ms(times), index_mb: r1(fileMb(file)), version }
  } catch (err) {
    db.close()
    return { error: `FTS5 failed: ${firstLine(err)}` }
  }
}

/** bm25s in its venv (made on first use from evals/baselines/requirements-bm25s.txt). */
export async function bm25sAnchor(texts: string[], queries: string[], dir: string): Promise<Anchor> {
  const py = path.join(BM25S_VENV, 'bin', 'python')
  try {
    if (!existsSync(py)) {
      execFileSync('python3', ['-m', 'venv', BM25S_VENV], { stdio: 'ignore' })
      execFileSync(py, ['-m', 'pip', 'install', '-q', '-r', path.join(repoRoot, 'evals/baselines/requirements-bm25s.txt')], {
        stdio: 'ignore',
      })
    }
  } catch (err) {
    return {
      error: `no bm25s venv at ${BM25S_VENV} (${firstLine(err)}); python3 -m venv ${BM25S_VENV} && ${py} -m pip install -r evals/baselines/requirements-bm25s.txt`,
    }
  }
  const corpus = path.join(dir, 'chunks.txt')
  const qfile = path.join(dir, 'queries.txt')
  await writeFile(corpus, texts.map((t) => t.replace(/\n/g, ' ')).join('\n') + '\n')
  await writeFile(qfile, queries.join('\n') + '\n')
  try {
    const out = execFileSync(
      py,
      [path.join(repoRoot, 'evals/baselines/bm25s_anchor.py'), '--corpus', corpus, '--queries', qfile, '--k', String(K)],
      { encoding: 'utf8', maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as Anchor & { bm25s: string }
    return { build_s: r.build_s, query_ms: r.query_ms, index_mb: r.index_mb, peak_rss_mb: r.peak_rss_mb, version: r.bm25s }
  } catch (err) {
    return { error: `bm25s failed: ${firstLine(err)}` }
  }
}

function ms(times: number[]): number[] {
  return [r1(pct(times, 50)), r1(pct(times, 95)), r1(pct(times, 99))]
}

function fileMb(file: string): number {
  let bytes = 0
  for (const f of [file, `${file}-wal`]) if (existsSync(f)) bytes += statSync(f).size
  return bytes / 2 ** 20
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!
}
