import { mkdir, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot, tempDir } from '../../src/test-support/paths'
import type { DocentApi } from '../../src/shared/api'
import { startHarness, type Harness } from './index'

/** The page's globals, for callbacks that run inside the page (this file compiles without the DOM lib). */
type InPage = { docent: DocentApi; inlineRan?: boolean; received: { jobId: string; error: string | null }[] }

/**
 * The harness itself, on a tiny stand-in page (so it does not depend on the renderer's state):
 * window.docent has the preload's shape, calls reach the real engine through dispatch, events
 * arrive through the page's bus, and the page runs under the app's CSP.
 */
describe('browser e2e harness', () => {
  let h: Harness
  let docs: string
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const site = await tempDir()
    const d = await tempDir()
    cleanups.push(site.cleanup, d.cleanup)
    docs = d.dir
    await mkdir(path.join(docs, 'guide'), { recursive: true })
    await writeFile(path.join(docs, 'guide/intro.md'), '# Intro\n\nThe widget has a blue button.\n')
    await writeFile(
      path.join(site.dir, 'index.html'),
      `<!doctype html><html><head><title>stand-in</title><script src="./app.js"></script></head>
       <body><h1>Library</h1><script>window.inlineRan = true</script></body></html>`,
    )
    await writeFile(
      path.join(site.dir, 'app.js'),
      `window.received = []; window.docent.on('import.done', (p) => window.received.push(p));`,
    )
    h = await startHarness({ rendererDir: site.dir, pickFolder: () => docs, dropPaths: { guide: path.join(docs, 'guide') } })
  })

  afterAll(async () => {
    await h?.close()
    for (const c of cleanups) await c()
  })

  it('exposes window.docent with the preload shape, frozen', async () => {
    const shape = await h.page.evaluate(() => {
      const d = (globalThis as unknown as InPage).docent as unknown as Record<string, unknown>
      return { keys: Object.keys(d).sort(), frozen: Object.isFrozen(d), replaced: Reflect.set(globalThis, 'docent', {}) }
    })
    expect(shape).toEqual({
      keys: ['invoke', 'libraryLocation', 'on', 'openExternal', 'pathForFile', 'pickFolder', 'setLibraryLocation'],
      frozen: true,
      replaced: false,
    })
  })

  it('runs the page under the app CSP: inline scripts do not run', async () => {
    expect(await h.page.evaluate(() => (globalThis as unknown as InPage).inlineRan ?? false)).toBe(false)
  })

  it('invokes the real engine through dispatch, with error results for bad calls', async () => {
    expect(await h.page.evaluate(() => (globalThis as unknown as InPage).docent.invoke('collections.list', {}))).toEqual({
      ok: true,
      value: [],
    })
    const bad = await h.page.evaluate(() => (globalThis as unknown as InPage).docent.invoke('nope' as 'collections.list', {}))
    expect(bad).toMatchObject({ ok: false, error: { code: 'unknown_method' } })
    expect(await h.page.evaluate(() => (globalThis as unknown as InPage).docent.pickFolder())).toBe(docs)
  })

  it('imports a folder and delivers events to page listeners; openExternal goes through the engine', async () => {
    const folder = await h.page.evaluate(() => (globalThis as unknown as InPage).docent.pickFolder())
    const started = await h.page.evaluate(
      (f) => (globalThis as unknown as InPage).docent.invoke('collections.import', { folder: f!, collection: 'docs' }),
      folder,
    )
    if (!started.ok) throw new Error(started.error.message)
    await h.waitForEvent('import.done', (p) => p.jobId === started.value.jobId)
    await h.page.waitForFunction(() => (globalThis as unknown as InPage).received.length > 0)
    const received = await h.page.evaluate(() => (globalThis as unknown as InPage).received)
    expect(received[0]).toMatchObject({ jobId: started.value.jobId, error: null })

    const { rows } = await h.engine.db.query<{ id: string }>(`SELECT id FROM chunks WHERE path = 'guide/intro.md'`)
    const id = rows[0]!.id
    expect(await h.page.evaluate((c) => (globalThis as unknown as InPage).docent.openExternal(c), id)).toEqual({
      ok: true,
      value: null,
    })
    expect(await h.page.evaluate(() => (globalThis as unknown as InPage).docent.openExternal('c_not_indexed'))).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
    expect(h.openedExternally).toEqual([path.join(docs, 'guide/intro.md')])
  })

  it('takes screenshots into e2e/artifacts, and into docs/screenshots only when asked (npm run screenshots:ui)', async () => {
    const before = process.env['DOCENT_UPDATE_SCREENSHOTS']
    try {
      delete process.env['DOCENT_UPDATE_SCREENSHOTS']
      const plain = await h.screenshot('harness-smoke')
      expect(plain.map((f) => path.relative(repoRoot, f))).toEqual(['e2e/artifacts/harness-smoke.png'])
      process.env['DOCENT_UPDATE_SCREENSHOTS'] = '1'
      const files = await h.screenshot('harness-smoke')
      expect(files.map((f) => path.relative(repoRoot, f))).toEqual([
        'docs/screenshots/harness-smoke.png',
        'e2e/artifacts/harness-smoke.png',
      ])
      for (const f of files) expect((await stat(f)).size).toBeGreaterThan(1000)
      // The stand-in page is not documentation: keep only the (git-ignored) artifact.
      await rm(files[0]!)
    } finally {
      if (before === undefined) delete process.env['DOCENT_UPDATE_SCREENSHOTS']
      else process.env['DOCENT_UPDATE_SCREENSHOTS'] = before
    }
  })
})
