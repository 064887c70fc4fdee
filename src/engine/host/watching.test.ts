import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { createEngineHost, type EngineHost } from './host'
import { tempDir } from '../../test-support/paths'
import type { EventName } from '../../shared/api'

/** The app's host keeps imported folders in step by itself: an edit on disk becomes searchable. */
describe('engine host watching folders (the app behaviour)', () => {
  let engine: Engine
  let host: EngineHost
  let docs: string
  const events: { event: EventName; payload: unknown }[] = []
  const cleanups: (() => Promise<void>)[] = []

  const waitFor = async (test: (e: { event: EventName; payload: unknown }) => boolean, ms = 30_000) => {
    const t0 = Date.now()
    while (Date.now() - t0 < ms) {
      const hit = events.find(test)
      if (hit) return hit
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error('event did not arrive')
  }

  beforeAll(async () => {
    const a = await tempDir()
    const b = await tempDir()
    cleanups.push(a.cleanup, b.cleanup)
    docs = a.dir
    await mkdir(path.join(docs, 'guide'), { recursive: true })
    await writeFile(path.join(docs, 'guide/intro.md'), '# Intro\n\nWelcome to the widget manual.\n')
    engine = await Engine.open({ dataDir: b.dir, modelsDir: path.join(b.dir, 'none') })
    host = createEngineHost(engine, {
      dataDir: b.dir,
      modelsDir: path.join(b.dir, 'none'),
      watchFolders: true,
      emit: (event, payload) => events.push({ event, payload }),
    })
  })
  afterAll(async () => {
    await host?.shutdown()
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('after an import, a file saved in the folder is searchable without a re-import', async () => {
    const r = await host.dispatch('collections.import', { folder: docs, collection: 'manual' })
    if (!r.ok) throw new Error(r.error.message)
    await waitFor((e) => e.event === 'import.done')
    const changedBefore = events.filter((e) => e.event === 'collections.changed').length
    // Give the watcher a moment to be ready, then save a new file.
    await new Promise((res) => setTimeout(res, 1000))
    const saved = Date.now()
    await writeFile(path.join(docs, 'guide/flux.md'), '# Flux\n\nThe flux capacitor needs 1.21 gigawatts.\n')
    await waitFor(
      (e) => e.event === 'collections.changed' && events.filter((x) => x.event === 'collections.changed').length > changedBefore,
    )
    const res = await host.dispatch('search', {
      query: 'flux capacitor gigawatts',
      scope: { collections: ['manual'], version: 'all' },
      mode: 'keyword',
      rerank: false,
      k: 3,
    })
    if (!res.ok) throw new Error(res.error.message)
    expect((res.value as { results: { path: string }[] }).results[0]?.path).toBe('guide/flux.md')
    console.log(`save -> searchable through the app host: ${Date.now() - saved} ms`)
  })
})
