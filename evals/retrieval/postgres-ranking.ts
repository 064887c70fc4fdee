import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { Engine } from '../../src/engine/engine'
import { isHit, loadQuestions, searchQuestion, type EvalQuestion } from '../../src/engine/eval/questions'
import { extractExactTerms } from '../../src/engine/core/exact-terms'
import { resolveSearchScope } from '../../src/engine/retrieve/search'
import { scopeSql, searchText } from '../../src/engine/retrieve/scope'
import { formatTable } from '../../src/apps/cli/table'
import { goldenQuestions, mcpCorpus } from '../../src/test-support/paths'

/**
 * Postgres' own full-text ranking beside Docent's BM25 on one golden set (docs/lessons.md,
 * "Postgres ranking is not BM25"; ADR 0002), on the same index, scope and search text:
 *
 *   tsx evals/retrieval/postgres-ranking.ts [--corpus <folder>] [--questions <file.jsonl>] [--data <dir>]
 *
 * The corpus is imported with no model (keyword only) into --data, or a throw-away folder. Per
 * answerable question, the top 10 chunks of each ranker are scored as `docent eval retrieval`
 * scores them (right file and section): websearch_to_tsquery (every word ANDed) ranked by
 * ts_rank; the query's lexemes ORed, ranked by ts_rank and by ts_rank_cd; and Docent's keyword
 * search (BM25 over those candidates, what `eval retrieval --mode keyword` runs).
 */

interface Row {
  path: string
  heading: string
  page_start: number | null
  page_end: number | null
}

type Ranker = (engine: Engine, q: EvalQuestion, collection: string) => Promise<Row[]>

const quote = (lexeme: string) => "'" + lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''") + "'"

function postgresRanker(kind: 'and' | 'or', rank: 'ts_rank' | 'ts_rank_cd'): Ranker {
  return async (engine, q, collection) => {
    const scope = await resolveSearchScope(
      engine.db,
      { collections: [collection], version: q.version ?? 'auto' },
      searchQuestion(q),
    )
    const text = searchText(searchQuestion(q), scope)
    let tsquery: string
    if (kind === 'and') {
      const { rows } = await engine.db.query<{ q: string }>(`SELECT websearch_to_tsquery('english', $1)::text AS q`, [text])
      tsquery = rows[0]?.q ?? ''
    } else {
      // The same lexemes Docent's keyword search reads: English stems plus the exact tokens kept whole.
      const { rows } = await engine.db.query<{ l: string[] }>(
        `SELECT tsvector_to_array(to_tsvector('english', $1) || array_to_tsvector($2::text[])) AS l`,
        [text, extractExactTerms(text)],
      )
      tsquery = (rows[0]?.l ?? []).map(quote).join(' | ')
    }
    if (!tsquery) return []
    const s = scopeSql(scope, 'c', 1)
    const { rows } = await engine.db.query<Row>(
      `SELECT c.path, c.heading, c.page_start, c.page_end FROM chunks c
        WHERE c.tsv @@ $1::tsquery AND ${s.sql}
        ORDER BY ${rank}(c.tsv, $1::tsquery) DESC, c.id LIMIT 10`,
      [tsquery, ...s.params],
    )
    return rows
  }
}

const docentKeyword: Ranker = async (engine, q, collection) => {
  const res = await engine.search(searchQuestion(q), {
    scope: { collections: [collection], version: q.version ?? 'auto' },
    mode: 'keyword',
    k: 10,
  })
  return res.results.map((h) => ({ path: h.path, heading: h.heading, page_start: h.page, page_end: h.page_end }))
}

const RANKERS: [string, Ranker][] = [
  ['websearch_to_tsquery (AND), ts_rank', postgresRanker('and', 'ts_rank')],
  ['lexemes ORed, ts_rank', postgresRanker('or', 'ts_rank')],
  ['lexemes ORed, ts_rank_cd', postgresRanker('or', 'ts_rank_cd')],
  ['Docent keyword (BM25 over ORed candidates)', docentKeyword],
]

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { corpus: { type: 'string' }, questions: { type: 'string' }, data: { type: 'string' } },
  })
  const corpus = path.resolve(values.corpus ?? mcpCorpus)
  const questions = (await loadQuestions(values.questions ?? goldenQuestions)).filter((q) => q.answerable)
  const tmp = values.data ? null : await mkdtemp(path.join(os.tmpdir(), 'docent-pg-ranking-'))
  const empty = await mkdtemp(path.join(os.tmpdir(), 'docent-no-models-'))
  const engine = await Engine.open({ dataDir: path.resolve(values.data ?? tmp!), modelsDir: empty })
  try {
    const { collection } = await engine.importFolder(corpus, { collection: 'eval-' + path.basename(corpus) })
    const rows: (string | number)[][] = []
    for (const [name, rank] of RANKERS) {
      const firstHit: (number | null)[] = []
      for (const q of questions) {
        const top = await rank(engine, q, collection)
        const i = top.findIndex((r) =>
          q.gold.some((g) => isHit({ path: r.path, heading: r.heading, page: r.page_start, page_end: r.page_end }, g)),
        )
        firstHit.push(i >= 0 ? i + 1 : null)
      }
      const within = (k: number) => firstHit.filter((r) => r !== null && r <= k).length
      const mrr = firstHit.reduce<number>((s, r) => s + (r ? 1 / r : 0), 0) / questions.length
      rows.push([
        name,
        `${within(10)} of ${questions.length}`,
        (within(5) / questions.length).toFixed(3),
        (within(10) / questions.length).toFixed(3),
        mrr.toFixed(3),
      ])
    }
    process.stdout.write(
      `${path.basename(corpus)}, ${questions.length} answerable questions, no model (keyword index only)\n` +
        formatTable(['ranker', 'found in top 10', 'recall@5', 'recall@10', 'MRR'], rows) +
        '\n',
    )
  } finally {
    await engine.close()
    if (tmp) await rm(tmp, { recursive: true, force: true })
    await rm(empty, { recursive: true, force: true })
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
