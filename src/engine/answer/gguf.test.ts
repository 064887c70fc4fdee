import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { fixtureModels, tempDir } from '../../test-support/paths'
import { AskResult, type AskEvent } from '../../shared/answer'

/**
 * End to end through the real models: the tiny random GGUF (node-llama-cpp), the tiny random
 * embedder and cross-encoder. Random weights say nothing about quality: this proves the plumbing
 * (grammar-constrained JSON, streaming, verification of whatever the model wrote, trace).
 */
describe('ask through the fixture GGUF model', () => {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const corpus = await tempDir()
    const data = await tempDir()
    cleanups.push(corpus.cleanup, data.cleanup)
    const files: Record<string, string> = {
      'specification/2025-03-26/ping.md':
        '# Ping\n\n## Overview\n\nEither side can send a ping request. The receiver MUST respond promptly with an empty result.\n',
      'specification/2025-03-26/cancel.md':
        '# Cancellation\n\n## Flow\n\nSend notifications/cancelled with the requestId and an optional reason.\n',
    }
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(corpus.dir, rel)), { recursive: true })
      await writeFile(path.join(corpus.dir, rel), text)
    }
    engine = await Engine.open({ dataDir: data.dir, modelsDir: fixtureModels })
    await engine.importFolder(corpus.dir, { collection: 'fixture' })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('generates, streams, verifies and traces an answer (or a reasoned abstention)', async () => {
    const chat = await engine.chatModel()
    expect(chat.problem).toBeNull()
    expect(chat.model!.id).toMatch(/tiny-random/)
    const events: AskEvent[] = []
    // The fixture reranker's scores are random: open the gate so the model is really called.
    const result = await engine.ask(
      { question: 'How does ping work?', scope: { collections: ['fixture'], version: '2025-03-26' } },
      { gateThreshold: -1e9, maxAnswerTokens: 96, onEvent: (e) => events.push(e) },
    )
    expect(AskResult.safeParse(result).success).toBe(true)
    expect(result.mode).toBe('answer')
    expect(result.passages.length).toBeGreaterThan(0)
    if (result.abstained) expect(['not_in_context', 'unverifiable_citations']).toContain(result.reason)
    else for (const c of result.citations) expect(result.passages[c.n - 1]).toBe(c.chunk_id)
    expect(events.at(-1)).toEqual({ type: 'final', result })
    expect(events.filter((e) => e.type === 'stage').map((e) => (e as { stage: string }).stage)).toEqual(
      expect.arrayContaining(['route', 'search', 'gate', 'read', 'generate', 'verify', 'done']),
    )

    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a trace is JSON read back from the store; tests probe its paths
    const trace = (await engine.answers.trace(result.trace_id))!.data as Record<string, any>
    expect(trace['models'].llm).toMatch(/tiny-random-llama/)
    expect(trace['retrieval'].reranker).toMatch(/tiny-random-cross-encoder/)
    expect(trace['retrieval'].embedder).toMatch(/tiny-random-bert/)
    expect(trace['attempts'].length).toBeGreaterThanOrEqual(1)
    expect(trace['attempts'][0].raw.length).toBeGreaterThan(0)
    expect(trace['attempts'][0].tokens_in).toBeGreaterThan(0)
    expect(trace['tokens'].out).toBeGreaterThan(0)
    expect(trace['stages_ms']['generate']).toBeGreaterThan(0)
  })
})
