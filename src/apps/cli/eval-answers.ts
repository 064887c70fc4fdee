import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Engine } from '../../engine/engine'
import { loadQuestions, type EvalQuestion } from '../../engine/eval/questions'
import {
  COMPARE_CONFIGS,
  FULL_CONFIG,
  evalAnswers,
  type AnswerEvalConfig,
  type AnswerEvalReport,
} from '../../engine/eval/answers'
import { halfOf } from '../../engine/eval/gate-calibration'
import { formatTable } from './table'

/**
 * `docent eval answers` (the full pipeline on every golden question) and `docent eval compare`
 * (one table over retrieval/pipeline configurations, as in docs/lessons.md). Without --data the corpus
 * is imported into a throw-away database.
 */

export interface EvalAnswersFlags {
  corpus?: string
  questions?: string
  data?: string
  models?: string
  json?: string
  collection?: string
  judge?: boolean
  gateThreshold?: string
  only?: string
  half?: string
}

interface Setup {
  values: EvalAnswersFlags
  questions: EvalQuestion[]
  corpus: string
  qfile: string
}

async function setup(values: EvalAnswersFlags, name: string): Promise<Setup> {
  const corpus = values.corpus ?? fail(`eval ${name} needs --corpus <folder>`)
  const qfile = values.questions ?? fail(`eval ${name} needs --questions <file.jsonl>`)
  if (!existsSync(corpus)) fail(`corpus folder "${corpus}" does not exist`)
  let questions = await loadQuestions(qfile)
  if (values.only) {
    const ids = new Set(values.only.split(','))
    questions = questions.filter((q) => ids.has(q.id))
  }
  if (values.half !== undefined) {
    const half = values.half.replace('-', '_')
    if (half !== 'fit' && half !== 'held_out') fail(`--half takes fit or held-out (got "${values.half}")`)
    const set = path.basename(path.dirname(path.resolve(qfile)))
    questions = questions.filter((q) => halfOf(set, q.id) === half)
  }
  if (values.gateThreshold !== undefined && !Number.isFinite(Number(values.gateThreshold)))
    fail(`--gate-threshold must be a number (got "${values.gateThreshold}")`)
  return { values, questions, corpus, qfile }
}

function fail(message: string): never {
  throw new Error(message)
}

async function withCorpus<T>(s: Setup, fn: (engine: Engine, collection: string) => Promise<T>): Promise<T> {
  const tmp = s.values.data ? null : await mkdtemp(path.join(os.tmpdir(), 'docent-eval-'))
  try {
    const engine = await Engine.open({
      dataDir: path.resolve(s.values.data ?? tmp!),
      ...(s.values.models ? { modelsDir: path.resolve(s.values.models) } : {}),
    })
    try {
      const collection = s.values.collection ?? 'eval-' + path.basename(path.resolve(s.corpus))
      progress(`importing ${s.corpus} …`)
      const ingest = await engine.importFolder(s.corpus, { collection })
      return await fn(engine, ingest.collection)
    } finally {
      await engine.close()
    }
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true })
  }
}

function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${text}`.padEnd(80))
}

async function run(engine: Engine, collection: string, s: Setup, config: AnswerEvalConfig): Promise<AnswerEvalReport> {
  const threshold = s.values.gateThreshold
  return evalAnswers(engine, s.questions, {
    collection,
    config,
    set: path.basename(path.dirname(path.resolve(s.qfile))),
    judge: !!s.values.judge,
    ...(threshold !== undefined ? { askOptions: { gateThreshold: Number(threshold) } } : {}),
    onQuestion: (done, total, q) => progress(`${config.name}: ${done}/${total} ${q.id}`),
  })
}

const pct = (x: number | null) => (x === null ? null : `${Math.round(x * 1000) / 10}%`)

export async function cmdEvalAnswers(values: EvalAnswersFlags): Promise<void> {
  const s = await setup(values, 'answers')
  const report = await withCorpus(s, (engine, collection) => run(engine, collection, s, FULL_CONFIG))
  if (process.stderr.isTTY) process.stderr.write('\r'.padEnd(80) + '\r')
  if (s.values.json) await writeFile(s.values.json, JSON.stringify(report, null, 2) + '\n')
  const out: string[] = []
  out.push(
    `models: llm ${report.models.llm ?? 'none (search-only)'}, reranker ${report.models.reranker ?? 'none'}, embedder ${report.models.embedder ?? 'none'}`,
  )
  out.push(`NOTE: ${report.note}`)
  out.push('')
  out.push(answerTable(report))
  out.push('')
  out.push(`false abstentions: ${report.false_abstentions.map((f) => `${f.id} (${f.reason})`).join(', ') || 'none'}`)
  out.push(`answered but should have abstained: ${report.wrong_answers_to_unanswerable.join(', ') || 'none'}`)
  out.push(
    `answers with sentences removed by the support check: ${report.answers_with_removed_sentences}; answers accepted after a citation repair: ${report.repaired_answers}`,
  )
  out.push(`answers with a line that does not read as written: ${report.answers_with_layout_defects}${layoutList(report)}`)
  const refusals = Object.entries(report.gate_refusals_by_kind)
    .map(([kind, r]) => `${kind} ${r.refused}/${r.of}`)
    .join(', ')
  out.push(`relevance gate refusals of answerable questions, by kind: ${refusals || 'none'}`)
  if (report.faithfulness !== null)
    out.push(`--judge (the answering model's own verdict, not a quality figure): ${pct(report.faithfulness)} faithful`)
  out.push(`router mistakes: ${report.route_mistakes.map((m) => `${m.id} [${m.kind}] -> ${m.got}`).join(', ') || 'none'}`)
  if (report.gate_calibration) {
    const c = report.gate_calibration
    out.push(
      `gate calibration on this run: threshold ${c.threshold} keeps ${c.answerable_kept}/${c.answerable} answerable and refuses ${c.unanswerable_refused}/${c.unanswerable} unanswerable` +
        (report.fixture_models ? ' (fixture reranker: meaningless)' : ''),
    )
  }
  process.stdout.write(out.join('\n') + '\n')
}

