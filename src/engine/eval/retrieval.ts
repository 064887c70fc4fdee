import type { Engine } from '../engine'
import type { PassageRef } from '../../shared/passage'
import type { SearchMode } from '../../shared/search'
import { type EvalQuestion, hitsGold, searchQuestion } from './questions'
import { round } from '../core/numbers'
import { keywordPostingsOf } from '../store/postings'
import { halfOf } from './gate-calibration'
import type { FusionRule } from '../retrieve/fuse'

/** Recall@10 and MRR over one hash half of a set (gate-calibration.ts halfOf). */
export interface HalfScore {
  n: number
  recall_at_10: number
  mrr: number
}

export interface RetrievalEvalReport {
  mode: SearchMode
  rerank: boolean
  questions: number
  answerable: number
  recall_at_5: number
  recall_at_10: number
  mrr: number
  p50_ms: number
  p95_ms: number
  degraded: boolean
  notices: string[]
  /** The same figures on each hash half of the set (fusion and gate are fitted on `fit`, reported on `held_out`). */
  halves: { fit: HalfScore; held_out: HalfScore }
  per_question: {
    id: string
    kind: string
    first_hit_rank: number | null
    ms: number
    top: Pick<PassageRef, 'path' | 'heading' | 'version'>[]
  }[]
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[idx]!
}

/** Runs every answerable question through search and scores recall@5, recall@10 and MRR (first hit in the top 10). */
export async function evalRetrieval(
  engine: Engine,
  questions: EvalQuestion[],
  opts: {
    collection: string
    mode: SearchMode
    rerank: boolean
    /** The question set's name, for its halves (halfOf); the questions file's folder name by convention. */
    set?: string
    /** Hybrid's fusion rule, when not the engine's own (HYBRID_FUSION): equal RRF for comparison. */
    fusion?: FusionRule
  },
): Promise<RetrievalEvalReport> {
  const per: RetrievalEvalReport['per_question'] = []
  const latencies: number[] = []
  const notices = new Set<string>()
  let degraded = false
  // Keyword search answers from SQL until its postings are built in the background, and the two
  // paths may order chunks whose scores tie to the last bit differently (keyword.ts, sameRanking).
  // Measured on what a running engine uses, so that a run does not depend on when the build ended.
  await keywordPostingsOf(engine.db)?.warm()
  for (const q of questions) {
    if (!q.answerable) continue
    const t0 = performance.now()
    // A follow-up is searched as the engine searches it with no model: rewritten from the turn before.
    const res = await engine.search(searchQuestion(q), {
      // A null version is a question whose asker chose none: the version it names (if any) is inferred, as in the app.
      scope: { collections: [opts.collection], version: q.version ?? 'auto' },
      mode: opts.mode,
      rerank: opts.rerank,
      k: 10,
      ...(opts.fusion ? { fusion: opts.fusion } : {}),
    })
    const ms = performance.now() - t0
    latencies.push(ms)
    degraded ||= res.degraded
    res.notices.forEach((n) => notices.add(n))
    const idx = res.results.findIndex((h) => q.gold.some((g) => hitsGold(h, g)))
    per.push({
      id: q.id,
      kind: q.kind,
      first_hit_rank: idx >= 0 ? idx + 1 : null,
      ms: round(ms, 1),
      top: res.results.slice(0, 5).map((h) => ({ path: h.path, heading: h.heading, version: h.version })),
    })
  }
  const n = per.length || 1
  const half = (h: 'fit' | 'held_out'): HalfScore => {
    const qs = per.filter((p) => halfOf(opts.set ?? 'set', p.id) === h)
    const m = qs.length || 1
    return {
      n: qs.length,
      recall_at_10: round(qs.filter((p) => p.first_hit_rank !== null).length / m, 4),
      mrr: round(qs.reduce((s, p) => s + (p.first_hit_rank ? 1 / p.first_hit_rank : 0), 0) / m, 4),
    }
  }
  return {
    mode: opts.mode,
    rerank: opts.rerank,
    questions: questions.length,
    answerable: per.length,
    recall_at_5: round(per.filter((p) => p.first_hit_rank !== null && p.first_hit_rank <= 5).length / n, 4),
    recall_at_10: round(per.filter((p) => p.first_hit_rank !== null).length / n, 4),
    mrr: round(per.reduce((s, p) => s + (p.first_hit_rank ? 1 / p.first_hit_rank : 0), 0) / n, 4),
    p50_ms: round(percentile(latencies, 50), 1),
    p95_ms: round(percentile(latencies, 95), 1),
    degraded,
    notices: [...notices],
    halves: { fit: half('fit'), held_out: half('held_out') },
    per_question: per,
  }
}
