/**
 * How many passages, and how much of each, the answer model reads (issue "The real path at laptop
 * speed", "Read less"), chosen without the model on the `fit` half of each golden set: for each
 * configuration, the passages the pipeline would give the model (the same search, the same
 * trimming, answer/trim.ts), how many prompt tokens they cost with the chat model's own tokenizer,
 * whether a gold section is among them, and how many of the question's facts their text still
 * holds (answer/facts.ts). The chosen configuration is then measured with the model on the
 * `held_out` half (`docent eval answers`, docs/benchmarks.md).
 *
 *   npx tsx evals/answers/passage-budget.ts --models <dir> \
 *     --set mcp-docs=<data dir>:<collection>:evals/datasets/mcp-docs/questions.jsonl [--set ...] [--json out.json]
 */
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { factCovered } from '../../src/engine/answer/facts'
import { halfOf } from '../../src/engine/eval/gate-calibration'
import { ANSWER_SYSTEM_PROMPT, buildAnswerUserPrompt, renderPassage } from '../../src/engine/answer/prompt'
import { toPromptPassage } from '../../src/engine/answer/stages/passages'
import { budgetAt, questionWeights, trimPassage } from '../../src/engine/answer/trim'
import { isHit, loadQuestions } from '../../src/engine/eval/questions'
import type { SearchHit } from '../../src/shared/search'

const KS = [4, 5, 6]
/** The first passage's budget; later ones get less (trim.ts budgetAt), as the pipeline does. */
const BUDGETS = [120, 160, 200, 240, 300, Infinity]

interface Row {
  set: string
  id: string
  half: 'fit' | 'held_out'
  k: number
  budget: number
  prompt_tokens: number
  gold_in_passages: boolean
  facts: number
  facts_present: number
}

async function collect(spec: string, models: string): Promise<Row[]> {
  const [name, rest] = spec.split('=') as [string, string]
  const [data, collection, file] = rest.split(':') as [string, string, string]
  const engine = await Engine.open({ dataDir: data, modelsDir: models, readOnly: true })
  const rows: Row[] = []
  try {
    const chat = (await engine.chatModel()).model
    if (!chat) throw new Error(`no chat model in ${models}`)
    const count = (t: string) => chat.countTokens!(t)
    const fixed = count(ANSWER_SYSTEM_PROMPT)
    for (const q of await loadQuestions(file)) {
      if (!q.answerable) continue
      const res = await engine.search(q.question, { scope: { collections: [collection], version: q.version ?? 'auto' }, mode: 'hybrid', k: Math.max(...KS), rerank: false })
      const hits: SearchHit[] = res.results
      const gold = (h: SearchHit) => q.gold.some((g) => isHit({ path: h.path, heading: h.heading, page: h.page, page_end: h.page }, g))
      for (const k of KS)
        for (const budget of BUDGETS) {
          const terms = questionWeights(q.question, hits.slice(0, k).map((h) => h.text))
          const passages = hits.slice(0, k).map((h, i) => ({
            ...toPromptPassage(h, i),
            text: budget === Infinity ? h.text : trimPassage(h.text, q.question, { budget: budgetAt(budget, i), countTokens: count, terms }).text,
          }))
          const user = buildAnswerUserPrompt(q.question, passages, res.scope_label ?? '')
          const text = passages.map(renderPassage).join('\n')
          rows.push({
            set: name,
            id: q.id,
            half: halfOf(name, q.id),
            k,
            budget,
            // ChatML wraps system and user in a dozen tokens (<|im_start|>system … <|im_end|>).
            prompt_tokens: fixed + count(user) + 12,
            gold_in_passages: hits.slice(0, k).some(gold),
            facts: q.facts.length,
            facts_present: q.facts.filter((f) => factCovered(f, text)).length,
          })
        }
    }
  } finally {
    await engine.close()
  }
  return rows
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { models: { type: 'string' }, set: { type: 'string', multiple: true }, json: { type: 'string' } } })
  const rows: Row[] = []
  for (const spec of values.set ?? []) rows.push(...(await collect(spec, values.models!)))
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b)
    return s.length ? s[Math.floor((s.length - 1) / 2)]! : 0
  }
  const table: Record<string, unknown>[] = []
  for (const half of ['fit', 'held_out'] as const)
    for (const k of KS)
      for (const budget of BUDGETS) {
        const mine = rows.filter((r) => r.half === half && r.k === k && r.budget === budget)
        const facts = mine.reduce((s, r) => s + r.facts, 0)
        const line = {
          half,
          k,
          budget: budget === Infinity ? 'whole' : budget,
          questions: mine.length,
          median_prompt_tokens: median(mine.map((r) => r.prompt_tokens)),
          gold_in_passages: +(mine.filter((r) => r.gold_in_passages).length / Math.max(1, mine.length)).toFixed(3),
          facts_present: +(mine.reduce((s, r) => s + r.facts_present, 0) / Math.max(1, facts)).toFixed(3),
        }
        table.push(line)
        process.stdout.write(
          `${half.padEnd(8)} k=${k} budget=${String(line.budget).padEnd(5)} n=${line.questions} median prompt ${line.median_prompt_tokens} tokens, gold in passages ${line.gold_in_passages}, facts present ${line.facts_present}\n`,
        )
      }
  if (values.json) await writeFile(values.json, JSON.stringify({ table, rows }, null, 2) + '\n')
}

await main()