export async function cmdEvalCompare(values: EvalAnswersFlags): Promise<void> {
  const s = await setup(values, 'compare')
  const reports = await withCorpus(s, async (engine, collection) => {
    const all: AnswerEvalReport[] = []
    for (const config of COMPARE_CONFIGS) all.push(await run(engine, collection, s, config))
    return all
  })
  if (process.stderr.isTTY) process.stderr.write('\r'.padEnd(80) + '\r')
  if (s.values.json) await writeFile(s.values.json, JSON.stringify({ configs: reports }, null, 2) + '\n')
  const first = reports[0]!
  const model = (role: 'llm' | 'reranker' | 'embedder') => reports.map((r) => r.models[role]).find((m) => m !== null) ?? null
  const out: string[] = []
  out.push(
    `models: llm ${model('llm') ?? 'none (search-only)'}, reranker ${model('reranker') ?? 'none'}, embedder ${model('embedder') ?? 'none'}`,
  )
  if (reports.some((r) => r.fixture_models)) out.push(`NOTE: ${reports.find((r) => r.fixture_models)!.note}`)
  out.push(`${first.questions} questions (${first.answerable} answerable, ${first.unanswerable} unanswerable)`)
  out.push('')
  out.push(
    formatTable(
      [
        'config',
        'pass',
        'retrieval',
        'answered',
        'ok-declines',
        'false dec.',
        'cite-valid',
        '1st-valid',
        'section',
        'faithful',
        'LLM calls',
        'p50 ms',
      ],
      reports.map((r) => [
        r.config.name,
        pct(r.per_question.filter((p) => p.correct).length / Math.max(1, r.questions)),
        pct(r.retrieval_gold_in_passages),
        pct(r.answer_rate),
        pct(r.abstention_accuracy),
        r.false_abstentions.length,
        pct(r.citation_validity),
        pct(r.first_reply_validity),
        pct(r.section_correct_citations),
        pct(r.faithfulness),
        r.llm_calls,
        r.p50_ms,
      ]),
    ),
  )
  out.push('')
  for (const r of reports) out.push(`${r.config.name.padEnd(14)} ${r.config.description}`)
  out.push(
    'pass = answered if answerable, abstained with the expected reason otherwise; retrieval = a gold section among the passages given to the model.',
  )
  process.stdout.write(out.join('\n') + '\n')
}

/** The answer eval's figures for the whole set and each hash half (fit / held_out). */
export function answerTable(report: AnswerEvalReport): string {
  const rows = [
    ['all', report],
    ['fit half', report.halves.fit],
    ['held-out half', report.halves.held_out],
  ] as const
  return formatTable(
    [
      'questions',
      'answerable',
      'answered',
      'gold in passages',
      'gold cited',
      'facts covered',
      'words per answer',
      'unanswerable abstained',
      'right reason',
      'answers w/ removals',
      'LLM calls',
      'median prompt tok',
      'median tok read',
      'median answer ms',
      'p95 ms',
    ],
    rows.map(([name, r]) => [
      `${name} (${r.questions})`,
      r.answerable,
      pct(r.answer_rate),
      pct(r.retrieval_gold_in_passages),
      pct(r.section_correct_citations),
      pct(r.facts_covered),
      r.words_per_answer,
      pct(r.abstention_accuracy),
      pct(r.abstention_reason_accuracy),
      r.answers_with_removed_sentences,
      r.llm_calls,
      r.median_prompt_tokens,
      r.median_tokens_in,
      r.median_answer_ms,
      r.p95_ms,
    ]),
  )
}

/** Which answers have which layout defect (eval/layout.ts), for the summary line. */
function layoutList(report: AnswerEvalReport): string {
  const with_ = report.per_question.filter((p) => p.layout_defects.length > 0)
  return with_.length ? ` (${with_.map((p) => `${p.id}: ${p.layout_defects.join(', ')}`).join('; ')})` : ''
}
