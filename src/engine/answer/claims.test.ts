import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { AskResult } from '../../shared/answer'
import { OverlapReranker, ScriptedChat, reply } from './scripted.testutil'

/**
 * Numbers and quotes an answer states that its cited passages do not contain: they go into the
 * corrective retry when there is one, and whatever is left reaches the result as
 * `unverified_claims` (the renderer marks them), never silently as part of a verified answer.
 */

const DOC = '# Limits\n\n## Rate limits\n\nThe server accepts 1,000 requests per minute and answers the rest with HTTP 429.\n'
const QUESTION = 'Which rate limits does the server set for requests per minute?'

describe('unsupported claims in an answer', () => {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const c = await tempDir()
    const d = await tempDir()
    cleanups.push(c.cleanup, d.cleanup)
    await mkdir(path.join(c.dir, 'docs'), { recursive: true })
    await writeFile(path.join(c.dir, 'docs', 'limits.md'), DOC)
    engine = await Engine.open({ dataDir: d.dir, modelsDir: path.join(d.dir, 'no-models') })
    expect((await engine.ingest(c.dir, { collection: 'limits' })).failed).toEqual([])
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

  it('keeps the answer but returns the unsupported number and quote as unverified claims', async () => {
    const chat = new ScriptedChat([reply('It accepts 1,500 requests per minute and then says "slow down" [1].', [1])])
    const result = await ask(chat)
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.unverified_claims).toEqual(['1,500', 'slow down'])
    expect(result.warnings).toHaveLength(2)
    // No second model call for claims alone: the marks in the answer say what is not backed.
    expect(chat.calls).toHaveLength(1)
  })

  it('has no unverified claims when the numbers are the passage’s, however grouped', async () => {
    const result = await ask(new ScriptedChat([reply('It accepts 1000 requests per minute, then HTTP 429 [1].', [1])]))
    expect(result.unverified_claims).toEqual([])
    expect(result.warnings).toEqual([])
  })

  it('asks the corrective retry to fix unsupported claims along with the citation problems', async () => {
    const chat = new ScriptedChat([
      reply('It accepts 1,500 requests per minute [1][7].', [1, 7]),
      reply('It accepts 1,000 requests per minute [1].', [1]),
    ])
    const result = await ask(chat)
    expect(chat.calls).toHaveLength(2)
    expect(chat.calls[1]!.user).toContain('[7] does not match any passage')
    expect(chat.calls[1]!.user).toContain('The number 1,500 does not appear in the cited passages. Copy it exactly')
    expect(result).toMatchObject({ abstained: false, unverified_claims: [] })
  })
})
