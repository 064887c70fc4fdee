import { createHash } from 'node:crypto'
import { searchQuestion, type EvalQuestion } from './questions'
import { round } from '../core/numbers'
import type { Engine } from '../engine'
import { KEYWORD_COVERAGE, cosineFloorFor } from '../answer/gate'

/**
 * Calibrating the degraded relevance gate (no reranker: best cosine OR keyword coverage) on real
 * evidence. Each question runs through the real pipeline in search-only mode, so the gate sees the
 * same retrieval, scope and keyword statistics it sees when a person asks; the trace gives the
 * numbers. The questions are split in two by a hash of their id: the thresholds are fitted on one
 * half (in-sample figures, optimistic) and reported on the other (held-out).
 */

export interface GateSample {
  id: string
  set: string
  kind: string
  answerable: boolean
  best_cosine: number | null
  keyword_top_coverage: number | null
  meaningful_terms: number
  /** What the gate in force today decided, and why it refused (off_topic or no_relevant_sources). */
  passed_now: boolean
  refusal_now: 'off_topic' | 'no_relevant_sources' | null
  half: 'fit' | 'held_out'
}

export interface GateRule {
  cosine_floor: number
  keyword_coverage: number
}

export interface GateScore {
  answerable: number
  answerable_kept: number
  unanswerable: number
  unanswerable_refused: number
  /** Mean of the two rates, so a handful of unanswerable questions is not outvoted by many answerable ones. */
  balanced_accuracy: number
}

/** The off-topic rule in force (known share of the query's IDF weight), per half. */
export interface OffTopicScore {
  off_topic: number
  /** Off-topic questions refused as off_topic. */
  caught: number
  /** Other questions (answerable or not) refused as off_topic. */
  others_called_off_topic: number
}

export interface GateCalibrationReport {
  embedder: string | null
  off_topic_now: { fit: OffTopicScore; held_out: OffTopicScore }
  current: GateRule
  fitted: GateRule
  current_on: { fit: GateScore; held_out: GateScore }
  fitted_on: { fit: GateScore; held_out: GateScore }
  samples: GateSample[]
}

/** Deterministic half assignment: the same question always lands in the same half. */
export function halfOf(set: string, id: string): 'fit' | 'held_out' {
  const byte = createHash('sha256').update(`${set}/${id}`).digest()[0]!
  return byte % 2 === 0 ? 'fit' : 'held_out'
}

export function passes(
  s: Pick<GateSample, 'best_cosine' | 'keyword_top_coverage' | 'meaningful_terms'>,
  rule: GateRule,
): boolean {
  const cosineOk = s.best_cosine !== null && s.best_cosine >= rule.cosine_floor
  const keywordOk = s.keyword_top_coverage !== null && s.keyword_top_coverage >= rule.keyword_coverage && s.meaningful_terms > 0
  return cosineOk || keywordOk
}

export function scoreRule(samples: GateSample[], rule: GateRule): GateScore {
  const ans = samples.filter((s) => s.answerable)
  const un = samples.filter((s) => !s.answerable)
  const kept = ans.filter((s) => passes(s, rule)).length
  const refused = un.filter((s) => !passes(s, rule)).length
  const rate = (a: number, b: number) => (b ? a / b : 1)
  return {
    answerable: ans.length,
    answerable_kept: kept,
    unanswerable: un.length,
    unanswerable_refused: refused,
    balanced_accuracy: round((rate(kept, ans.length) + rate(refused, un.length)) / 2, 4),
  }
}

/**
 * A rule's score on each question set apart: a threshold fitted on one set (KEYWORD_COVERAGE, on
 * the MCP golden set) is in-sample there and held out on every other set.
 */
export function scoreBySet(samples: GateSample[], rule: GateRule): { set: string; score: GateScore }[] {
  const sets = [...new Set(samples.map((s) => s.set))]
  return sets.map((set) => ({
    set,
    score: scoreRule(
      samples.filter((s) => s.set === set),
      rule,
    ),
  }))
}

/** Candidates midway between neighbouring observed values, plus one beyond each end. */
function candidates(values: number[]): number[] {
  const v = [...new Set(values)].sort((a, b) => a - b)
  if (v.length === 0) return [0]
  const out = [v[0]! - 0.01]
  for (let i = 1; i < v.length; i++) out.push((v[i - 1]! + v[i]!) / 2)
  out.push(v[v.length - 1]! + 0.01)
  return out.map((x) => round(x, 4))
}

