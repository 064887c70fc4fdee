/**
 * Where the facts a recorded answer misses are, and what the requirement sentences of the passages
 * it cites would add (answer/requirements.ts), without the model. For each answered question of an
 * `eval answers --data <dir> --json` run, the passages the model read are taken from its trace; each
 * fact the answer does not cover (answer/facts.ts) is looked for in those passages, whole and in a
 * single sentence or item. Then the variants of the requirement rule add their sentences to the
 * recorded answers and the facts are counted again, with the words they add. The rule was chosen
 * on the fit halves this way, then replayed through the engine (replay.ts) on every half.
 *
 *   npx tsx evals/answers/missed-facts.ts --traces <data dir of the recorded run> \
 *     --report <its --json report> --questions evals/datasets/mcp-docs/questions.jsonl
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { factCovered } from '../../src/engine/answer/facts'
import { stripMarkers } from '../../src/engine/answer/match'
import { requirementPicks } from '../../src/engine/answer/requirements'
import { splitUnits } from '../../src/engine/answer/sentences'
import { loadQuestions } from '../../src/engine/eval/questions'

const { values } = parseArgs({
  options: { traces: { type: 'string' }, report: { type: 'string' }, questions: { type: 'string' } },
})
if (!values.traces || !values.report || !values.questions) throw new Error('needs --traces, --report and --questions')

interface Recorded {
  id: string
  answerable: boolean
  abstained: boolean
  answer: string | null
  trace_id: string
}
interface Read {
  facts: string[]
  answer: string
  question: string
  /** The passages the model read, best first, and whether a sentence the model wrote cites each. */
  passages: { text: string; cited: boolean }[]
}

const questions = new Map((await loadQuestions(values.questions)).map((q) => [q.id, q]))
const recorded = (JSON.parse(await readFile(values.report, 'utf8')) as { per_question: Recorded[] }).per_question
const engine = await Engine.open({
  dataDir: path.resolve(values.traces),
  modelsDir: path.join(path.resolve(values.traces), 'no-models'),
})
const read: Read[] = []
try {
  for (const r of recorded) {
    const q = questions.get(r.id)
    if (!q || !r.answerable || r.abstained || !r.answer) continue
    const data = (await engine.answers.trace(r.trace_id))?.data as
      { trim?: { passages: { chunk_id: string }[] }; claims?: { ok: boolean; cited: number[] }[] } | undefined
    const ids = (data?.trim?.passages ?? []).map((p) => p.chunk_id)
    const cited = new Set((data?.claims ?? []).filter((c) => c.ok).flatMap((c) => c.cited))
    const { rows } = await engine.db.query<{ id: string; text: string }>(
      'SELECT id, text FROM chunks WHERE id = ANY($1::text[])',
      [ids],
    )
    read.push({
      facts: q.facts ?? [],
      answer: stripMarkers(r.answer),
      question: q.question,
      passages: ids.map((id, i) => ({ text: rows.find((x) => x.id === id)?.text ?? '', cited: cited.has(i + 1) })),
    })
  }
} finally {
  await engine.close()
}

// Where the missed facts are.
const where = new Map<string, number>()
const count = (k: string) => where.set(k, (where.get(k) ?? 0) + 1)
for (const x of read)
  for (const f of x.facts) {
    if (factCovered(f, x.answer)) {
      count('in the answer')
      continue
    }
    const at = x.passages.findIndex((p) => factCovered(f, p.text))
    if (at < 0) count('in no passage the model read')
    else
      count(
        `in passage ${at === 0 ? '1 (the best)' : '2-6'}, ${splitUnits(x.passages[at]!.text).some((u) => factCovered(f, u.text)) ? 'one sentence' : 'across sentences'}`,
      )
  }
const total = read.reduce((n, x) => n + x.facts.length, 0)
console.log(`${path.basename(values.report)}: ${read.length} answers, ${total} facts`)
for (const [k, n] of [...where].sort()) console.log(`  ${k}: ${n}`)

// The requirement sentences a variant adds to one answer: the engine's picking (answer/requirements.ts) over other passages and counts.
const requirements = (x: Read, max: number, passages: number, citedOnly: boolean): string[] =>
  requirementPicks(
    x.passages.slice(0, passages).filter((p) => !citedOnly || p.cited),
    (p) => p.text,
    x.question,
    [x.answer],
    max,
  ).map((r) => r.text)
const covered = (x: Read, extra: string[]) => x.facts.filter((f) => factCovered(f, [x.answer, ...extra].join('\n'))).length
const before = read.reduce((n, x) => n + covered(x, []), 0)
console.log(`  recorded answers: facts ${before}/${total} (${((100 * before) / total).toFixed(1)}%)`)
for (const [max, passages, citedOnly] of [
  [1, 1, true],
  [2, 1, true],
  [2, 1, false],
  [2, 2, true],
  [2, 6, true],
  [3, 6, true],
  [3, 2, false],
] as const) {
  const added = read.map((x) => requirements(x, max, passages, citedOnly))
  const after = read.reduce((n, x, i) => n + covered(x, added[i]!), 0)
  const words = added.flat().join(' ').split(/\s+/).filter(Boolean).length
  console.log(
    `  + at most ${max} requirement sentence(s) of the ${passages === 1 ? 'best passage' : passages === 6 ? 'passages' : `${passages} best passages`}${citedOnly ? ' the answer cites' : ''}: facts ${after}/${total} (${((100 * after) / total).toFixed(1)}%), ${(words / Math.max(1, read.length)).toFixed(1)} words added per answer${max === 2 && passages === 6 && citedOnly ? ' (the engine)' : ''}`,
  )
}
