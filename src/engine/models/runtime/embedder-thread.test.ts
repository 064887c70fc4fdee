import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Embedder } from '../../core/model-ports'
import { loadEmbedder } from './embedder'
import { loadEmbedderThreaded } from './embedder-thread'
import { ModelLoadError } from './errors'
import { fixtureModels } from '../../../test-support/paths'

const dir = path.join(fixtureModels, 'embedding/tiny-random-bert')

describe('embedder in a worker thread', () => {
  let threaded: Embedder
  let direct: Embedder
  beforeAll(async () => {
    ;[threaded, direct] = await Promise.all([loadEmbedderThreaded(dir), loadEmbedder(dir)])
  })
  afterAll(async () => {
    await Promise.all([threaded?.dispose(), direct?.dispose()])
  })

  it('gives the same id, sizes, token counts and vectors as the in-thread embedder', async () => {
    expect(threaded.id).toBe(direct.id)
    expect(threaded.dims).toBe(direct.dims)
    expect(threaded.countTokens('Streamable HTTP transport')).toBe(direct.countTokens('Streamable HTTP transport'))
    const texts = ['tools/call returns a result', 'servers expose resources', 'pagination uses cursors']
    const [a, b] = await Promise.all([threaded.embedDocuments(texts), direct.embedDocuments(texts)])
    a.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(b[i]!)))
    expect(Array.from(await threaded.embedQuery('cursor'))).toEqual(Array.from(await direct.embedQuery('cursor')))
  })

  it('keeps the calling thread free while a large batch embeds', async () => {
    const texts = Array.from(
      { length: 256 },
      (_, i) => `passage ${i} ` + 'the widget retries the request with backoff. '.repeat(40),
    )
    let ticks = 0
    let worst = 0
    let last = performance.now()
    const timer = setInterval(() => {
      const now = performance.now()
      worst = Math.max(worst, now - last)
      last = now
      ticks++
    }, 5)
    const t0 = performance.now()
    await threaded.embedDocuments(texts)
    const ms = performance.now() - t0
    clearInterval(timer)
    // The loop kept turning throughout: many ticks, no stall anywhere near the batch's length.
    expect(ticks).toBeGreaterThan(ms / 50)
    expect(worst).toBeLessThan(Math.max(250, ms / 2))
  })

  it('rejects a missing model folder with ModelLoadError', async () => {
    await expect(loadEmbedderThreaded(path.join(fixtureModels, 'embedding/nope'))).rejects.toBeInstanceOf(ModelLoadError)
  })

  it('aborts a running batch', async () => {
    const controller = new AbortController()
    const texts = Array.from({ length: 512 }, () => 'a long passage about transports and sessions. '.repeat(40))
    const p = threaded.embedDocuments(texts, controller.signal)
    setTimeout(() => controller.abort(), 20)
    await expect(p).rejects.toMatchObject({ name: 'AbortError' })
    // Still usable afterwards.
    expect((await threaded.embedQuery('ok')).length).toBe(threaded.dims)
  })
})
