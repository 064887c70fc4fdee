/**
 * How the key-sentence rule (src/engine/answer/key-sentences.ts) was chosen, without the model: the
 * answers a real-model answer eval recorded (`docent eval answers --json`) are replayed with the
 * sentences the rule would add from the same passages (the same search, k = 6, no reranker), and
 * the facts of each question (answer/facts.ts) are counted in the answer alone and in the answer
 * with the added sentences. Variants of the rule (passages read, sentences added, minimum score)
 * are printed beside the engine's; the engine's was chosen on the `fit` half of the MCP golden set,
 * and the held-out halves are measured with the model (docs/benchmarks.md).
 *
 *   npx tsx evals/answers/key-sentences.ts --models <dir> --data <data dir> --collection mcp \
 *     --questions evals/datasets/mcp-docs/questions.jsonl --set mcp-docs --half fit \
 *     --report evals/reports/answers-mcp-docs-fit-1.json
 */
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { factCovered } from '../../src/engine/answer/facts'
import { KEY_PASSAGES, KEY_SENTENCES, MIN_SCORE, keySentences } from '../../src/engine/answer/key-sentences'
import { stripMarkers } from '../../src/engine/answer/match'
import { toPromptPassage } from '../../src/engine/answer/stages/passages'
import { halfOf } from '../../src/engine/eval/gate-calibration'
import { isHit, loadQuestions } from '../../src/engine/eval/questions'

interface Recorded {
  id: string
  abstained: boolean
  answer: string | null
  section_correct: boolean
}

const { values } = parseArgs({
  options: {
    models: { type: 'string' },
    data: { type: 'string' },
    collection: { type: 'string' },
    questions: { type: 'string' },
    set: { type: 'string' },
    half: { type: 'string' },
    report: { type: 'string' },
  },
})
const recorded = new Map<string, Recorded>(
  (JSON.parse(await readFile(values.report!, 'utf8')).per_question as Recorded[]).map((r) => [r.id, r]),
)
const VARIANTS: { passages: number; sentences: number; min: number; share?: number }[] = [
  { passages: KEY_PASSAGES, sentences: KEY_SENTENCES, min: MIN_SCORE },
  { passages: 1, sentences: KEY_SENTENCES, min: MIN_SCORE },
  { passages: 6, sentences: KEY_SENTENCES, min: MIN_SCORE },
  { passages: KEY_PASSAGES, sentences: 1, min: MIN_SCORE },
  { passages: KEY_PASSAGES, sentences: 3, min: MIN_SCORE },
  { passages: KEY_PASSAGES, sentences: KEY_SENTENCES, min: 3 },
  { passages: KEY_PASSAGES, sentences: KEY_SENTENCES, min: MIN_SCORE, share: 0.2 },
  { passages: KEY_PASSAGES, sentences: KEY_SENTENCES, min: MIN_SCORE, share: 0.3 },
  { passages: 3, sentences: 3, min: MIN_SCORE, share: 0.2 },
  { passages: 3, sentences: 4, min: MIN_SCORE, share: 0.3 },
]
const totals = VARIANTS.map(() => ({ facts: 0, words: 0, gold: 0, picks: 0, offGold: 0 }))
let facts = 0
let alone = 0
let answered = 0
let goldCited = 0
const engine = await Engine.open({ dataDir: values.data!, modelsDir: values.models!, readOnly: true })
try {
  for (const q of await loadQuestions(values.questions!)) {
    const r = recorded.get(q.id)
    // Answered questions only, as the answer eval counts facts.
    if (!q.answerable || halfOf(values.set!, q.id) !== values.half!.replace('-', '_') || !r || r.abstained || !r.answer) continue
    answered++
    if (r.section_correct) goldCited++
    const res = await engine.search(q.question, {
      scope: { collections: [values.collection!], version: q.version ?? 'auto' },
      mode: 'hybrid',
      k: 6,
      rerank: false,
    })
    const passages = res.results.map((h, i) => toPromptPassage(h, i))
    const text = new Map(res.results.map((h) => [h.chunk_id, h.text]))
    const gold = (n: number) => {
      const h = res.results[n - 1]!
      return q.gold.some((g) => isHit({ path: h.path, heading: h.heading, page: h.page, page_end: h.page }, g))
    }
    facts += q.facts.length
    alone += q.facts.filter((f) => factCovered(f, r.answer!)).length
    VARIANTS.forEach((v, i) => {
      const picks = keySentences([stripMarkers(r.answer!)], passages, (p) => text.get(p.chunk_id)!, q.question, {
        sentences: v.sentences,
        minScore: v.min,
        passages: v.passages,
        minShare: v.share ?? 0,
      })
      const added = picks.map((p) => p.unit.text)
      const t = totals[i]!
      t.facts += q.facts.filter((f) => factCovered(f, [r.answer!, ...added].join(' '))).length
      t.words += added.join(' ').split(/\s+/).filter(Boolean).length
      t.gold += r.section_correct || picks.some((p) => gold(p.passage.n)) ? 1 : 0
      t.picks += picks.length
      t.offGold += picks.filter((p) => !gold(p.passage.n)).length
    })
  }
} finally {
  await engine.close()
}
const pct = (a: number, b: number) => `${a}/${b} (${((100 * a) / Math.max(1, b)).toFixed(1)}%)`
process.stdout.write(
  `${values.set} ${values.half}: ${answered} answered; the recorded answers alone: facts ${pct(alone, facts)}, gold cited ${pct(goldCited, answered)}\n`,
)
VARIANTS.forEach((v, i) => {
  const t = totals[i]!
  const engineRule = i === 0 ? ' (the engine)' : ''
  process.stdout.write(
    `  + key sentences, ${v.passages} passages, ${v.sentences} sentences, score >= ${v.min}${v.share ? ` and ${v.share} of the question` : ''}${engineRule}: facts ${pct(t.facts, facts)}, gold cited ${pct(t.gold, answered)}, ${(t.words / Math.max(1, answered)).toFixed(1)} words added per answer, ${t.offGold} of ${t.picks} added sentences from passages not gold\n`,
  )
})
