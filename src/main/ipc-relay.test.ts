import { describe, expect, it } from 'vitest'
import type { Result } from '../shared/api'
import { createInvokeRelay, createOpenExternalRelay } from './ipc-relay'
import { isAppRendererUrl } from './security'

const APP = 'file:///app/out/renderer/index.html'

function fakeEngine(answer: (method: string, input: unknown) => Result<unknown> = () => ({ ok: true, value: [] })) {
  const calls: { method: string; input: unknown }[] = []
  return {
    calls,
    request: async (method: string, input: unknown) => {
      calls.push({ method, input })
      return answer(method, input)
    },
  }
}

const isTrustedSender = (url: string | null | undefined) => isAppRendererUrl(url, APP)

describe('IPC relay (main process)', () => {
  it('rejects an unknown channel without reaching the engine', async () => {
    const engine = fakeEngine()
    const relay = createInvokeRelay({ engine, isTrustedSender })
    for (const name of [
      'collections.drop',
      'source.path',
      '__proto__',
      'constructor',
      42,
      null,
      undefined,
      { toString: () => 'search' },
    ]) {
      expect(await relay(APP, name, {}), String(name)).toMatchObject({ ok: false, error: { code: 'unknown_method' } })
    }
    expect(engine.calls).toEqual([])
  })

  it('rejects malformed payloads with the schema message, without reaching the engine', async () => {
    const engine = fakeEngine()
    const relay = createInvokeRelay({ engine, isTrustedSender })
    const bad = await relay(APP, 'search', { query: 'x'.repeat(5000), scope: {} })
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_input', message: expect.stringMatching(/query/) } })
    expect(await relay(APP, 'collections.import', { folder: 7 })).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(await relay(APP, 'source.open', { chunkId: '' })).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(await relay(APP, 'jobs.cancel', 'imp_1')).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(await relay(APP, 'settings.set', { theme: 'neon' })).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(engine.calls).toEqual([])
  })

  it('rejects a foreign sender before looking at the message', async () => {
    const engine = fakeEngine()
    const relay = createInvokeRelay({ engine, isTrustedSender })
    for (const url of ['https://evil.example/', 'file:///tmp/evil.html', null]) {
      expect(await relay(url, 'collections.list', {})).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    }
    expect(engine.calls).toEqual([])
  })

  it('forwards valid calls with the parsed input (defaults applied, unknown keys stripped)', async () => {
    const engine = fakeEngine()
    const relay = createInvokeRelay({ engine, isTrustedSender })
    expect(await relay(APP, 'collections.list', undefined)).toEqual({ ok: true, value: [] })
    await relay(APP, 'search', { query: 'retries', scope: {}, extra: 'dropped' })
    expect(engine.calls).toEqual([
      { method: 'collections.list', input: {} },
      {
        method: 'search',
        input: { query: 'retries', scope: { collections: [], version: 'auto' }, mode: 'hybrid', rerank: true, k: 10 },
      },
    ])
  })
})

describe('openExternal relay', () => {
  it('opens only a path the engine returned for an indexed chunk', async () => {
    const opened: string[] = []
    const engine = fakeEngine((_m, input) =>
      (input as { chunkId: string }).chunkId === 'c_indexed'
        ? { ok: true, value: { path: '/docs/guide.md' } }
        : { ok: false, error: { message: 'That passage is not in the index.', code: 'not_found' } },
    )
    const relay = createOpenExternalRelay({ engine, isTrustedSender, openPath: async (p) => (opened.push(p), '') })
    expect(await relay(APP, 'c_indexed')).toEqual({ ok: true, value: null })
    expect(await relay(APP, 'c_unknown')).toMatchObject({ ok: false, error: { code: 'not_found' } })
    expect(await relay(APP, { path: '/etc/passwd' })).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(await relay('https://evil.example/', 'c_indexed')).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    expect(opened).toEqual(['/docs/guide.md'])
    expect(engine.calls.map((c) => c.method)).toEqual(['source.path', 'source.path'])
  })
})
