/**
 * The answer eval again, with the model's replies of an earlier run instead of the model: what a
 * change after generation (verification, release rules, key sentences, layout) does to the very
 * same drafts, in seconds instead of the half hour a real-model run takes on two cores.
 *
 * The replies come from the traces an `eval answers --data <dir>` run stored (the latest trace of
 * each question; its answer and correction calls, in order). Each question is then asked again
 * through the engine as it is now, on a copy of the same imported data, with a chat model that
 * returns those replies. The drafts match the prompts they were written for only while retrieval
 * and the prompt are unchanged: a question whose model read other passages than in the recorded run
 * is named (`passages_changed`), and a change before generation needs a real-model run. Questions with a
 * conversation history (follow-ups, whose rewrite also calls the model) are left out.
 *
 *   npx tsx evals/answers/replay.ts --traces <data dir of the recorded run> --data <copy of the imported data> \
 *     --models <dir> --collection mcp --questions evals/datasets/mcp-docs/questions.jsonl [--half fit|held-out] [--json out.json]
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { ChatModel, GenerateJsonArgs, GenerateResult } from '../../src/engine/core/model-ports'
import type { CloseRule } from '../../src/engine/answer/close-sentences'
import { Engine } from '../../src/engine/engine'
import { evalAnswers } from '../../src/engine/eval/answers'
import { halfOf } from '../../src/engine/eval/gate-calibration'
import { loadQuestions, type EvalQuestion } from '../../src/engine/eval/questions'

const { values } = parseArgs({
  options: {
    traces: { type: 'string' },
    data: { type: 'string' },
    models: { type: 'string' },
    collection: { type: 'string' },
    questions: { type: 'string' },
    half: { type: 'string' },
    json: { type: 'string' },
    /** The share a passage sentence must hold to be a quoted answer (answer/key-sentences.ts QUOTE_SHARE); "off" for none. */
    'quote-share': { type: 'string' },
    /** The rule that copies sentences close in meaning to the question (answer/close-sentences.ts): at most this many; */
    'close-max': { type: 'string' },
    /** the cosine they must reach, or "answer" for the mean of the answer's own sentences; */
    'close-floor': { type: 'string' },
    /** "cited" (the passages the answer cites) or "read" (every passage the model read). */
    'close-from': { type: 'string' },
  },
})
if (!values.traces || !values.data || !values.models || !values.collection || !values.questions)
  throw new Error('needs --traces, --data, --models, --collection and --questions')
if (path.resolve(values.traces) === path.resolve(values.data))
  throw new Error('--data must be another copy: the replay stores traces of its own')

interface Recorded {
  raws: string[]
  /** The passages the model read, to tell when the prompt has changed since. */
  passages: string[]
}
const set = path.basename(path.dirname(path.resolve(values.questions)))
const half = values.half?.replace('-', '_')
const questions = (await loadQuestions(values.questions)).filter(
  (q) => q.history.length === 0 && (!half || halfOf(set, q.id) === half),
)

// The replies of the recorded run, per question.
const recorded = new Map<string, Recorded>()
{
  const traces = await Engine.open({
    dataDir: path.resolve(values.traces),
    modelsDir: path.join(path.resolve(values.traces), 'no-models'),
    readOnly: true,
  })
  try {
    const { rows } = await traces.db.query<{ question: string; data: { attempts?: { raw: string }[]; passages?: string[] } }>(
      'SELECT question, data FROM traces ORDER BY created_at',
    )
    for (const r of rows)
      recorded.set(r.question, {
        raws: (r.data.attempts ?? []).map((a) => a.raw),
        passages: r.data.passages ?? [],
      })
  } finally {
    await traces.close()
  }
}

