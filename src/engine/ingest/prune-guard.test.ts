import { existsSync } from 'node:fs'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import type { WatchEvent } from '../watch/collection-watcher'
import { ImportRefusedError } from './importer'

/**
 * What could not be seen is never pruned: a folder that fails to open keeps its documents, and a
 * sync that would remove every document of a collection (emptied folder, missing folder, drive
 * not connected) removes nothing unless the caller allows it; a watcher never may.
 *
 * Running as root, permissions cannot make a folder fail to open, so opendir is wrapped: it throws
 * EACCES for the folder named in `failOpen` and passes everything else through.
 */

const opendirCalls = vi.hoisted(() => ({ failOpen: null as string | null, failed: [] as string[] }))

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  const opendir: typeof real.opendir = (dir, options) => {
    if (opendirCalls.failOpen && path.resolve(String(dir)) === opendirCalls.failOpen) {
      opendirCalls.failed.push(String(dir))
      return Promise.reject(Object.assign(new Error(`EACCES: permission denied, opendir '${String(dir)}'`), { code: 'EACCES' }))
    }
    return real.opendir(dir, options)
  }
  return { ...real, default: { ...real, opendir }, opendir }
})

describe('never pruning what could not be seen', () => {
  let data: string
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []

  const docCount = async (collection: string) =>
    Number(
      (await engine.db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents WHERE collection_id = $1', [collection]))
        .rows[0]?.n,
    )
  const makeFolder = async (n: number): Promise<string> => {
    const t = await tempDir()
    cleanups.push(t.cleanup)
    for (let i = 0; i < n; i++) {
      const rel = i % 2 ? `sub/page-${i}.md` : `page-${i}.md`
      await mkdir(path.dirname(path.join(t.dir, rel)), { recursive: true })
      await writeFile(path.join(t.dir, rel), `# Page ${i}\n\nNotes about the heron number ${i}.\n`)
    }
    return t.dir
  }

  beforeAll(async () => {
    const d = await tempDir()
    cleanups.push(d.cleanup)
    data = d.dir
    engine = await Engine.open({ dataDir: data, modelsDir: path.join(data, 'none') })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('an emptied folder removes nothing, and says why; allowEmpty goes on', async () => {
    const root = await makeFolder(19)
    expect((await engine.importFolder(root, { collection: 'emptied' })).imported).toBe(19)
    for (const e of await readdir(root)) await rm(path.join(root, e), { recursive: true })
    // The fault: the folder is there and empty.
    expect(await readdir(root)).toEqual([])
    const refused = await engine.importFolder(root, { collection: 'emptied' }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ImportRefusedError)
    expect(refused).toMatchObject({ code: 'would_empty_collection' })
    expect(String((refused as Error).message)).toMatch(/would remove all 19 documents.*Nothing was removed/)
    expect(await docCount('emptied')).toBe(19)
    expect((await engine.search('heron', { mode: 'keyword', k: 5 })).results.length).toBeGreaterThan(0)

    const confirmed = await engine.importFolder(root, { collection: 'emptied', allowEmpty: true })
    expect(confirmed.pruned).toBe(19)
    expect(await docCount('emptied')).toBe(0)
  })

  it('a missing folder removes nothing, and says why', async () => {
    const root = await makeFolder(4)
    await engine.importFolder(root, { collection: 'missing' })
    await rename(root, `${root}-moved`)
    cleanups.push(() => rm(`${root}-moved`, { recursive: true, force: true }))
    expect(existsSync(root)).toBe(false)
    const refused = await engine.importFolder(root, { collection: 'missing', allowEmpty: true }).catch((e: unknown) => e)
    expect(refused).toMatchObject({ code: 'folder_missing' })
    expect(String((refused as Error).message)).toContain(root)
    expect(await docCount('missing')).toBe(4)
  })

  it('a sub-folder that fails to open keeps its documents, and the failure is reported', async () => {
    const root = await makeFolder(6)
    expect((await engine.importFolder(root, { collection: 'unreadable' })).imported).toBe(6)
    opendirCalls.failOpen = path.join(root, 'sub')
    opendirCalls.failed = []
    try {
      const r = await engine.importFolder(root, { collection: 'unreadable' })
      // The fault happened: the walk tried to open sub/ and could not.
      expect(opendirCalls.failed).toEqual([path.join(root, 'sub')])
      expect(r.failed).toEqual([{ path: 'sub', reason: expect.stringMatching(/could not be opened.*permission denied/) }])
      expect(r.pruned).toBe(0)
      expect(r.notices.join(' ')).toMatch(/3 documents were kept because sub could not be opened/)
      expect(await docCount('unreadable')).toBe(6)
    } finally {
      opendirCalls.failOpen = null
    }
    // Readable again, and one file really gone: now it is pruned, and only it.
    await rm(path.join(root, 'sub', 'page-1.md'))
    const after = await engine.importFolder(root, { collection: 'unreadable' })
    expect(after).toMatchObject({ pruned: 1, failed: [] })
    expect(await docCount('unreadable')).toBe(5)
  })

  it('the root failing to open keeps everything', async () => {
    const root = await makeFolder(2)
    await engine.importFolder(root, { collection: 'root-fails' })
    opendirCalls.failOpen = root
    opendirCalls.failed = []
    try {
      const r = await engine.importFolder(root, { collection: 'root-fails' })
      expect(opendirCalls.failed).toEqual([root])
      expect(r.failed.map((f) => f.path)).toEqual(['.'])
      expect(r.pruned).toBe(0)
      expect(await docCount('root-fails')).toBe(2)
    } finally {
      opendirCalls.failOpen = null
    }
  })

  it('a watcher never prunes a whole collection', async () => {
    const root = await makeFolder(3)
    await engine.importFolder(root, { collection: 'watched' })
    const events: WatchEvent[] = []
    const w = await engine.watch('watched', { catchUp: false, quietMs: 100, maxWaitMs: 500, onEvent: (e) => events.push(e) })
    try {
      for (const e of await readdir(root)) await rm(path.join(root, e), { recursive: true })
      expect(await readdir(root)).toEqual([])
      const end = Date.now() + 20_000
      while (!events.some((e) => e.type === 'sync-failed')) {
        if (Date.now() > end) throw new Error(`no refused sync; events: ${JSON.stringify(events)}`)
        await new Promise((r) => setTimeout(r, 50))
      }
      await w.idle()
      const failed = events.find((e) => e.type === 'sync-failed')
      expect(failed).toMatchObject({ error: expect.stringMatching(/would remove all 3 documents/) })
      expect(events.some((e) => e.type === 'sync-finished' && e.removed > 0)).toBe(false)
      expect(await docCount('watched')).toBe(3)
      // A full catch-up sync (as on start) holds back too.
      await expect(engine.importFolder(root, { collection: 'watched' })).rejects.toMatchObject({ code: 'would_empty_collection' })
    } finally {
      await w.stop()
    }
  })
})
