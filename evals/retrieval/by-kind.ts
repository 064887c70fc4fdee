import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { formatTable } from '../../src/apps/cli/table'

/**
 * Retrieval per question kind, from the reports `docent eval retrieval --json <out.json>` writes.
 *
 *   tsx evals/retrieval/by-kind.ts <report.json>... [--kind exact-token]
 *
 * One row per report and kind (version-specific, exact-token, paraphrase, ...): answerable
 * questions, how many have their first hit at rank 1, in the top 5 and in the top 10, and the MRR.
 * Every number is counted from the report's `per_question`; nothing is run here.
 */

interface PerQuestion {
  id: string
  kind: string
  first_hit_rank: number | null
}

export interface KindRow {
  kind: string
  questions: number
  rank1: number
  top5: number
  top10: number
  mrr: number
}

export function byKind(perQuestion: PerQuestion[]): KindRow[] {
  const kinds = [...new Set(perQuestion.map((p) => p.kind))].sort()
  return kinds.map((kind) => {
    const ranks = perQuestion.filter((p) => p.kind === kind).map((p) => p.first_hit_rank)
    const within = (k: number) => ranks.filter((r) => r !== null && r <= k).length
    const mrr = ranks.reduce<number>((s, r) => s + (r ? 1 / r : 0), 0) / ranks.length
    return { kind, questions: ranks.length, rank1: within(1), top5: within(5), top10: within(10), mrr }
  })
}

function main(argv: string[]): void {
  const kindAt = argv.indexOf('--kind')
  const only = kindAt >= 0 ? argv[kindAt + 1] : undefined
  const files = argv.filter((a, i) => a !== '--kind' && (kindAt < 0 || i !== kindAt + 1))
  if (files.length === 0) {
    process.stderr.write('usage: tsx evals/retrieval/by-kind.ts <report.json>... [--kind <kind>]\n')
    process.exit(2)
  }
  const rows: (string | number)[][] = []
  for (const file of files) {
    const report = JSON.parse(readFileSync(file, 'utf8')) as { mode: string; per_question: PerQuestion[] }
    for (const r of byKind(report.per_question)) {
      if (only && r.kind !== only) continue
      const of = (n: number) => `${n} of ${r.questions}`
      rows.push([path.basename(file), report.mode, r.kind, of(r.rank1), of(r.top5), of(r.top10), r.mrr.toFixed(3)])
    }
  }
  process.stdout.write(formatTable(['report', 'mode', 'kind', 'rank 1', 'top 5', 'top 10', 'MRR'], rows) + '\n')
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2))
}
