import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { open, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { repoRoot } from '../../src/test-support/paths'

/**
 * The anchors the keyword latency is read against, on the query bench's own chunks and queries:
 * SQLite FTS5 ranked by bm25() (Python's standard sqlite3; what GPT4All uses for its
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

/** FTS5 over the same texts (Python's own sqlite3); queries are the words OR-ed, ranked by bm25(), top 50. */
export async function fts5Anchor(texts: string[], queries: string[], dir: string): Promise<Anchor> {
  const db = path.join(dir, 'fts5.sqlite')
  // A kept store's folder (--store) holds the index of the run before: the script creates its table anew.
  for (const f of [db, `${db}-wal`, `${db}-shm`]) await rm(f, { force: true })
  const r = await runAnchor('python3', 'fts5_anchor.py', texts, queries, dir, ['--db', db])
  return 'error' in r ? { error: `FTS5 failed: ${r.error}` } : { ...pick(r), version: String(r['sqlite']) }
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
  const r = await runAnchor(py, 'bm25s_anchor.py', texts, queries, dir, [])
  return 'error' in r ? { error: `bm25s failed: ${r.error}` } : { ...pick(r), version: String(r['bm25s']) }
}

/** Writes the chunks and queries one per line, runs evals/baselines/<script> on them, and reads its JSON line. */
async function runAnchor(
  py: string,
  script: string,
  texts: string[],
  queries: string[],
  dir: string,
  extra: string[],
): Promise<Record<string, unknown> | { error: string }> {
  const corpus = path.join(dir, 'chunks.txt')
  const qfile = path.join(dir, 'queries.txt')
  try {
    // In slices: a million chunks joined into one string pass V8's longest string.
    const file = await open(corpus, 'w')
    try {
      for (let i = 0; i < texts.length; i += 10_000)
        await file.write(
          texts
            .slice(i, i + 10_000)
            .map((t) => t.replace(/\n/g, ' ') + '\n')
            .join(''),
        )
    } finally {
      await file.close()
    }
    await writeFile(qfile, queries.join('\n') + '\n')
    const out = execFileSync(
      py,
      [path.join(repoRoot, 'evals/baselines', script), '--corpus', corpus, '--queries', qfile, '--k', String(K), ...extra],
      { encoding: 'utf8', maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    return JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>
  } catch (err) {
    return { error: firstLine(err) }
  }
}

function pick(r: Record<string, unknown>): Anchor {
  return {
    build_s: r['build_s'] as number,
    query_ms: r['query_ms'] as number[],
    index_mb: r['index_mb'] as number,
    peak_rss_mb: r['peak_rss_mb'] as number,
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!
}
