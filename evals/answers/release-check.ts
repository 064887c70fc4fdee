/**
 * The release rules (src/engine/answer/release.ts) on every golden question, without any model:
 * which questions they would answer with "the <release> docs never mention X" or "only guides
 * mention X" before the model runs, split by whether the question is answerable. A refusal of an
 * answerable question is a false refusal; an absent-feature question that passes goes to the model.
 *
 *   npx tsx evals/answers/release-check.ts --data <dir with the MCP docs imported> --collection mcp \
 *     --questions evals/datasets/mcp-docs/questions.jsonl [--questions ...]
 */
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { loadQuestions } from '../../src/engine/eval/questions'
import { checkRelease } from '../../src/engine/answer/release'
import { resolveSearchScope } from '../../src/engine/retrieve/search'

const { values } = parseArgs({
  options: { data: { type: 'string' }, collection: { type: 'string', default: 'mcp' }, questions: { type: 'string', multiple: true } },
})
const engine = await Engine.open({ dataDir: values.data!, modelsDir: `${values.data}/no-models`, readOnly: true })
const rows: { set: string; id: string; answerable: boolean; kind: string; verdict: string; explanation: string | null; must: string[] }[] = []
for (const file of values.questions ?? []) {
  const set = file.split('/').at(-2)!
  for (const q of await loadQuestions(file)) {
    if (q.kind === 'smalltalk' || q.kind === 'off-topic') continue
    const scope = await resolveSearchScope(engine.db, { collections: [values.collection!], version: q.version ?? 'auto' }, q.question)
    const r = await checkRelease(engine.db, scope, q.question)
    rows.push({ set, id: q.id, answerable: q.answerable, kind: q.kind, verdict: r.trace.verdict, explanation: r.explanation, must: r.mustCite })
  }
}
await engine.close()
const refused = (r: (typeof rows)[number]) => r.verdict === 'never_mentioned' || r.verdict === 'guides_only'
for (const set of [...new Set(rows.map((r) => r.set))]) {
  const mine = rows.filter((r) => r.set === set)
  const ans = mine.filter((r) => r.answerable)
  const un = mine.filter((r) => !r.answerable)
  console.log(
    `${set}: answerable refused ${ans.filter(refused).length}/${ans.length}; unanswerable refused ${un.filter(refused).length}/${un.length}; scoped ${mine.filter((r) => r.verdict !== 'not_scoped').length}/${mine.length}`,
  )
}
for (const r of rows) if (refused(r) || (!r.answerable && r.kind === 'absent-feature'))
  console.log(`  ${r.set} ${r.id} ${r.answerable ? 'ANSWERABLE' : 'unanswerable'} ${r.verdict}: ${r.explanation ?? ''} ${r.must.length ? `must cite: ${r.must.join(', ')}` : ''}`)
