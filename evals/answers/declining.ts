/**
 * What the engine still answers when the model answers nothing: every question of the given sets
 * asked with a chat model that always replies that its passages do not say (the worst case for
 * the rules that answer without the model's words, such as a release's own sentence that it lacks
 * the feature, answer/release-absent.ts). Prints each question that was answered, whether it is
 * answerable, whether a gold section is cited, and the answer's start. Follow-ups are left out.
 *
 *   npx tsx evals/answers/declining.ts --data <copy of the imported data> --models <dir> --collection mcp \
 *     mcp-docs mcp-docs-releases mcp-docs-people mcp-docs-answers mcp-docs-history mcp-docs-phrases
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { halfOf } from '../../src/engine/eval/gate-calibration'
import { isHit, loadQuestions } from '../../src/engine/eval/questions'
import { NOT_IN_CONTEXT, ScriptedChat } from '../../src/engine/answer/scripted.testutil'

const { values, positionals } = parseArgs({
  options: {
    data: { type: 'string' },
    models: { type: 'string' },
    collection: { type: 'string' },
    /** The share a passage sentence must hold to be a quoted answer (answer/key-sentences.ts QUOTE_SHARE); "off" for none. */
    'quote-share': { type: 'string' },
    /** Ask without the relevance gate, so that every question reaches the (declining) model. */
    'no-gate': { type: 'boolean' },
  },
  allowPositionals: true,
})
if (!values.data || !values.models || !values.collection || positionals.length === 0)
  throw new Error('needs --data, --models, --collection and the names of the question sets')
const engine = await Engine.open({ dataDir: path.resolve(values.data), modelsDir: path.resolve(values.models) })
const share = values['quote-share']
const quote = share === undefined ? {} : { quoteShare: share === 'off' ? null : Number(share) }
try {
  let asked = 0
  let answered = 0
  for (const set of positionals) {
    for (const q of await loadQuestions(`evals/datasets/${set}/questions.jsonl`)) {
      if (q.history.length) continue
      asked++
      const chat = new ScriptedChat([NOT_IN_CONTEXT, NOT_IN_CONTEXT, NOT_IN_CONTEXT])
      const r = await engine.ask(
        { question: q.question, scope: { collections: [values.collection], version: q.version ?? 'auto' } },
        { chat, useCache: false, ...quote, ...(values['no-gate'] ? { gate: false } : {}) },
      )
      if (r.abstained) continue
      answered++
      const gold = r.citations.some((c) =>
        q.gold.some((g) => isHit({ path: c.path, heading: c.heading, page: c.page ?? null, page_end: c.page ?? null }, g)),
      )
      const start = (r.answer ?? '').replace(/\n/g, ' ').slice(0, 120)
      const repairs = (await engine.answers.trace(r.trace_id))?.data.attempts?.at(-1)?.verification.repairs ?? []
      const how = repairs.find((x) => x.code === 'quoted_answer' || x.code === 'absence_quoted')
      const held = how?.message.match(/holding (\d+)%/)?.[1]
      const kind = `${how?.code ?? 'other'}${held ? ` ${held}%` : ''}`
      process.stdout.write(
        `${set} ${q.id} ${halfOf(set, q.id)} ${q.answerable ? 'answerable' : 'unanswerable'} ${kind} gold cited: ${gold} | ${start}\n`,
      )
    }
  }
  process.stdout.write(`${answered} of ${asked} questions answered with a model that declines every one\n`)
} finally {
  await engine.close()
}
