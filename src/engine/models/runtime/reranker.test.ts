import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixtureModels, tempDir } from '../../../test-support/paths'
import { ModelLoadError } from './errors'
import { loadReranker, type OnnxReranker } from './reranker'

const FIXTURE = path.join(fixtureModels, 'reranker/tiny-random-cross-encoder')

const PASSAGES = [
  'Resources are identified by URIs and can be read by clients.',
  'Tools let a model call functions exposed by the server.',
  'Prompts are templates that the user can pick.',
  'The transport carries JSON-RPC messages over stdio or HTTP.',
  'hello',
  '',
]

describe('loadReranker (tiny random cross-encoder fixture)', () => {
  let reranker: OnnxReranker

  beforeAll(async () => {
    const t0 = performance.now()
    reranker = await loadReranker(FIXTURE)
    console.log(`[timing] reranker load: ${(performance.now() - t0).toFixed(0)} ms`)
  })
  afterAll(async () => {
    await reranker?.dispose()
  })

  it('has an id from the ONNX file hash', async () => {
    const digest = createHash('sha256')
      .update(await readFile(path.join(FIXTURE, 'onnx/model.onnx')))
      .digest('hex')
    expect(reranker.id).toBe(`reranker/tiny-random-cross-encoder@${digest.slice(0, 12)}`)
    expect(reranker.maxTokens).toBe(512)
  })

  it('returns one finite raw logit per passage, different for different passages', async () => {
    const scores = await reranker.score('how are resources identified?', PASSAGES)
    expect(scores).toHaveLength(PASSAGES.length)
    for (const s of scores) expect(Number.isFinite(s)).toBe(true)
    expect(new Set(scores.map((s) => s.toFixed(6))).size).toBe(PASSAGES.length)
    // Raw logits, not probabilities: not squeezed into [0, 1].
    expect(scores.some((s) => s < 0 || s > 1)).toBe(true)
  })

  it('keeps input order and gives the same scores batched as one at a time', async () => {
    const query = 'what does a tool do?'
    const many = Array.from({ length: 37 }, (_, i) => `${PASSAGES[i % 5]} (${i})`.repeat(1 + (i % 4)))
    const batched = await reranker.score(query, many)
    for (let i = 0; i < many.length; i += 6) {
      const [single] = await reranker.score(query, [many[i] as string])
      expect(batched[i]).toBeCloseTo(single as number, 4)
    }
    const reversed = await reranker.score(query, [...many].reverse())
    expect(reversed.reverse().map((s) => s.toFixed(4))).toEqual(batched.map((s) => s.toFixed(4)))
  })

  it('depends on the query too', async () => {
    const [a] = await reranker.score('tools', [PASSAGES[1] as string])
    const [b] = await reranker.score('transport over stdio', [PASSAGES[1] as string])
    expect(a).not.toBeCloseTo(b as number, 5)
  })

  it('truncates long pairs instead of failing', async () => {
    const long = Array.from({ length: 2000 }, (_, i) => `word${i % 40}`).join(' ')
    const [a, b] = await reranker.score('query', [long, `${long} with another ending`])
    expect(Number.isFinite(a)).toBe(true)
    expect(a).toBeCloseTo(b as number, 5)
  })

  it('returns [] for no passages and rejects with AbortError when aborted', async () => {
    expect(await reranker.score('q', [])).toEqual([])
    const ac = new AbortController()
    ac.abort()
    await expect(reranker.score('q', ['p'], ac.signal)).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('throws ModelLoadError for a missing folder', async () => {
    const tmp = await tempDir('docent-reranker-')
    try {
      const missing = path.join(tmp.dir, 'reranker', 'absent')
      const err = await loadReranker(missing).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ModelLoadError)
      expect((err as Error).message).toContain(missing)
    } finally {
      await tmp.cleanup()
    }
  })
})
