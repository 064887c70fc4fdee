import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import type { EvalQuestion } from './questions'
import { evalAnswers } from './answers'
import { OverlapReranker, ScriptedChat, reply } from '../answer/scripted.testutil'
import type { GenerateArgs } from '../core/model-ports'

/** The answer-eval harness scores what the pipeline did (scripted model, real engine, tiny corpus). */
describe('evalAnswers', () => {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const corpus = await tempDir()
    const data = await tempDir()
    cleanups.push(corpus.cleanup, data.cleanup)
    const files: Record<string, string> = {
      'specification/1.0/ping.md':
        '# Ping\n\n## Overview\n\nEither side can send a ping request to check the other end is responsive.\n',
      'specification/1.0/cancel.md': '# Cancellation\n\n## Flow\n\nSend a cancelled notification with the request id.\n',
    }
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(corpus.dir, rel)), { recursive: true })
      await writeFile(path.join(corpus.dir, rel), text)
    }
    engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'no-models') })
    await engine.importFolder(corpus.dir, { collection: 'docs' })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('reports answer rate, abstentions, citation checks and router mistakes', async () => {
    const q = (
      id: string,
      question: string,
      kind: EvalQuestion['kind'],
      gold: EvalQuestion['gold'],
      facts: string[] = [],
    ): EvalQuestion => ({
      id,
      question,
      version: '1.0',
      answerable: gold.length > 0,
      gold,
      facts,
      kind,
      history: [],
    })
    const questions = [
      q(
        'a1',
        'How does a ping request check the other end is responsive?',
        'paraphrase',
        [{ path: 'specification/1.0/ping.md', heading: 'Overview' }],
        ['Either side can send a ping request', 'The receiver answers within 30 seconds'],
      ),
      q('a2', 'How do I send a cancelled notification for a request id?', 'paraphrase', [
        { path: 'specification/1.0/cancel.md', heading: 'Flow' },
      ]),
      q('u1', "What's a good recipe for banana bread?", 'off-topic', []),
      q('u2', 'hello!', 'smalltalk', []),
    ]
    const cite = (args: GenerateArgs) => {
      const m = /<passage n="(\d+)" section="Ping &gt; Overview"/.exec(args.user)
      // Uncited: the verifier cites the one passage that says it (a repair the report counts).
      return m ? reply('Either side can send a ping request.', []) : reply('', [], { answerable: false })
    }
    // a1 answers from the ping passage; a2 gets an uncited reply twice and abstains.
    const chat = new ScriptedChat([cite, reply('No citation.', []), reply('Still none.', [])])
    const report = await evalAnswers(engine, questions, {
      collection: 'docs',
      chat,
      // Without quoted answers, so that a2 abstains (the report's counting is what is tested here).
      askOptions: { reranker: new OverlapReranker(), mode: 'keyword', quoteShare: null },
    })
    expect(report.per_question.map((p) => [p.id, p.abstained, p.reason])).toEqual([
      ['a1', false, null],
      ['a2', true, 'unverifiable_citations'],
      ['u1', true, 'off_topic'],
      ['u2', true, 'smalltalk'],
    ])
    expect(report).toMatchObject({
      questions: 4,
      answerable: 2,
      unanswerable: 2,
      answer_rate: 0.5,
      false_abstentions: [{ id: 'a2', reason: 'unverifiable_citations' }],
      abstention_accuracy: 1,
      abstention_reason_accuracy: 1,
      retrieval_gold_in_passages: 1,
      citation_validity: 1,
      first_reply_validity: 0.5,
      section_correct_citations: 1,
      route_mistakes: [],
      facts_covered: 0.5,
      // "Either side can send a ping request [1].": seven words, the marker is not one.
      words_per_answer: 7,
      answers_with_removed_sentences: 0,
      answers_with_layout_defects: 0,
      repaired_answers: 1,
      llm_calls: 3,
      fixture_models: false,
    })
    expect(report.gate_refusals_by_kind).toEqual({ paraphrase: { refused: 0, of: 2 } })
    expect(report.per_question.find((p) => p.id === 'a1')).toMatchObject({
      repairs: ['citation_filled'],
      answer: 'Either side can send a ping request [1].',
      facts_total: 2,
      facts_covered: 1,
      words: 7,
    })
    // The halves add up to the whole.
    expect(report.halves.fit.questions + report.halves.held_out.questions).toBe(4)
    expect(report.models.llm).toBe('scripted-chat')
    expect(report.gate_calibration).not.toBeNull()
  })

  it('asks a follow-up in the thread of the questions before it', async () => {
    const followUp: EvalQuestion = {
      id: 'f1',
      question: 'and how do I stop it?',
      version: '1.0',
      answerable: true,
      gold: [{ path: 'specification/1.0/cancel.md', heading: 'Flow' }],
      facts: [],
      kind: 'paraphrase',
      history: [{ question: 'How do I cancel a request?' }],
    }
    const seen: string[] = []
    const chat = new ScriptedChat([
      (args: GenerateArgs) => (seen.push(args.user), reply('', [], { answerable: false })),
      // The model's rewrite of the follow-up, then its answer.
      { standalone_question: 'How do I stop a request I cancelled?' },
      (args: GenerateArgs) => (seen.push(args.user), reply('', [], { answerable: false })),
    ])
    const report = await evalAnswers(engine, [followUp], {
      collection: 'docs',
      chat,
      askOptions: { reranker: new OverlapReranker(), mode: 'keyword', gate: false },
    })
    const trace = (await engine.answers.trace(report.per_question[0]!.trace_id))!.data
    // The earlier question was asked first, and the follow-up was rewritten from it.
    expect(seen[0]).toContain('How do I cancel a request?')
    expect(trace.rewrite).toMatchObject({ history: ['How do I cancel a request?'], used: 'model' })
    expect(chat.calls).toHaveLength(3)
  })
})
