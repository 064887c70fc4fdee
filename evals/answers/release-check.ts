/**
 * The release rules (src/engine/answer/release.ts) on every golden question, without any model:
 * which questions they would answer with "the <release> docs never mention X" or "only guides
 * mention X" before the model runs, split by whether the question is answerable and by the hash
 * half of its set (gate-calibration.ts halfOf: rules tuned on `fit` are reported on `held_out`).
 * A refusal of an answerable question is a false refusal; an absent-feature question that passes
 * goes to the model (and to the check after it, which this script does not run).
 *
 *   npx tsx evals/answers/release-check.ts \
 *     --set mcp-docs=<data dir>:<collection>:evals/datasets/mcp-docs/questions.jsonl [--set ...] [--json out.json]
 *
 * Every set under evals/datasets that is not given is named at the end, so a run that leaves one
 * out says so.
 */
import { readdirSync } from 'node:fs'
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { loadQuestions } from '../../src/engine/eval/questions'
import { checkRelease } from '../../src/engine/answer/release'
import { halfOf } from '../../src/engine/eval/gate-calibration'
import { resolveSearchScope } from '../../src/engine/retrieve/search'

const { values } = parseArgs({
  options: {
    set: { type: 'string', multiple: true },
    json: { type: 'string' },
    // The older form: one data folder and collection for every --questions file.
    data: { type: 'string' },
    collection: { type: 'string', default: 'mcp' },
    questions: { type: 'string', multiple: true },
  },
})

interface Row {
  set: string
  id: string
  half: 'fit' | 'held_out'
  answerable: boolean
  kind: string
  verdict: string
  explanation: string | null
  must: string[]
  scope: string[] | null
  /** The question's terms as the rules counted them (the trace's `release.terms`). */
  terms: unknown[]
}

const specs = [
  ...(values.set ?? []).map((s) => {
    const [name, rest] = s.split('=') as [string, string]
    const [data, collection, file] = rest.split(':') as [string, string, string]
    return { name, data, collection, file }
  }),
  ...(values.questions ?? []).map((file) => ({
    name: file.split('/').at(-2)!,
    data: values.data!,
    collection: values.collection!,
    file,
  })),
]

const rows: Row[] = []
for (const spec of specs) {
  const engine = await Engine.open({ dataDir: spec.data, modelsDir: `${spec.data}/no-models`, readOnly: true })
  try {
    for (const q of await loadQuestions(spec.file)) {
      if (q.kind === 'smalltalk' || q.kind === 'off-topic') continue
      const scope = await resolveSearchScope(
        engine.db,
        { collections: [spec.collection], version: q.version ?? 'auto' },
        q.question,
      )
      const r = await checkRelease(engine.db, scope, q.question)
      rows.push({
        set: spec.name,
        id: q.id,
        half: halfOf(spec.name, q.id),
        answerable: q.answerable,
        kind: q.kind,
        verdict: r.trace.verdict,
        explanation: r.explanation,
        must: r.mustCite,
        scope: r.trace.releases,
        terms: r.trace.terms,
      })
    }
  } finally {
    await engine.close()
  }
}

const refused = (r: Row) => r.verdict !== 'not_scoped' && r.explanation !== null
const frac = (rs: Row[]) => `${rs.filter(refused).length}/${rs.length}`
for (const set of [...new Set(rows.map((r) => r.set))]) {
  const mine = rows.filter((r) => r.set === set)
  const by = (half: string) => mine.filter((r) => half === 'all' || r.half === half)
  const line = (half: string) =>
    `answerable refused ${frac(by(half).filter((r) => r.answerable))}, unanswerable refused ${frac(by(half).filter((r) => !r.answerable))}`
  console.log(
    `${set}: ${line('all')}; scoped ${mine.filter((r) => r.verdict !== 'not_scoped').length}/${mine.length}` +
      ` (fit: ${line('fit')}; held-out: ${line('held_out')})`,
  )
}
for (const r of rows)
  if (refused(r) || (!r.answerable && r.kind === 'absent-feature'))
    console.log(
      `  ${r.set} ${r.id} [${r.half}] ${r.answerable ? 'ANSWERABLE' : 'unanswerable'} ${r.verdict}` +
        ` (${r.scope?.join(', ') ?? 'every release'}): ${r.explanation ?? ''}${r.must.length ? ` must cite: ${r.must.join(', ')}` : ''}`,
    )
const given = new Set(specs.map((s) => s.name))
const missing = readdirSync('evals/datasets', { withFileTypes: true })
  .filter((d) => d.isDirectory() && !given.has(d.name))
  .map((d) => d.name)
if (missing.length > 0) console.log(`not checked (no --set): ${missing.join(', ')}`)
if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2))
