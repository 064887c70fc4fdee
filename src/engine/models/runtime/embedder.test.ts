import { cp, readFile, rm, writeFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { env } from '@huggingface/transformers'
import { fixtureModels, tempDir } from '../../../test-support/paths'
import type { Embedder } from '../../core/model-ports'
import { loadEmbedder } from './embedder'
import { ModelLoadError } from './errors'

const FIXTURE = path.join(fixtureModels, 'embedding/tiny-random-bert')

const SENTENCES = [
  'The Model Context Protocol lets servers expose tools, resources and prompts to clients.',
  'Resources are identified by URIs.',
  'Sampling lets a server ask the client for an LLM completion, with the user in the loop.',
  'hello',
  '',
]

function norm(v: Float32Array): number {
  return Math.sqrt(v.reduce((s, x) => s + x * x, 0))
}
function cosine(a: Float32Array, b: Float32Array): number {
  return a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0)
}
function expectClose(a: Float32Array, b: Float32Array, tol = 1e-5): void {
  expect(a.length).toBe(b.length)
  let worst = 0
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] ?? 0) - (b[i] ?? 0)))
  expect(worst).toBeLessThan(tol)
}

describe('loadEmbedder (tiny random BERT fixture)', () => {
  let embedder: Embedder
  let tmp: { dir: string; cleanup: () => Promise<void> }

  beforeAll(async () => {
    tmp = await tempDir('docent-embedder-')
    const t0 = performance.now()
    embedder = await loadEmbedder(FIXTURE)
    console.log(`[timing] embedder load: ${(performance.now() - t0).toFixed(0)} ms`)
  })
  afterAll(async () => {
    await embedder?.dispose()
    await tmp?.cleanup()
  })

  it('loads offline with the expected shape and id', async () => {
    expect(env.allowRemoteModels).toBe(false)
    expect(embedder.dims).toBe(32)
    expect(embedder.maxTokens).toBe(512)
    const digest = createHash('sha256')
      .update(await readFile(path.join(FIXTURE, 'onnx/model.onnx')))
      .digest('hex')
    expect(embedder.id).toBe(`embedding/tiny-random-bert@${digest.slice(0, 12)}`)
  })

  it('returns L2-normalised vectors, the same vector for the same text, and different ones for different texts', async () => {
    const vs = await embedder.embedDocuments(SENTENCES)
    expect(vs).toHaveLength(SENTENCES.length)
    for (const v of vs) {
      expect(v).toBeInstanceOf(Float32Array)
      expect(v.length).toBe(32)
      expect(norm(v)).toBeCloseTo(1, 5)
    }
    const again = await embedder.embedDocuments([SENTENCES[0] as string])
    expectClose(again[0] as Float32Array, vs[0] as Float32Array)
    expect(cosine(vs[0] as Float32Array, vs[1] as Float32Array)).toBeLessThan(0.999)
  })

  it('gives the same vectors batched (with padding, reordered) as one at a time', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `${SENTENCES[i % 4]} number ${i}`.repeat(1 + (i % 3)))
    const batched = await embedder.embedDocuments(texts)
    for (let i = 0; i < texts.length; i += 7) {
      const [single] = await embedder.embedDocuments([texts[i] as string])
      expectClose(batched[i] as Float32Array, single as Float32Array)
    }
  })

  it('embedQuery without a configured prefix equals embedding the text as a document', async () => {
    const [doc] = await embedder.embedDocuments(['what is a resource?'])
    expectClose(await embedder.embedQuery('what is a resource?'), doc as Float32Array)
  })

  it('applies the query prefix from options, and pooling changes the vectors', async () => {
    const prefixed = await loadEmbedder(FIXTURE, { queryPrefix: 'Represent this sentence for searching relevant passages: ' })
    const mean = await loadEmbedder(FIXTURE, { pooling: 'mean' })
    try {
      const [asDoc] = await prefixed.embedDocuments(['Represent this sentence for searching relevant passages: tools'])
      expectClose(await prefixed.embedQuery('tools'), asDoc as Float32Array)
      const [plain] = await embedder.embedDocuments(['tools'])
      expect(cosine(await prefixed.embedQuery('tools'), plain as Float32Array)).toBeLessThan(0.9999)
      const [meanVec] = await mean.embedDocuments(['tools'])
      expect(norm(meanVec as Float32Array)).toBeCloseTo(1, 5)
      expect(cosine(meanVec as Float32Array, plain as Float32Array)).toBeLessThan(0.9999)
      expect(mean.id).toBe(embedder.id)
    } finally {
      await prefixed.dispose()
      await mean.dispose()
    }
  })

  it('counts tokens of its own tokenizer, without special tokens, synchronously', () => {
    expect(embedder.countTokens('')).toBe(0)
    expect(embedder.countTokens('the')).toBe(1)
    const one = embedder.countTokens(SENTENCES[0] as string)
    // 14 words and 2 punctuation marks: a trained WordPiece gives roughly one token per word.
    expect(one).toBeGreaterThanOrEqual(14)
    expect(one).toBeLessThan(40)
    expect(embedder.countTokens(`${SENTENCES[0]} ${SENTENCES[0]}`)).toBe(2 * one)
    const t0 = performance.now()
    for (let i = 0; i < 2000; i++) embedder.countTokens(`${SENTENCES[2]} ${i}`)
    expect(performance.now() - t0).toBeLessThan(2000)
  })

  it('truncates inputs longer than maxTokens instead of failing', async () => {
    const long = Array.from({ length: 1500 }, (_, i) => `word${i % 50}`).join(' ')
    expect(embedder.countTokens(long)).toBeGreaterThan(embedder.maxTokens)
    const [a, b] = await embedder.embedDocuments([long, `${long} and a different ending past the limit`])
    expect(norm(a as Float32Array)).toBeCloseTo(1, 5)
    expectClose(a as Float32Array, b as Float32Array) // everything past the limit is cut off
  })

  it('returns [] for no texts and rejects with AbortError when the signal is aborted', async () => {
    expect(await embedder.embedDocuments([])).toEqual([])
    const ac = new AbortController()
    ac.abort()
    await expect(embedder.embedDocuments(['x'], ac.signal)).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('gives the event loop a turn between ONNX runs during a large batch', async () => {
    // onnxruntime-node's session.run blocks the thread while it computes (see runBatched), so
    // the loop can only run between runs: 128 texts of 512 tokens = 16 runs of 8 x 512 tokens.
    const texts = Array.from({ length: 128 }, (_, i) =>
      Array.from({ length: 300 }, (_, j) => `token${(i * 7 + j) % 97}`).join(' '),
    )
    const gaps: number[] = []
    let last = performance.now()
    const timer = setInterval(() => {
      const now = performance.now()
      gaps.push(now - last)
      last = now
    }, 10)
    const t0 = performance.now()
    const vs = await embedder.embedDocuments(texts)
    const elapsed = performance.now() - t0
    clearInterval(timer)
    expect(vs).toHaveLength(128)
    const sorted = [...gaps].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0
    const worst = sorted.at(-1) ?? 0
    console.log(
      `[event-loop] 128 texts x 512 tokens in ${elapsed.toFixed(0)} ms; ${gaps.length} ticks of a 10 ms interval, ` +
        `median gap ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms`,
    )
    // Blocking the whole call would give at most one tick.
    expect(gaps.length).toBeGreaterThanOrEqual(8)
  })

  describe('load errors', () => {
    it('throws ModelLoadError naming a missing folder', async () => {
      const missing = path.join(tmp.dir, 'embedding', 'nope')
      const err = await loadEmbedder(missing).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ModelLoadError)
      expect((err as ModelLoadError).message).toContain(missing)
      expect((err as ModelLoadError).modelPath).toBe(missing)
    })

    it('throws ModelLoadError listing missing files', async () => {
      const dir = path.join(tmp.dir, 'no-onnx')
      await cp(FIXTURE, dir, { recursive: true })
      await rm(path.join(dir, 'onnx'), { recursive: true })
      await rm(path.join(dir, 'tokenizer.json'))
      const err = await loadEmbedder(dir).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ModelLoadError)
      expect((err as ModelLoadError).missing).toEqual(['tokenizer.json', path.join('onnx', 'model.onnx')])
      expect((err as ModelLoadError).message).toMatch(/missing tokenizer\.json, onnx.model\.onnx/)
    })

    it('throws ModelLoadError for a corrupt ONNX file', async () => {
      const dir = path.join(tmp.dir, 'corrupt')
      await cp(FIXTURE, dir, { recursive: true })
      const onnx = path.join(dir, 'onnx/model.onnx')
      const bytes = await readFile(onnx)
      await writeFile(onnx, bytes.subarray(0, Math.floor(bytes.length / 3)))
      const err = await loadEmbedder(dir).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ModelLoadError)
      expect((err as ModelLoadError).message).toContain(dir)
    })

    it('throws ModelLoadError for an invalid docent.json', async () => {
      const dir = path.join(tmp.dir, 'bad-docent')
      await cp(FIXTURE, dir, { recursive: true })
      await writeFile(path.join(dir, 'docent.json'), JSON.stringify({ pooling: 'max' }))
      const err = await loadEmbedder(dir).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ModelLoadError)
      expect((err as ModelLoadError).message).toMatch(/docent\.json is invalid: pooling/)
    })
  })
})
