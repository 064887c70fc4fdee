import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { EventPayload } from '../../shared/api'
import { tempDir } from '../../test-support/paths'
import { eventRecorder, type Seen } from '../../test-support/engine-process'
import type { Message, RequestMessage } from 'vscode-jsonrpc/node'
import { EngineClient, type EngineProcessListeners } from './client'
import { nodeEngineSpawner } from './node-spawner'

/**
 * EngineClient over real child processes (child_process.fork stands in for Electron's
 * utilityProcess, which needs the Electron binary): the real engine host, and a scripted stand-in
 * that never answers, to pin down what happens to pending requests and running jobs when the
 * process dies.
 */

const here = path.dirname(fileURLToPath(import.meta.url))
const tsx = ['--import', 'tsx']

const recorder = eventRecorder

const jobIdOf = (s: Seen): string | undefined => (s.payload as { jobId?: string }).jobId

let clients: EngineClient[] = []
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(clients.map((c) => c.dispose(2_000)))
  clients = []
  for (const c of cleanups.splice(0)) await c()
})

function fakeClient(mode: 'hang' | 'fatal', rec = recorder(), timeoutsMs = {}) {
  const client = new EngineClient({
    spawn: nodeEngineSpawner(path.join(here, 'fake-host.testutil.ts'), [mode], { execArgv: tsx }),
    onEvent: rec.onEvent,
    timeoutsMs,
    log: () => {},
  })
  clients.push(client)
  return { client, rec }
}

describe('EngineClient when the engine process dies', () => {
  it('fails pending requests, ends running jobs with their final events, and restarts on next use', async () => {
    const { client, rec } = fakeClient('hang')
    const imp = await client.invoke('collections.import', { folder: '/docs' })
    const dl = await client.invoke('models.download', { role: 'reranker' })
    expect(imp).toEqual({ ok: true, value: { jobId: 'imp_fake_1' } })
    expect(dl).toEqual({ ok: true, value: { jobId: 'mdl_fake_2' } })
    const asked = await client.invoke('ask', { question: 'why?', scope: { collections: [], version: 'all' } })
    expect(asked).toEqual({ ok: true, value: { requestId: 'ask_fake_3' } })
    const firstPid = client.pid
    expect(firstPid).toBeGreaterThan(0)

    const pending = client.invoke('search', { query: 'never answered', scope: { collections: [], version: 'all' } })
    const pendingToo = client.invoke('app.info', {})
    process.kill(firstPid!, 'SIGKILL')

    const [a, b] = await Promise.all([pending, pendingToo])
    for (const r of [a, b]) {
      expect(r.ok).toBe(false)
      if (!r.ok) {
        expect(r.error.code).toBe('engine_stopped')
        expect(r.error.message).toMatch(/stopped unexpectedly \(killed by SIGKILL\)/)
      }
    }
    const importDone = await rec.waitFor((s) => s.event === 'import.done' && jobIdOf(s) === 'imp_fake_1')
    expect(importDone.payload).toMatchObject({ report: null, error: expect.stringMatching(/did not finish/) })
    const modelsDone = await rec.waitFor((s) => s.event === 'models.done' && jobIdOf(s) === 'mdl_fake_2')
    expect(modelsDone.payload).toMatchObject({ role: 'reranker', error: expect.stringMatching(/stopped unexpectedly/) })
    const askDone = await rec.waitFor((s) => s.event === 'ask.done')
    expect(askDone.payload).toMatchObject({ requestId: 'ask_fake_3', error: expect.stringMatching(/not answered/) })
    // Exactly one final event per job and question.
    expect(rec.seen.filter((s) => s.event === 'import.done' || s.event === 'models.done' || s.event === 'ask.done')).toHaveLength(
      3,
    )

    const again = await client.invoke('collections.list', {})
    expect(again).toEqual({ ok: true, value: [] })
    expect(client.pid).not.toBe(firstPid)
  })

  it('passes on why the engine could not start', async () => {
    const { client } = fakeClient('fatal')
    const r = await client.invoke('collections.list', {})
    expect(r).toMatchObject({
      ok: false,
      error: { code: 'engine_stopped', message: expect.stringMatching(/locked by another process/) },
    })
  })

  it('times out a request the engine never answers, without killing the engine', async () => {
    const { client } = fakeClient('hang', recorder(), { 'app.info': 300 })
    const r = await client.invoke('app.info', {})
    expect(r).toMatchObject({ ok: false, error: { code: 'timeout' } })
    expect(await client.invoke('collections.list', {})).toEqual({ ok: true, value: [] })
  })

  it('relays only well-formed events of the contract', async () => {
    const { client, rec } = fakeClient('hang')
    await client.invoke('collections.import', { folder: '/docs' })
    const progress = await rec.waitFor((s) => s.event === 'import.progress')
    expect(progress.payload).toMatchObject({ jobId: 'imp_fake_1', phase: 'importing' })
  })
})

