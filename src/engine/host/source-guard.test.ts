import { chmod, lstat, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { JobRef, type EventName, type EventPayload, type Result } from '../../shared/api'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { createEngineHost, type EngineHost } from './host'
import { docxParts, makeDocx, makeZip } from '../ingest/parsers/__fixtures__/generate'

/**
 * The host side of the folder guards: "open in its app" gets only a regular, supported file inside
 * the collection by its joined path; the viewer vets a DOCX for zip bombs before mammoth; and an
 * import that would empty a collection ends with the code the app asks the person about, then
 * goes on only when re-synced with allowEmpty.
 */
describe('host folder guards', () => {
  let docs: string
  let outside: string
  let engine: Engine
  let host: EngineHost
  const done = new Map<string, EventPayload<'import.done'>>()
  const cleanups: (() => Promise<void>)[] = []

  const ok = <T>(r: Result<T>): T => {
    if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`)
    return r.value
  }
  const doneOf = async (jobId: string): Promise<EventPayload<'import.done'>> => {
    for (let i = 0; i < 2000 && !done.has(jobId); i++) await new Promise((r) => setTimeout(r, 10))
    const d = done.get(jobId)
    if (!d) throw new Error('import.done did not arrive')
    return d
  }
  const importDocs = async (extra: { allowEmpty?: boolean } = {}) =>
    doneOf(JobRef.parse(ok(await host.dispatch('collections.resync', { collection: 'docs', ...extra }))).jobId)
  const chunkOf = async (rel: string): Promise<string> => {
    const { rows } = await engine.db.query<{ id: string }>('SELECT id FROM chunks WHERE path = $1 LIMIT 1', [rel])
    if (!rows[0]) throw new Error(`no chunk of ${rel}`)
    return rows[0].id
  }

  beforeAll(async () => {
    const [a, b, c] = [await tempDir(), await tempDir(), await tempDir()]
    cleanups.push(a.cleanup, b.cleanup, c.cleanup)
    docs = a.dir
    outside = c.dir
    await mkdir(path.join(docs, 'guide'))
    await writeFile(path.join(docs, 'guide', 'intro.md'), '# Intro\n\nThe gannet guide.\n')
    await writeFile(path.join(docs, 'run.md'), '# Run\n\nA page that will become a link to a script.\n')
    await writeFile(path.join(docs, 'notes.docx'), makeDocx([{ text: 'The tern nests on the shore.' }]))
    await writeFile(path.join(docs, 'inside.command'), '#!/bin/sh\necho owned\n')
    await chmod(path.join(docs, 'inside.command'), 0o755)
    await writeFile(path.join(outside, 'secret.md'), '# Secret\n\nNot for you.\n')
    engine = await Engine.open({ dataDir: b.dir, modelsDir: path.join(b.dir, 'none') })
    host = createEngineHost(engine, {
      dataDir: b.dir,
      modelsDir: path.join(b.dir, 'none'),
      appVersion: '9.9.9',
      emit: <E extends EventName>(event: E, payload: EventPayload<E>) => {
        if (event === 'import.done') {
          const d = payload as EventPayload<'import.done'>
          done.set(d.jobId, d)
        }
      },
    })
    const { jobId } = JobRef.parse(ok(await host.dispatch('collections.import', { folder: docs, collection: 'docs' })))
    expect((await doneOf(jobId)).report).toMatchObject({ imported: 3, failed: [] })
  })
  afterAll(async () => {
    await host?.shutdown()
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('"open in its app" gets the joined path of a regular supported file', async () => {
    expect(ok(await host.dispatch('source.path', { chunkId: await chunkOf('guide/intro.md') }))).toEqual({
      path: path.join(docs, 'guide', 'intro.md'),
    })
  })

  it('refuses a document that became a link, inside or outside, to something not openable', async () => {
    const chunk = await chunkOf('run.md')
    // Inside the folder, but a script: by its joined path the OS would run it.
    await rm(path.join(docs, 'run.md'))
    await symlink(path.join(docs, 'inside.command'), path.join(docs, 'run.md'))
    expect((await lstat(path.join(docs, 'run.md'))).isSymbolicLink()).toBe(true)
    expect(await host.dispatch('source.path', { chunkId: chunk })).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    // Outside the folder.
    await rm(path.join(docs, 'run.md'))
    await symlink(path.join(outside, 'secret.md'), path.join(docs, 'run.md'))
    expect(await host.dispatch('source.path', { chunkId: chunk })).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    // A folder where the file was.
    await rm(path.join(docs, 'run.md'))
    await mkdir(path.join(docs, 'run.md'))
    expect(await host.dispatch('source.path', { chunkId: chunk })).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    await rm(path.join(docs, 'run.md'), { recursive: true })
    await writeFile(path.join(docs, 'run.md'), '# Run\n\nBack to a plain page.\n')
  })

  it('the viewer runs the zip-bomb check before mammoth', async () => {
    const chunk = await chunkOf('notes.docx')
    expect(ok(await host.dispatch('source.open', { chunkId: chunk }))).toMatchObject({ format: 'docx' })
    const bomb = makeZip([
      ...docxParts([{ text: 'x' }]),
      { name: 'word/media/image1.png', data: 'tiny', declaredSize: 0xfffffff0 },
    ])
    await writeFile(path.join(docs, 'notes.docx'), bomb)
    const t0 = Date.now()
    const r = await host.dispatch('source.open', { chunkId: chunk })
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(r).toMatchObject({ ok: false, error: { message: expect.stringMatching(/zip bomb|too large when unpacked/) } })
  })

  it('an import that would empty the collection ends with would_empty_collection; allowEmpty goes on', async () => {
    for (const e of await readdir(docs)) await rm(path.join(docs, e), { recursive: true })
    expect(await readdir(docs)).toEqual([])
    const held = await importDocs()
    expect(held).toMatchObject({ report: null, code: 'would_empty_collection' })
    expect(held.error).toMatch(/would remove all 3 documents/)
    expect((await engine.catalog.list()).find((c) => c.id === 'docs')?.documents).toBe(3)
    const confirmed = await importDocs({ allowEmpty: true })
    expect(confirmed.error).toBeNull()
    expect(confirmed.report).toMatchObject({ pruned: 3 })
    expect((await engine.catalog.list()).find((c) => c.id === 'docs')?.documents).toBe(0)
  })
})