/**
 * Grid search over both thresholds for the most questions handled right (answerable kept plus
 * unanswerable refused), the objective `calibrateGate` uses for reranker scores. Balanced accuracy
 * was tried first: with 8 unanswerable questions in the fitting half it bought each refusal with
 * several false abstentions, and lost on the held-out half (docs/benchmarks.md). Ties go to the
 * stricter rule (higher floors): a wrong answer costs a person more than an honest "the documents
 * don't say".
 */
export function fitGateRule(samples: GateSample[]): GateRule {
  const cos = candidates(samples.flatMap((s) => (s.best_cosine === null ? [] : [s.best_cosine])))
  const cov = candidates(samples.flatMap((s) => (s.keyword_top_coverage === null ? [] : [s.keyword_top_coverage])))
  let best: { rule: GateRule; score: number } | null = null
  for (const c of cos)
    for (const k of cov) {
      const rule = { cosine_floor: c, keyword_coverage: k }
      const r = scoreRule(samples, rule)
      const score = r.answerable_kept + r.unanswerable_refused
      const stricter = best && score === best.score && c + k > best.rule.cosine_floor + best.rule.keyword_coverage
      if (!best || score > best.score || stricter) best = { rule, score }
    }
  return best!.rule
}

/** Runs every question (small talk aside: the router answers it before the gate) and records the gate's evidence. */
export async function collectGateSamples(
  engine: Pick<Engine, 'ask' | 'answers'>,
  questions: EvalQuestion[],
  opts: { set: string; collection: string; onQuestion?: (done: number, total: number) => void },
): Promise<{ samples: GateSample[]; embedder: string | null }> {
  const samples: GateSample[] = []
  let embedder: string | null = null
  const asked = questions.filter((q) => q.kind !== 'smalltalk')
  for (const [i, q] of asked.entries()) {
    const result = await engine.ask(
      {
        question: searchQuestion(q),
        scope: { collections: [opts.collection], version: q.version ?? 'all' },
        searchOnly: true,
      },
      { mode: 'hybrid', rerank: false, gate: true, useCache: false, chat: null },
    )
    const trace = (await engine.answers.trace(result.trace_id))?.data
    opts.onQuestion?.(i + 1, asked.length)
    const decision = trace?.gate?.decision
    if (!decision) continue
    embedder ??= trace?.retrieval?.embedder ?? null
    samples.push({
      id: q.id,
      set: opts.set,
      kind: q.kind,
      answerable: q.answerable,
      best_cosine: decision.best_cosine,
      keyword_top_coverage: decision.keyword_top_coverage,
      meaningful_terms: trace?.gate?.keyword?.meaningful.length ?? 0,
      passed_now: decision.pass,
      refusal_now: decision.pass ? null : decision.refusal,
      half: halfOf(opts.set, q.id),
    })
  }
  return { samples, embedder }
}

export function scoreOffTopic(samples: GateSample[]): OffTopicScore {
  const off = samples.filter((s) => s.kind === 'off-topic')
  return {
    off_topic: off.length,
    caught: off.filter((s) => s.refusal_now === 'off_topic').length,
    others_called_off_topic: samples.filter((s) => s.kind !== 'off-topic' && s.refusal_now === 'off_topic').length,
  }
}

export function calibrateDegradedGate(samples: GateSample[], embedder: string | null): GateCalibrationReport {
  const fit = samples.filter((s) => s.half === 'fit')
  const held = samples.filter((s) => s.half === 'held_out')
  const current = { cosine_floor: cosineFloorFor(embedder), keyword_coverage: KEYWORD_COVERAGE }
  const fitted = fitGateRule(fit)
  return {
    embedder,
    off_topic_now: { fit: scoreOffTopic(fit), held_out: scoreOffTopic(held) },
    current,
    fitted,
    current_on: { fit: scoreRule(fit, current), held_out: scoreRule(held, current) },
    fitted_on: { fit: scoreRule(fit, fitted), held_out: scoreRule(held, fitted) },
    samples,
  }
}