/** Replies to each question's calls in the order they were recorded. */
class ReplayChat implements ChatModel {
  readonly info = { gpu: false as const, contextSize: 8192, trainContextSize: 8192 }
  readonly id = 'replay'
  private current: { q: EvalQuestion; next: number } | null = null
  readonly exhausted: string[] = []
  start(q: EvalQuestion): void {
    this.current = { q, next: 0 }
  }
  async generateJson(args: GenerateJsonArgs): Promise<GenerateResult> {
    const c = this.current!
    const rec = recorded.get(c.q.question)
    const raw = rec?.raws[c.next++]
    if (raw === undefined) {
      this.exhausted.push(c.q.id)
      throw new Error(`no recorded reply for call ${c.next} of ${c.q.id}`)
    }
    for (let i = 0; i < raw.length; i += 16) args.onToken?.(raw.slice(i, i + 16))
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      parsed = undefined
    }
    return { raw, parsed, tokensIn: Math.ceil(args.user.length / 4), tokensOut: Math.ceil(raw.length / 4), stopReason: 'eos' }
  }
}

/** The close-sentence rule's choices given on the command line; the engine's for the rest. */
function closeRule(): CloseRule {
  const floor = values['close-floor']
  const from = values['close-from']
  if (from !== undefined && from !== 'cited' && from !== 'read') throw new Error('--close-from is "cited" or "read"')
  return {
    ...(values['close-max'] === undefined ? {} : { max: Number(values['close-max']) }),
    ...(floor === undefined ? {} : { floor: floor === 'answer' ? 'answer' : Number(floor) }),
    ...(from === undefined ? {} : { from }),
  }
}

const chat = new ReplayChat()
const engine = await Engine.open({ dataDir: path.resolve(values.data), modelsDir: path.resolve(values.models) })
try {
  const missing = questions.filter((q) => !recorded.has(q.question)).map((q) => q.id)
  const asked = questions.filter((q) => recorded.has(q.question))
  const byId = new Map(asked.map((q) => [q.id, q]))
  // evalAnswers asks in order; the chat is told which question comes next from the question's own callback.
  let i = 0
  chat.start(asked[0]!)
  const report = await evalAnswers(engine, asked, {
    collection: values.collection,
    set,
    chat,
    askOptions: {
      ...(values['quote-share'] === undefined
        ? {}
        : { quoteShare: values['quote-share'] === 'off' ? null : Number(values['quote-share']) }),
      closeRule: closeRule(),
    },
    onQuestion: () => {
      i++
      if (asked[i]) chat.start(asked[i]!)
    },
  })
  const passagesChanged: string[] = []
  for (const row of report.per_question) {
    const now = (await engine.answers.trace(row.trace_id))?.data.passages ?? []
    const then = recorded.get(byId.get(row.id)!.question)!.passages
    if (now.join() !== then.join()) passagesChanged.push(row.id)
  }
  const out = {
    replay_of: path.resolve(values.traces),
    replay_note: 'The model was not run: each question got the replies its latest trace in --traces recorded.',
    left_out: {
      follow_ups: (await loadQuestions(values.questions)).filter((q) => q.history.length > 0).map((q) => q.id),
      not_recorded: missing,
    },
    replies_ran_out: chat.exhausted,
    passages_changed: passagesChanged,
    ...report,
  }
  if (values.json) await writeFile(values.json, JSON.stringify(out, null, 2) + '\n')
  const h = (name: 'fit' | 'held_out') => {
    const s = report.halves[name]
    return `${name}: ${s.questions} questions, answered ${Math.round(s.answer_rate * s.answerable)}/${s.answerable} answerable, false abstentions ${s.false_abstentions.map((f) => f.id).join(' ') || 'none'}, wrong answers to unanswerable ${s.wrong_answers_to_unanswerable.join(' ') || 'none'}, gold cited ${s.section_correct_citations}, facts ${s.facts_covered}, words per answer ${s.words_per_answer}, layout defects ${s.answers_with_layout_defects}`
  }
  process.stdout.write(
    `${set} (replayed from ${values.traces}): ${asked.length} questions; not recorded: ${missing.join(' ') || 'none'}; replies ran out: ${chat.exhausted.join(' ') || 'none'}; other passages read: ${passagesChanged.join(' ') || 'none'}\n${h('fit')}\n${h('held_out')}\n`,
  )
} finally {
  await engine.close()
}
