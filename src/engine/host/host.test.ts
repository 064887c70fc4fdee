import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventName, EventPayload, Result } from '../../shared/api'
import { Engine } from '../engine'
import { fixtureModels, tempDir } from '../../test-support/paths'
import { createEngineHost, type EngineHost } from './host'
import { resolveInsideRoot, SourceError } from './source'
import { makeDocx, makePdf } from '../ingest/parsers/__fixtures__/generate'

type Recorded = { event: EventName; payload: unknown }

/** Dispatch over a real Engine on a real on-disk PGlite, with no models installed (keyword search). */
describe('engine host dispatch', () => {
  let docs: string
  let outside: string
  let data: string
  let engine: Engine
  let host: EngineHost
  const events: Recorded[] = []
  let cancelOnProgress: ((jobId: string) => Promise<Result<unknown>>) | null = null
  const cleanups: (() => Promise<void>)[] = []

  const write = async (root: string, rel: string, text: string) => {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await writeFile(path.join(root, rel), text)
  }

  const waiters = new Set<{ test: (e: Recorded) => boolean; resolve: (e: Recorded) => void }>()
  /** Resolves with the first event (already emitted or future) matching `test`; no sleeps. */
  const waitFor = (test: (e: Recorded) => boolean, timeoutMs = 60_000): Promise<Recorded> => {
    const seen = events.find(test)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const w = { test, resolve: (e: Recorded) => (clearTimeout(timer), resolve(e)) }
      const timer = setTimeout(() => (waiters.delete(w), reject(new Error('the event did not arrive'))), timeoutMs)
      waiters.add(w)
    })
  }
  const idOf = (e: Recorded): string | undefined =>
    (e.payload as { jobId?: string; requestId?: string }).jobId ?? (e.payload as { requestId?: string }).requestId
  /** The job's final event; fails the test if it never comes. */
  const doneOf = async (jobId: string): Promise<EventPayload<'import.done'>> =>
    (await waitFor((e) => e.event === 'import.done' && idOf(e) === jobId)).payload as EventPayload<'import.done'>

  /** The id of the chunk of `rel` whose text contains `words` (straight from the index). */
  const chunkOf = async (rel: string, words: string): Promise<string> => {
    const { rows } = await engine.db.query<{ id: string }>(
      `SELECT id FROM chunks WHERE path = $1 AND text LIKE '%' || $2 || '%'`,
      [rel, words],
    )
    if (!rows[0]) throw new Error(`no chunk of ${rel} contains "${words}"`)
    return rows[0].id
  }

  const ok = <T>(r: Result<T>): T => {
    if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`)
    return r.value
  }

  beforeAll(async () => {
    const a = await tempDir()
    const b = await tempDir()
    const c = await tempDir()
    cleanups.push(a.cleanup, b.cleanup, c.cleanup)
    docs = a.dir
    data = b.dir
    outside = c.dir
    await write(
      docs,
      'guide/intro.md',
      '# Intro\n\nWelcome to the widget manual.\n\n## Setup\n\nPlug in the widget and press the blue button.\n',
    )
    await write(docs, 'spec/errors.md', '# Errors\n\n## Codes\n\nThe code E-04 means the widget overheated.\n')
    await write(docs, 'guide/escape.md', '# Escape\n\nThis file will be swapped for a symlink after import.\n')
    await write(docs, 'broken.pdf', 'this is not a PDF at all')
    await write(outside, 'secret.md', '# Secret\n\nOutside the collection.\n')
    engine = await Engine.open({ dataDir: data, modelsDir: path.join(data, 'no-models') })
    host = createEngineHost(engine, {
      dataDir: data,
      modelsDir: path.join(data, 'no-models'),
      appVersion: '9.9.9',
      emit: (event, payload) => {
        const recorded = { event, payload }
        events.push(recorded)
        for (const w of [...waiters]) {
          if (w.test(recorded)) {
            waiters.delete(w)
            w.resolve(recorded)
          }
        }
        if (
          event === 'import.progress' &&
          cancelOnProgress &&
          (payload as EventPayload<'import.progress'>).phase === 'importing'
        ) {
          void cancelOnProgress((payload as EventPayload<'import.progress'>).jobId)
        }
      },
    })
  })

  afterAll(async () => {
    await host?.shutdown()
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('rejects an unknown method and a malformed payload with error results, never throwing', async () => {
    const unknown = await host.dispatch('collections.drop', {})
    expect(unknown).toMatchObject({ ok: false, error: { code: 'unknown_method' } })
    const notString = await host.dispatch(42, {})
    expect(notString).toMatchObject({ ok: false, error: { code: 'unknown_method' } })
    const proto = await host.dispatch('__proto__', {})
    expect(proto).toMatchObject({ ok: false, error: { code: 'unknown_method' } })

    const bad = await host.dispatch('search', { query: 42, scope: {} })
    expect(bad.ok).toBe(false)
    if (!bad.ok) {
      expect(bad.error.code).toBe('invalid_input')
      expect(bad.error.message).toMatch(/query/)
      expect(bad.error.message).toMatch(/expected string/)
    }
    expect(await host.dispatch('search', { query: '', scope: {} })).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(await host.dispatch('collections.import', null)).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(await host.dispatch('collections.import', { folder: 'relative/path' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input' },
    })
    expect(await host.dispatch('collections.import', { folder: path.join(docs, 'nope') })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
  })

  it('imports a folder as a job: progress events, then exactly one final done event', async () => {
    const { jobId } = ok(await host.dispatch('collections.import', { folder: docs, collection: 'Manual' })) as { jobId: string }
    const done = await doneOf(jobId)
    expect(done.error).toBeNull()
    expect(done.report).toMatchObject({ collection: 'manual', imported: 3, cancelled: false })
    const mine = events.filter((e) => idOf(e) === jobId)
    expect(mine.filter((e) => e.event === 'import.progress').length).toBeGreaterThan(0)
    expect(mine.filter((e) => e.event === 'import.done')).toHaveLength(1)
    expect(mine.at(-1)?.event).toBe('import.done')
    expect(events).toContainEqual({ event: 'collections.changed', payload: { collection: 'manual' } })
    expect(host.runningJobs()).toEqual([])

    const list = ok(await host.dispatch('collections.list', {})) as { id: string; documents: number; failed: number }[]
    expect(list).toEqual([expect.objectContaining({ id: 'manual', documents: 3, failed: 1 })])
    const failures = ok(await host.dispatch('collections.failures', { collection: 'manual' })) as { path: string }[]
    expect(failures.map((f) => f.path)).toEqual(['broken.pdf'])
  })

  it('sends the import report through the contract whole, timings included', async () => {
    const done = (await waitFor((e) => e.event === 'import.done' && idOf(e) !== undefined)).payload as EventPayload<'import.done'>
    expect(done.report?.collection).toBe('manual')
    // The host validates every event with the contract's schema, which drops fields it does not know.
    expect(done.report?.timings).toEqual({
      walk: expect.any(Number),
      read: expect.any(Number),
      parse: expect.any(Number),
      chunk: expect.any(Number),
      embed: expect.any(Number),
      write: expect.any(Number),
    })
  })

  it('searches with the contract shape only (no trace leaks through)', async () => {
    const res = ok(
      await host.dispatch('search', {
        query: 'E-04 overheated',
        scope: { collections: ['manual'] },
        mode: 'keyword',
        rerank: false,
      }),
    )
    const r = res as { results: { path: string }[]; mode: string }
    expect(r.mode).toBe('keyword')
    expect(r.results[0]?.path).toBe('spec/errors.md')
    expect(res).not.toHaveProperty('trace')
    expect(res).not.toHaveProperty('scope_label')
  })

  it('opens a source by chunk id, and refuses chunks outside the index and files outside the root', async () => {
    const hit = { chunk_id: await chunkOf('guide/intro.md', 'blue button') }
    const view = ok(await host.dispatch('source.open', { chunkId: hit.chunk_id })) as Record<string, unknown>
    expect(view).toMatchObject({ format: 'markdown', path: 'guide/intro.md', pdf_base64: null })
    expect(String(view['content'])).toContain('press the blue button')
    expect(String(view['content'])).toContain(String(view['passage']).slice(0, 20))

    expect(await host.dispatch('source.open', { chunkId: 'c_not_in_the_index' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
    expect(await host.dispatch('source.path', { chunkId: 'c_not_in_the_index' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
    expect(ok(await host.dispatch('source.path', { chunkId: hit.chunk_id }))).toEqual({ path: path.join(docs, 'guide/intro.md') })

    // A file inside the collection replaced by a symlink to a file outside it after import.
    const esc = { chunk_id: await chunkOf('guide/escape.md', 'swapped') }
    await rm(path.join(docs, 'guide/escape.md'))
    await symlink(path.join(outside, 'secret.md'), path.join(docs, 'guide/escape.md'))
    const refused = await host.dispatch('source.open', { chunkId: esc.chunk_id })
    expect(refused).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    expect(JSON.stringify(refused)).not.toContain('Outside the collection')
    expect(await host.dispatch('source.path', { chunkId: esc.chunk_id })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    })
  })

  it('opens PDF sources as base64 bytes with the page, and DOCX as HTML', async () => {
    const bin = await tempDir()
    cleanups.push(bin.cleanup)
    const pdf = makePdf([
      [
        { size: 18, y: 700, text: 'Overview' },
        { size: 11, y: 660, text: 'The gizmo starts in safe mode.' },
      ],
      [
        { size: 18, y: 700, text: 'Calibration' },
        { size: 11, y: 660, text: 'Calibrate the gizmo with the dial on page two.' },
      ],
    ])
    await writeFile(path.join(bin.dir, 'manual.pdf'), pdf)
    await writeFile(
      path.join(bin.dir, 'notes.docx'),
      makeDocx([{ style: 'Heading1', text: 'Notes' }, { text: 'The sprocket needs oil weekly.' }]),
    )
    const { jobId } = ok(await host.dispatch('collections.import', { folder: bin.dir, collection: 'binary' })) as {
      jobId: string
    }
    expect((await doneOf(jobId)).report).toMatchObject({ imported: 2, failed: [] })

    const pdfView = ok(await host.dispatch('source.open', { chunkId: await chunkOf('manual.pdf', 'dial') })) as Record<
      string,
      unknown
    >
    expect(pdfView).toMatchObject({ format: 'pdf', content: null, page: 2 })
    expect(Buffer.from(String(pdfView['pdf_base64']), 'base64').equals(Buffer.from(pdf))).toBe(true)

    const docxView = ok(await host.dispatch('source.open', { chunkId: await chunkOf('notes.docx', 'sprocket') })) as Record<
      string,
      unknown
    >
    expect(docxView).toMatchObject({ format: 'docx', pdf_base64: null })
    expect(String(docxView['content'])).toMatch(/<p>The sprocket needs oil weekly\.<\/p>/)
  })

  it('refuses stored paths with .. or absolute paths, and a symlinked folder leading outside', async () => {
    await expect(resolveInsideRoot(docs, '../secret.md')).rejects.toMatchObject({ code: 'forbidden' })
    await expect(resolveInsideRoot(docs, path.join(outside, 'secret.md'))).rejects.toBeInstanceOf(SourceError)
    await symlink(outside, path.join(docs, 'linked-dir'))
    await expect(resolveInsideRoot(docs, 'linked-dir/secret.md')).rejects.toMatchObject({ code: 'forbidden' })
    await expect(resolveInsideRoot(docs, 'guide/intro.md')).resolves.toBe(path.join(docs, 'guide/intro.md'))
  })

  it('cancels an import and still sends its final event', async () => {
    const big = await tempDir()
    cleanups.push(big.cleanup)
    for (let i = 0; i < 150; i++)
      await write(big.dir, `p${i}.md`, `# Page ${i}\n\n${'Words about widgets and gadgets. '.repeat(40)}\n`)
    // Cancel from inside the first progress event of the importing phase: deterministic, no sleeps.
    let cancelled: Promise<Result<unknown>> | null = null
    cancelOnProgress = (jobId) => (cancelled ??= host.dispatch('jobs.cancel', { jobId }))
    const { jobId } = ok(await host.dispatch('collections.import', { folder: big.dir, collection: 'big' })) as { jobId: string }
    const done = await doneOf(jobId)
    cancelOnProgress = null
    expect(await cancelled).toEqual({ ok: true, value: { cancelled: true } })
    expect(done.error).toBeNull()
    expect(done.report?.cancelled).toBe(true)
    expect(done.report?.imported).toBeLessThan(150)
    expect(host.runningJobs()).toEqual([])
    expect(ok(await host.dispatch('jobs.cancel', { jobId }))).toEqual({ cancelled: false })
  })

  it('cancels a queued import before it starts, with a cancelled report as its final event', async () => {
    const first = ok(await host.dispatch('collections.resync', { collection: 'manual' })) as { jobId: string }
    const second = ok(await host.dispatch('collections.resync', { collection: 'big' })) as { jobId: string }
    expect(ok(await host.dispatch('jobs.cancel', second))).toEqual({ cancelled: true })
    const [a, b] = await Promise.all([doneOf(first.jobId), doneOf(second.jobId)])
    expect(a.report?.cancelled).toBe(false)
    expect(b.report).toMatchObject({ cancelled: true, imported: 0, notices: ['Import cancelled before it started.'] })
  })

  it('never lets a folder replace a collection that came from another folder', async () => {
    const other = await tempDir()
    cleanups.push(other.cleanup)
    await write(other.dir, 'x.md', '# X\n\nAnother folder.\n')
    expect(await host.dispatch('collections.import', { folder: other.dir, collection: 'manual' })).toMatchObject({
      ok: false,
      error: { code: 'conflict' },
    })
    // Without a chosen name, a free one is derived from the folder name.
    const named = path.join(other.dir, path.basename(docs))
    await write(named, 'y.md', '# Y\n\nSame folder name, other place.\n')
    await host.dispatch('collections.import', { folder: docs })
    const first = ok(await host.dispatch('collections.import', { folder: named })) as { jobId: string }
    await doneOf(first.jobId)
    const ids = (ok(await host.dispatch('collections.list', {})) as { id: string; root: string }[]).filter(
      (c) => c.root === named,
    )
    expect(ids.map((c) => c.id)).toEqual([`${path.basename(docs).toLowerCase()}-2`])
  })

  it('refuses a second import of the same collection while one runs', async () => {
    const { jobId } = ok(await host.dispatch('collections.resync', { collection: 'manual' })) as { jobId: string }
    expect(await host.dispatch('collections.resync', { collection: 'manual' })).toMatchObject({
      ok: false,
      error: { code: 'busy' },
    })
    expect((await doneOf(jobId)).error).toBeNull()
    expect(await host.dispatch('collections.resync', { collection: 'nope' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
  })

  it('removes a collection with its documents, chunks and term statistics', async () => {
    expect(ok(await host.dispatch('collections.remove', { collection: 'manual' }))).toEqual({ removed: true })
    for (const table of ['documents', 'chunks', 'term_stats']) {
      const { rows } = await engine.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE collection_id = 'manual'`,
      )
      expect(rows[0]?.n, table).toBe(0)
    }
    expect(ok(await host.dispatch('collections.remove', { collection: 'manual' }))).toEqual({ removed: false })
    const ids = (ok(await host.dispatch('collections.list', {})) as { id: string }[]).map((c) => c.id)
    expect(ids).not.toContain('manual')
  })

  it('keeps settings: a partial change leaves the other fields alone; bad values are refused', async () => {
    expect(ok(await host.dispatch('settings.get', {}))).toEqual({ searchOnly: false, defaultVersion: 'auto', theme: 'system' })
    expect(ok(await host.dispatch('settings.set', { searchOnly: true }))).toEqual({
      searchOnly: true,
      defaultVersion: 'auto',
      theme: 'system',
    })
    expect(ok(await host.dispatch('settings.set', { theme: 'dark' }))).toEqual({
      searchOnly: true,
      defaultVersion: 'auto',
      theme: 'dark',
    })
    expect(await host.dispatch('settings.set', { theme: 'neon' })).toMatchObject({ ok: false, error: { code: 'invalid_input' } })
    expect(ok(await host.dispatch('settings.get', {}))).toEqual({ searchOnly: true, defaultVersion: 'auto', theme: 'dark' })
  })

  it('streams a question as ask.event and always closes it with exactly one ask.done', async () => {
    const { requestId } = ok(await host.dispatch('ask', { question: 'What does E-04 mean?', scope: {}, searchOnly: true })) as {
      requestId: string
    }
    const done = (await waitFor((e) => e.event === 'ask.done' && idOf(e) === requestId)).payload as EventPayload<'ask.done'>
    const mine = events.filter((e) => idOf(e) === requestId)
    expect(mine.filter((e) => e.event === 'ask.done')).toHaveLength(1)
    expect(mine.at(-1)?.event).toBe('ask.done')
    if (done.error === null) expect(mine.at(-2)?.payload).toMatchObject({ event: { type: 'final' } })
    expect(ok(await host.dispatch('ask.cancel', { requestId }))).toEqual({ cancelled: false })
    expect(await host.dispatch('trace.get', { traceId: 'no-such-trace' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
  })

  it('keeps conversations: a thread lists, reads back with each answer, and deletes', async () => {
    const ask = async (question: string, threadId?: string) => {
      const { requestId } = ok(await host.dispatch('ask', { question, scope: {}, searchOnly: true, threadId })) as {
        requestId: string
      }
      await waitFor((e) => e.event === 'ask.done' && idOf(e) === requestId)
      const final = events.find(
        (e) =>
          e.event === 'ask.event' && idOf(e) === requestId && (e.payload as { event: { type: string } }).event.type === 'final',
      )
      return (final!.payload as { event: { result: { thread_id: string } } }).event.result
    }
    const first = await ask('How do I reset the widget?')
    await ask('And what does E-04 mean?', first.thread_id)
    const threads = ok(await host.dispatch('threads.list', {})) as { id: string; title: string }[]
    expect(threads.find((t) => t.id === first.thread_id)?.title).toMatch(/reset the widget/)
    const thread = ok(await host.dispatch('threads.get', { threadId: first.thread_id })) as {
      messages: { role: string; content: string | null }[]
    }
    expect(thread.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(thread.messages[2]!.content).toBe('And what does E-04 mean?')
    expect(ok(await host.dispatch('threads.delete', { threadId: first.thread_id }))).toEqual({ deleted: true })
    expect(await host.dispatch('threads.get', { threadId: first.thread_id })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
  })

  it('imports a model from disk, makes it active, and the engine picks it up without a restart', async () => {
    const before = ok(await host.dispatch('search', { query: 'widget', scope: {}, mode: 'vector', rerank: false })) as {
      notices: string[]
    }
    expect(before.notices.join(' ')).toMatch(/no embedding model/i)
    const status = ok(
      await host.dispatch('models.import', { path: path.join(fixtureModels, 'embedding/tiny-random-bert'), role: 'embedding' }),
    )
    expect(status).toMatchObject({
      role: 'embedding',
      installed: true,
      name: 'tiny-random-bert',
      source: 'import',
      problem: null,
    })
    const after = ok(await host.dispatch('search', { query: 'widget', scope: {}, mode: 'vector', rerank: false })) as {
      notices: string[]
    }
    expect(after.notices.join(' ')).not.toMatch(/no embedding model/i)
    expect(await host.dispatch('models.setActive', { role: 'embedding', name: 'not-installed' })).toMatchObject({ ok: false })
  })

  it('answers app.info and models.status', async () => {
    expect(ok(await host.dispatch('app.info', {}))).toMatchObject({ version: '9.9.9', dataDir: data })
    const status = ok(await host.dispatch('models.status', {})) as { role: string; installed: boolean; problem: string | null }[]
    expect(status.map((s) => s.role).sort()).toEqual(['embedding', 'llm', 'reranker'])
    expect(status.filter((s) => !s.installed && s.problem).map((s) => s.role)).toEqual(['reranker', 'llm'])
  })
})
