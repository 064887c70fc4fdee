/**
 * The relevance gate's off-topic floor (answer/gate.ts OFF_TOPIC_COSINE): the best cosine
 * similarity of each question's passages in its scope, by question kind and half of its set
 * (gate-calibration.ts halfOf), and which questions a floor refuses. The floor must sit below every
 * answerable question of the fit half and above the off-topic ones; the held-out half checks it.
 *
 *   npx tsx evals/answers/off-topic-floor.ts --models <dir> [--floor 0.2] \
 *     --set mcp-docs=<data dir>:<collection>:evals/datasets/mcp-docs/questions.jsonl [--set ...]
 */
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { offTopicCosineFor } from '../../src/engine/answer/gate'
import { halfOf } from '../../src/engine/eval/gate-calibration'
import { classifySmalltalk } from '../../src/engine/answer/route'
import { loadQuestions } from '../../src/engine/eval/questions'

const { values } = parseArgs({ options: { models: { type: 'string' }, set: { type: 'string', multiple: true }, floor: { type: 'string' } } })
const rows: { set: string; id: string; half: string; kind: string; answerable: boolean; cosine: number | null }[] = []
let embedderId: string | null = null
for (const spec of values.set ?? []) {
  const [name, rest] = spec.split('=') as [string, string]
  const [data, collection, file] = rest.split(':') as [string, string, string]
  const engine = await Engine.open({ dataDir: data, modelsDir: values.models!, readOnly: true })
  try {
    embedderId ??= (await engine.embedder()).model?.id ?? null
    for (const q of await loadQuestions(file)) {
      if (classifySmalltalk(q.question)) continue
      const r = await engine.search(q.question, { scope: { collections: [collection], version: q.version ?? 'auto' }, mode: 'vector', k: 1 })
      rows.push({ set: name, id: q.id, half: halfOf(name, q.id), kind: q.kind, answerable: q.answerable, cosine: r.results[0]?.scores.cosine ?? null })
    }
  } finally {
    await engine.close()
  }
}
const floor = values.floor !== undefined ? Number(values.floor) : offTopicCosineFor(embedderId)
console.log(`embedder ${embedderId}, floor ${floor}`)
for (const half of ['fit', 'held_out']) {
  const mine = rows.filter((r) => r.half === half)
  const refused = (r: (typeof rows)[number]) => floor !== null && r.cosine !== null && r.cosine < floor
  const a = mine.filter((r) => r.answerable)
  const off = mine.filter((r) => r.kind === 'off-topic')
  const minA = Math.min(...a.map((r) => r.cosine ?? 1))
  const maxOff = Math.max(...off.map((r) => r.cosine ?? 0))
  console.log(
    `${half}: answerable refused ${a.filter(refused).length}/${a.length} (lowest best cosine ${minA.toFixed(3)}); off-topic refused ${off.filter(refused).length}/${off.length} (highest ${maxOff.toFixed(3)})`,
  )
  for (const r of mine.filter((r) => !r.answerable || refused(r)))
    console.log(`  ${r.set} ${r.id} ${r.kind} ${r.answerable ? 'answerable' : 'unanswerable'} cosine ${r.cosine?.toFixed(3)}${refused(r) ? ' REFUSED' : ''}`)
}
