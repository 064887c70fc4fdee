import { open, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixtureModels, tempDir } from '../../../test-support/paths'
import { ModelLoadError } from './errors'
import { loadChatModel, threadsFor, type GgufChatModel } from './llm'

const GGUF = path.join(fixtureModels, 'llm/tiny-random-llama.gguf')

const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    answerable: { type: 'boolean' },
    answer: { type: 'string' },
    citations: { type: 'array', items: { type: 'integer' } },
  },
  required: ['answerable', 'answer', 'citations'],
} as const

const SYSTEM = 'Answer from the numbered sources only. Reply with JSON.'
const USER =
  'Sources:\n[1] Resources are identified by URIs.\n[2] Tools are functions.\n\nQuestion: how are resources identified?'

describe('loadChatModel (tiny random llama GGUF)', () => {
  let llm: GgufChatModel
  let tmp: { dir: string; cleanup: () => Promise<void> }

  beforeAll(async () => {
    tmp = await tempDir('docent-llm-')
    const t0 = performance.now()
    llm = await loadChatModel(GGUF)
    console.log(`[timing] llm load (getLlama + model + context): ${(performance.now() - t0).toFixed(0)} ms`, llm.info)
  })
  afterAll(async () => {
    await llm?.dispose()
    await tmp?.cleanup()
  })

  it('loads the prebuilt binary and sizes the context from the model', () => {
    expect(llm.id).toMatch(/^llm\/tiny-random-llama\.gguf@[0-9a-f]{12}$/)
    expect(llm.info.trainContextSize).toBe(2048)
    expect(llm.info.contextSize).toBeGreaterThan(0)
    expect(llm.info.contextSize).toBeLessThanOrEqual(2048)
    expect(llm.info.gpu === false || typeof llm.info.gpu === 'string').toBe(true)
    expect(llm.info.threads).toBe(1) // tiny model: one thread by default
    expect(llm.countTokens('hello world')).toBeGreaterThan(0)
  })

  it('streams tokens and returns JSON that parses and matches the schema shape', async () => {
    const chunks: string[] = []
    const t0 = performance.now()
    const res = await llm.generateJson({
      system: SYSTEM,
      user: USER,
      schema: ANSWER_SCHEMA,
      maxTokens: 400,
      onToken: (t) => chunks.push(t),
    })
    console.log(`[timing] generateJson: ${(performance.now() - t0).toFixed(0)} ms, ${res.tokensOut} tokens: ${res.raw}`)
    expect(chunks.length).toBeGreaterThan(3)
    expect(chunks.join('')).toBe(res.raw)
    expect(res.stopReason).toBe('eos')
    expect(res.tokensIn).toBeGreaterThan(20)
    expect(res.tokensOut).toBeGreaterThan(3)
    expect(res.parsed).toEqual(JSON.parse(res.raw))
    const parsed = res.parsed as Record<string, unknown>
    expect(typeof parsed['answerable']).toBe('boolean')
    expect(typeof parsed['answer']).toBe('string')
    expect(Array.isArray(parsed['citations'])).toBe(true)
    for (const c of parsed['citations'] as unknown[]) expect(Number.isInteger(c)).toBe(true)
  })

  it('is deterministic at temperature 0 and leaks no state between calls', async () => {
    const a1 = await llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, maxTokens: 400 })
    const b = await llm.generateJson({
      system: 'Something else entirely.',
      user: 'Another question?',
      schema: ANSWER_SCHEMA,
      maxTokens: 400,
    })
    const a2 = await llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, maxTokens: 400 })
    expect(a2.raw).toBe(a1.raw)
    expect(a2.promptTokens).toBe(a1.promptTokens)
    expect(b.promptTokens).toBeLessThan(a1.promptTokens!)
    // b replaced what the sequence held: a2 read its prompt again, all but the chat template's first tokens.
    expect(a2.tokensIn).toBeGreaterThan(a2.promptTokens! / 2)
  })

  it('reads the instructions once: a later call evaluates only what differs from the kept sequence', async () => {
    await llm.warm(SYSTEM)
    const first = await llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, maxTokens: 60 })
    const other = await llm.generateJson({ system: SYSTEM, user: 'A different question about timeouts?', schema: ANSWER_SCHEMA, maxTokens: 60 })
    const system = llm.countTokens(SYSTEM)
    // The system prompt came from the sequence: only the question (and the template around it) was read.
    expect(other.tokensIn).toBeLessThan(other.promptTokens! - system + 10)
    const again = await llm.generateJson({ system: SYSTEM, user: 'A different question about timeouts?', schema: ANSWER_SCHEMA, maxTokens: 60 })
    expect(again.raw).toBe(other.raw)
    expect(again.tokensIn).toBeLessThan(5)
    expect(first.promptTokens).toBeGreaterThan(system)
  })

  it('reports its progress while it reads the prompt', async () => {
    const seen: [number, number][] = []
    const res = await llm.generateJson({
      system: 'Progress check.',
      user: USER,
      schema: ANSWER_SCHEMA,
      maxTokens: 20,
      onPromptProgress: (read, total) => seen.push([read, total]),
    })
    expect(seen.length).toBeGreaterThan(1)
    expect(seen[0]![0]).toBe(0)
    expect(seen.at(-1)![0]).toBe(seen.at(-1)![1])
    expect(seen.at(-1)![1]).toBeLessThanOrEqual(res.promptTokens!)
  })

  it('stays valid JSON when sampling with a seed', async () => {
    for (const seed of [1, 2, 3]) {
      const res = await llm.generateJson({
        system: SYSTEM,
        user: USER,
        schema: ANSWER_SCHEMA,
        temperature: 0.8,
        seed,
        maxTokens: 600,
      })
      expect(res.stopReason).toBe('eos')
      expect(res.parsed).toMatchObject({ answerable: expect.any(Boolean), answer: expect.any(String) })
    }
  })

  it('reports maxTokens when the budget runs out, with parsed undefined for cut-off JSON', async () => {
    const text = await llm.generateText({ system: SYSTEM, user: USER, maxTokens: 12 })
    expect(text.stopReason).toBe('maxTokens')
    expect(text.tokensOut).toBe(12)
    expect(text.parsed).toBeUndefined()
    const json = await llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, maxTokens: 4 })
    expect(json.stopReason).toBe('maxTokens')
    expect(json.parsed).toBeUndefined()
    expect(json.raw.length).toBeGreaterThan(0)
  })

  it('stops early on abort with stopReason abort', async () => {
    const ac = new AbortController()
    let chunks = 0
    const res = await llm.generateText({
      system: SYSTEM,
      user: USER,
      maxTokens: 1500,
      signal: ac.signal,
      onToken: () => {
        if (++chunks === 5) ac.abort()
      },
    })
    expect(res.stopReason).toBe('abort')
    expect(res.tokensOut).toBeLessThan(100)
    expect(res.raw.length).toBeGreaterThan(0)

    const pre = new AbortController()
    pre.abort()
    const none = await llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, signal: pre.signal })
    expect(none).toMatchObject({ stopReason: 'abort', raw: '', tokensOut: 0 })
  })

  it('serialises concurrent calls on one model', async () => {
    const [x, y] = await Promise.all([
      llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, maxTokens: 400 }),
      llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, maxTokens: 400 }),
    ])
    expect(y.raw).toBe(x.raw)
  })

  describe('load errors', () => {
    it('throws ModelLoadError for a truncated GGUF, and the process and loaded model survive', async () => {
      const truncated = path.join(tmp.dir, 'truncated.gguf')
      const src = await open(GGUF, 'r')
      const { size } = await src.stat()
      const buf = Buffer.alloc(Math.floor(size / 2))
      await src.read(buf, 0, buf.length, 0)
      await src.close()
      await writeFile(truncated, buf)
      const err = await loadChatModel(truncated).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ModelLoadError)
      expect((err as ModelLoadError).modelPath).toBe(truncated)
      expect((err as Error).message).toContain(truncated)
      expect((err as Error).message).toMatch(/not within the file bounds|corrupted|incomplete/)
      const still = await llm.generateJson({ system: SYSTEM, user: USER, schema: ANSWER_SCHEMA, maxTokens: 400 })
      expect(still.parsed).toBeDefined()
    })

    it('throws ModelLoadError for a missing file and for a non-GGUF file', async () => {
      const missing = path.join(tmp.dir, 'nope.gguf')
      const e1 = await loadChatModel(missing).catch((e: unknown) => e)
      expect(e1).toBeInstanceOf(ModelLoadError)
      expect((e1 as ModelLoadError).missing).toEqual(['nope.gguf'])
      const notGguf = path.join(tmp.dir, 'text.gguf')
      await writeFile(notGguf, 'this is not a model, just some text that is long enough')
      const e2 = await loadChatModel(notGguf).catch((e: unknown) => e)
      expect(e2).toBeInstanceOf(ModelLoadError)
      expect((e2 as Error).message).toMatch(/not a GGUF/)
    })
  })
})

describe('threadsFor', () => {
  const MB = 1024 * 1024
  it('uses every math core for a real model, one thread for a tiny one, and a valid DOCENT_LLM_THREADS over both', () => {
    expect(threadsFor(undefined, 1000 * MB, 2)).toBe(2)
    expect(threadsFor(undefined, 1 * MB, 8)).toBe(1)
    expect(threadsFor('1', 1000 * MB, 2)).toBe(1)
    expect(threadsFor('3', 1 * MB, 2)).toBe(3)
    for (const bad of ['', '0', '-2', '1.5', 'two']) expect(threadsFor(bad, 1000 * MB, 2)).toBe(2)
  })
})
