import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Engine } from '../../engine/engine'
import { loadQuestions } from '../../engine/eval/questions'
import {
  calibrateDegradedGate,
  collectGateSamples,
  scoreBySet,
  type GateRule,
  type GateSample,
  type GateScore,
} from '../../engine/eval/gate-calibration'
import { formatTable } from './table'

/**
 * `docent eval gate --corpus A --questions QA [--corpus B --questions QB ...]`: calibrates the
 * degraded relevance gate (no reranker) on the installed embedder, fitting on one half of the
 * questions and reporting on the other. Corpora and question files pair up in order.
 */
export interface EvalGateFlags {
  corpus?: string[]
  questions?: string[]
  data?: string
  models?: string
  json?: string
}

export async function cmdEvalGate(values: EvalGateFlags): Promise<void> {
  const corpora = values.corpus ?? []
  const files = values.questions ?? []
  if (corpora.length === 0 || corpora.length !== files.length)
    throw new Error('eval gate needs --corpus <folder> --questions <file.jsonl>, one --questions for each --corpus')
  for (const c of corpora) if (!existsSync(c)) throw new Error(`corpus folder "${c}" does not exist`)
  const tmp = values.data ? null : await mkdtemp(path.join(os.tmpdir(), 'docent-eval-'))
  const engine = await Engine.open({
    dataDir: path.resolve(values.data ?? tmp!),
    modelsDir: values.models ? path.resolve(values.models) : undefined,
  })
  try {
    const samples: GateSample[] = []
    let embedder: string | null = null
    for (const [i, corpus] of corpora.entries()) {
      const file = files[i]!
      const set = path.basename(path.dirname(path.resolve(file)))
      const ingest = await engine.importFolder(corpus, { collection: 'eval-' + path.basename(path.resolve(corpus)) })
      const got = await collectGateSamples(engine, await loadQuestions(file), {
        set,
        collection: ingest.collection,
        onQuestion: (done, total) => process.stderr.isTTY && process.stderr.write(`\r${set}: ${done}/${total}`.padEnd(60)),
      })
      samples.push(...got.samples)
      embedder ??= got.embedder
    }
    if (process.stderr.isTTY) process.stderr.write('\r'.padEnd(60) + '\r')
    const report = calibrateDegradedGate(samples, embedder)
    if (values.json) await writeFile(values.json, JSON.stringify(report, null, 2) + '\n')
    const rule = (r: GateRule) => `cosine >= ${r.cosine_floor} or keyword coverage >= ${r.keyword_coverage}`
    const row = (name: string, r: GateRule, half: string, s: GateScore) => [
      name,
      rule(r),
      half,
      `${s.answerable_kept}/${s.answerable}`,
      `${s.unanswerable_refused}/${s.unanswerable}`,
      s.balanced_accuracy,
    ]
    process.stdout.write(
      `embedder: ${embedder ?? 'none'}; no reranker (degraded gate); ${samples.length} questions, split by a hash of their id\n` +
        formatTable(
          ['rule', 'thresholds', 'half', 'answerable kept', 'unanswerable refused', 'balanced accuracy'],
          [
            row('in force', report.current, 'fit', report.current_on.fit),
            row('in force', report.current, 'held-out', report.current_on.held_out),
            row('fitted', report.fitted, 'fit (in-sample)', report.fitted_on.fit),
            row('fitted', report.fitted, 'held-out', report.fitted_on.held_out),
          ],
        ) +
        '\n' +
        scoreBySet(report.samples, report.current)
          .map(
            ({ set, score: s }) =>
              `rule in force on ${set}, both halves: ${s.answerable_kept}/${s.answerable} answerable kept, ${s.unanswerable_refused}/${s.unanswerable} unanswerable refused`,
          )
          .join('\n') +
        '\n' +
        (['fit', 'held_out'] as const)
          .map((h) => {
            const o = report.off_topic_now[h]
            return `off-topic rule in force, ${h.replace('_', '-')}: ${o.caught}/${o.off_topic} off-topic questions refused as off_topic, ${o.others_called_off_topic} other questions called off_topic`
          })
          .join('\n') +
        '\n',
    )
  } finally {
    await engine.close()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  }
}
