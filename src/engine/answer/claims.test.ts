import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { AskResult } from '../../shared/answer'
import { OverlapReranker, ScriptedChat, reply } from './scripted.testutil'

/**
 * A sentence whose numbers, quotes or words its cited passages do not contain is removed from the
 * answer and listed as removed, with its reason: never shown as verified. When no sentence is
 * left, the corrective retry is told why each one failed.
 */

const DOC = '# Limits\n\n## Rate limits\n\nThe server accepts 1,000 requests per minute and answers the rest with HTTP 429.\n'
const QUESTION = 'Which rate limits does the server set for requests per minute?'

describe('sentences their cited passages do not support', () => {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const c = await tempDir()
    const d = await tempDir()
    cleanups.push(c.cleanup, d.cleanup)
    await mkdir(path.join(c.dir, 'docs'), { recursive: true })
    await writeFile(path.join(c.dir, 'docs', 'limits.md'), DOC)
    engine = await Engine.open({ dataDir: d.dir, modelsDir: path.join(d.dir, 'no-models') })
    expect((await engine.importFolder(c.dir, { collection: 'limits' })).failed).toEqual([])
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  const ask = async (chat: ScriptedChat) => {
    const result = await engine.ask(
      { question: QUESTION, scope: { collections: ['limits'], version: 'all' } },
      { chat, reranker: new OverlapReranker(), mode: 'keyword', useCache: false },
    )
    expect(AskResult.safeParse(result).success).toBe(true)
    return result
  }

  it('removes a sentence its cited passage does not say, shows it as removed, and keeps the rest', async () => {
    const chat = new ScriptedChat([reply('It accepts 1,000 requests per minute [1]. Above that it says "slow down" [1].', [1])])
    const result = await ask(chat)
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    // The model's sentence that checked out, then the passage's own sentence on what the removed one
    // got wrong, copied (answer/key-sentences.ts).
    expect(result.sentences).toEqual([
      { text: 'It accepts 1,000 requests per minute.', citations: [1] },
      { text: 'The server accepts 1,000 requests per minute and answers the rest with HTTP 429.', citations: [1], added: 'quote' },
    ])
    expect(result.removed).toEqual([
      {
        text: 'Above that it says "slow down".',
        cited: [1],
        code: 'unsupported_quote',
        reason: 'the cited passages do not contain "slow down"',
      },
    ])
    expect(result.warnings).toEqual(['1 sentence was removed: the cited passages do not say it.'])
    // Nothing unsupported is left in the answer to mark.
    expect(result.unverified_claims).toEqual([])
    // No second model call: one sentence survived and answers the question.
    expect(chat.calls).toHaveLength(1)
    const trace = (await engine.answers.trace(result.trace_id))!.data
    expect(trace.claims!.map((c) => [c.ok, c.failure])).toEqual([
      [true, null],
      [false, 'unsupported_quote'],
    ])
  })

  it('keeps numbers that are the passage’s, however grouped', async () => {
    const result = await ask(
      new ScriptedChat([reply('It accepts 1000 requests per minute, then answers with HTTP 429 [1].', [1])]),
    )
    expect(result.removed).toEqual([])
    expect(result.warnings).toEqual([])
  })

  it('asks the corrective retry to fix an answer none of whose sentences checks out', async () => {
    const chat = new ScriptedChat([
      reply('It accepts 1,500 requests per minute [1][7].', [1, 7]),
      reply('It accepts 1,000 requests per minute [1].', [1]),
    ])
    const result = await ask(chat)
    expect(chat.calls).toHaveLength(2)
    expect(chat.calls[1]!.user).toContain('the cited passages do not contain the number 1,500')
    expect(result).toMatchObject({ abstained: false, removed: [] })
    expect(result.sentences?.filter((x) => !x.added)).toEqual([{ text: 'It accepts 1,000 requests per minute.', citations: [1] }])
  })
})