describe('EngineClient over the real engine host (src/apps/engine-host.ts in a Node child)', () => {
  async function realClient() {
    const data = await tempDir()
    const docs = await tempDir()
    cleanups.push(data.cleanup, docs.cleanup)
    const rec = recorder()
    const client = new EngineClient({
      spawn: nodeEngineSpawner(
        path.join(here, '..', '..', 'apps', 'engine-host.ts'),
        ['--data', path.join(data.dir, 'index'), '--models', path.join(data.dir, 'models'), '--app-version', '1.2.3'],
        { execArgv: tsx },
      ),
      onEvent: rec.onEvent,
      log: () => {},
    })
    clients.push(client)
    return { client, rec, docs: docs.dir, data: data.dir }
  }

  const writeDocs = async (root: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const file = path.join(root, `section-${Math.floor(i / 50)}`, `page-${i}.md`)
      await mkdir(path.dirname(file), { recursive: true })
      await writeFile(file, `# Page ${i}\n\n## Details\n\n${'The widget retries three times before giving up. '.repeat(30)}\n`)
    }
  }

  it('serves requests and import jobs with a final event, then shuts down cleanly', async () => {
    const { client, rec, docs, data } = await realClient()
    await writeDocs(docs, 5)
    expect(await client.invoke('app.info', {})).toMatchObject({
      ok: true,
      value: { version: '1.2.3', dataDir: path.join(data, 'index') },
    })
    expect(await client.invoke('nope' as never, {} as never)).toMatchObject({ ok: false, error: { code: 'unknown_method' } })
    const started = await client.invoke('collections.import', { folder: docs, collection: 'docs' })
    if (!started.ok) throw new Error(started.error.message)
    const done = await rec.waitFor((s) => s.event === 'import.done' && jobIdOf(s) === started.value.jobId)
    expect(done.payload).toMatchObject({ error: null, report: { imported: 5, cancelled: false } })
    expect(await client.invoke('collections.list', {})).toMatchObject({ ok: true, value: [{ id: 'docs', documents: 5 }] })
    const pid = client.pid!
    await client.dispose()
    expect(() => process.kill(pid, 0)).toThrow()
  })

  it('killed during an import: the job still ends with import.done (error), and the next request restarts the engine on the same index', async () => {
    const { client, rec, docs } = await realClient()
    await writeDocs(docs, 600)
    const started = await client.invoke('collections.import', { folder: docs, collection: 'big' })
    if (!started.ok) throw new Error(started.error.message)
    await rec.waitFor((s) => s.event === 'import.progress' && (s.payload as { phase: string }).phase === 'importing')
    const pid = client.pid!
    const pending = client.invoke('collections.list', {})
    process.kill(pid, 'SIGKILL')
    const done = await rec.waitFor((s) => s.event === 'import.done' && jobIdOf(s) === started.value.jobId)
    expect((done.payload as EventPayload<'import.done'>).error).toMatch(/stopped unexpectedly.*did not finish/)
    expect(rec.seen.filter((s) => s.event === 'import.done')).toHaveLength(1)
    // The pending request either got its answer before the kill or a final error: never silence.
    const r = await pending
    if (!r.ok) expect(r.error.code).toBe('engine_stopped')

    const after = await client.invoke('collections.list', {})
    expect(after.ok).toBe(true)
    expect(client.pid).not.toBe(pid)
  })
})

describe('EngineClient: the order of what the engine sends', () => {
  /** An engine "process" in this one, scripted message by message (as the in-process owner of open-folder.ts is). */
  function scripted() {
    let listeners: EngineProcessListeners | null = null
    const sent: Message[] = []
    const rec = recorder()
    const client = new EngineClient({
      spawn: (l) => {
        listeners = l
        return { pid: 1, postMessage: (m) => sent.push(m), kill: () => l.onExit('killed') }
      },
      onEvent: rec.onEvent,
      log: () => {},
    })
    const deliver = (m: object) => listeners!.onMessage({ jsonrpc: '2.0', ...m })
    const progress = (jobId: string) => ({
      method: 'import.progress',
      params: {
        jobId,
        phase: 'importing',
        collection: 'c',
        filesTotal: 1,
        filesDone: 0,
        currentFile: null,
        imported: 0,
        unchanged: 0,
        failed: 0,
        skipped: 0,
        chunksWritten: 0,
        textsEmbedded: 0,
        bytesTotal: 0,
        bytesDone: 0,
        elapsedMs: 0,
        etaMs: null,
      },
    })
    return { client, rec, sent, deliver, progress }
  }
  const tick = () => new Promise((r) => setImmediate(r))

  it('hands an event on as it arrives, before the engine goes on (the in-process owner: MCP progress before the answer)', async () => {
    const { client, rec, deliver, progress } = scripted()
    const listed = client.invoke('collections.list', {})
    deliver({ method: 'ready', params: { pid: 1 } })
    deliver(progress('imp_1'))
    expect(rec.seen.map((s) => s.event)).toEqual(['import.progress'])
    await tick()
    deliver({ id: 0, result: [] })
    expect(await listed).toEqual({ ok: true, value: [] })
  })

  it('never lets an event overtake an answer that arrived before it', async () => {
    const { client, rec, sent, deliver, progress } = scripted()
    const started = client.invoke('collections.import', { folder: '/docs' })
    deliver({ method: 'ready', params: { pid: 1 } })
    while (sent.length === 0) await tick()
    let answered = false
    void started.then(() => (answered = true))
    deliver({ id: (sent[0] as RequestMessage).id, result: { jobId: 'imp_1' } })
    deliver(progress('imp_1'))
    const progressSeen = rec.waitFor((s) => s.event === 'import.progress').then(() => answered)
    expect(await progressSeen).toBe(true)
  })
})
