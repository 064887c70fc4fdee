import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { loadQuestions } from '../../src/engine/eval/questions'
import { evalRetrieval } from '../../src/engine/eval/retrieval'
import { fixtureModels, goldenQuestions, mcpCorpus, repoRoot, tempDir } from '../../src/test-support/paths'
import { printTable } from './machine'

/**
 * Docent's keyword retriever side by side with a plain BM25 baseline (rank-bm25's BM25Okapi over
 * heading sections, evals/baselines/bm25_baseline.py) on the same corpus and questions, in the same
 * run. Vector and hybrid rows use the fixture embedder (random weights): plumbing, not quality.
 */
function bm25Baseline(): Record<string, number> | { error: string } {
  const venv = path.join(os.tmpdir(), 'docent-bench-venv')
  const py = path.join(venv, 'bin', 'python')
  try {
    if (!existsSync(py)) {
      execFileSync('python3', ['-m', 'venv', venv], { stdio: 'ignore' })
      execFileSync(py, ['-m', 'pip', 'install', '-q', '-r', path.join(repoRoot, 'evals/baselines/requirements.txt')], {
        stdio: 'ignore',
      })
    }
    const out = path.join(venv, 'bm25-out.json')
    const t0 = performance.now()
    execFileSync(
      py,
      [
        path.join(repoRoot, 'evals/baselines/bm25_baseline.py'),
        '--corpus',
        mcpCorpus,
        '--questions',
        goldenQuestions,
        '--json',
        out,
      ],
      { stdio: 'ignore' },
    )
    const ms = performance.now() - t0
    const r = JSON.parse(readFileSync(out, 'utf8')) as Record<string, number>
    return { ...r, total_ms: ms }
  } catch (err) {
    return { error: `BM25 baseline could not run (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` }
  }
}

export async function benchCompare(): Promise<Record<string, unknown>> {
  const questions = await loadQuestions(goldenQuestions)
  const baseline = bm25Baseline()
  const data = await tempDir('docent-bench-compare-')
  const engine = await Engine.open({ dataDir: data.dir, modelsDir: fixtureModels })
  await engine.importFolder(mcpCorpus, { collection: 'mcp' })
  const rows: (string | number | null)[][] = []
  const out: Record<string, unknown>[] = []
  if ('error' in baseline) rows.push(['plain BM25 (rank-bm25)', String(baseline.error), null, null, null])
  else {
    rows.push([
      'plain BM25 (rank-bm25, sections)',
      baseline['recall_at_5']!,
      baseline['recall_at_10']!,
      baseline['mrr']!,
      'reference',
    ])
    out.push({ name: 'bm25-baseline', ...baseline })
  }
  for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
    const r = await evalRetrieval(engine, questions, { collection: 'mcp', mode, rerank: false })
    const note = mode === 'keyword' ? `p50 ${r.p50_ms} ms` : 'fixture embedder: plumbing only'
    rows.push([`Docent ${mode}`, r.recall_at_5, r.recall_at_10, r.mrr, note])
    out.push({
      name: mode,
      recall_at_5: r.recall_at_5,
      recall_at_10: r.recall_at_10,
      mrr: r.mrr,
      p50_ms: r.p50_ms,
      p95_ms: r.p95_ms,
    })
  }
  await engine.close()
  await data.cleanup()
  const kw = out.find((o) => o['name'] === 'keyword') as Record<string, number>
  if (!('error' in baseline)) {
    rows.push([
      'ratio keyword / baseline',
      ratio(kw['recall_at_5']!, baseline['recall_at_5']!),
      ratio(kw['recall_at_10']!, baseline['recall_at_10']!),
      ratio(kw['mrr']!, baseline['mrr']!),
      '',
    ])
  }
  printTable(
    `Retrieval on the MCP docs golden set (${questions.filter((q) => q.answerable).length} answerable questions)`,
    ['retriever', 'recall@5', 'recall@10', 'MRR', 'note'],
    rows,
  )
  return { compare: out }
}

const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 1000) / 1000 : 0)
