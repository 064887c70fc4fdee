import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import { tempDir } from '../../test-support/paths'
import type { CollectionWatch, WatchEvent } from './collection-watcher'

type Finished = Extract<WatchEvent, { type: 'sync-finished' }>

/** What an index holds for a collection, minus timestamps: two indexes of the same folder must be equal. */
async function snapshot(engine: Engine, collection: string) {
  const docs = (
    await engine.db.query(
      `SELECT path, status, sha256, size::float8 AS size, mtime_ms, version, kind, chunk_count FROM documents WHERE collection_id = $1 ORDER BY path`,
      [collection],
    )
  ).rows
  const chunks = (
    await engine.db.query(
      `SELECT id, path, heading, ordinal, position, version, kind, text, embed_hash FROM chunks WHERE collection_id = $1 ORDER BY id`,
      [collection],
    )
  ).rows
  const stats = (
    await engine.db.query(`SELECT chunk_count, total_len::float8 AS total_len FROM collections WHERE id = $1`, [collection])
  ).rows
  return { docs, chunks, stats }
}

describe('watching a collection folder', () => {
  let root: string
  let engine: Engine
  let watch: CollectionWatch
  const events: WatchEvent[] = []
  const waiters: { pred: (e: Finished) => boolean; resolve: (e: Finished) => void }[] = []
  const latencies: Record<string, number> = {}
  const cleanups: (() => Promise<void>)[] = []

  const write = async (rel: string, text: string) => {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await writeFile(path.join(root, rel), text)
  }
  const nextSync = (pred: (e: Finished) => boolean, timeoutMs = 30_000) =>
    new Promise<Finished>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no matching sync within the time limit')), timeoutMs)
      waiters.push({ pred, resolve: (e) => (clearTimeout(timer), resolve(e)) })
    })
  const touched = (p: string) => (e: Finished) => e.changes.some((c) => c.path === p)
  /** The index as a clean import of the folder as it is now would make it. */
  const cleanImport = async () => {
    const fresh = await Engine.open({ dataDir: null, modelsDir: path.join(root, '..', 'no-models') })
    try {
      await fresh.importFolder(root, { collection: 'notes' })
      return await snapshot(fresh, 'notes')
    } finally {
      await fresh.close()
    }
  }
  const expectInStep = async () => {
    await watch.idle()
    expect(await checkIndexConsistency(engine.db)).toEqual([])
    expect(await snapshot(engine, 'notes')).toEqual(await cleanImport())
  }
  /** Saves a file and measures the time until keyword search finds the new text in it. */
  const saveUntilSearchable = async (rel: string, text: string, token: string): Promise<number> => {
    const t0 = performance.now()
    await write(rel, text)
    for (;;) {
      const res = await engine.search(token, { mode: 'keyword', k: 3 })
      if (res.results.some((h) => h.path === rel)) return Math.round(performance.now() - t0)
      if (performance.now() - t0 > 30_000) throw new Error(`${rel} was not searchable within 30 s`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  beforeAll(async () => {
    const t = await tempDir()
    cleanups.push(t.cleanup)
    root = path.join(t.dir, 'notes')
    await write('guide/intro.md', '# Intro\n\nWelcome to the widget manual.\n\n## Setup\n\nPlug in the widget.\n')
    await write('guide/retries.md', '# Retries\n\n## Policy\n\nRetry three times with backoff.\n')
    await write('a/notes.md', '# Notes\n\nFirst notes file.\n')
    await write('b/notes.md', '# Notes\n\nSecond notes file.\n')
    // Never imported, so never watched: a full import skips them too.
    await write('.hidden/secret.md', '# Secret\n')
    await write('node_modules/pkg/readme.md', '# Package\n')
    await write('image.bin', 'not a document')
    engine = await Engine.open({ dataDir: null, modelsDir: path.join(t.dir, 'no-models') })
    await engine.importFolder(root, { collection: 'notes' })
    watch = await engine.watch('notes', {
      catchUp: false,
      onEvent: (e) => {
        events.push(e)
        if (e.type !== 'sync-finished') return
        for (const w of [...waiters]) {
          if (w.pred(e)) {
            waiters.splice(waiters.indexOf(w), 1)
            w.resolve(e)
          }
        }
      },
    })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
    console.log(`watch latency, save -> searchable (ms): ${JSON.stringify(latencies)}`)
  })

  it('a new file becomes searchable, and the index equals a clean import', async () => {
    const synced = nextSync(touched('guide/new.md'))
    latencies['create'] = await saveUntilSearchable(
      'guide/new.md',
      '# New\n\nThe zebraquartz valve opens slowly.\n',
      'zebraquartz',
    )
    expect((await synced).changes).toContainEqual({ path: 'guide/new.md', change: 'added' })
    await expectInStep()
  })

  it('an edit replaces the document', async () => {
    const synced = nextSync(touched('guide/intro.md'))
    latencies['edit'] = await saveUntilSearchable(
      'guide/intro.md',
      '# Intro\n\nWelcome to the widget manual.\n\n## Setup\n\nPlug in the widget, then turn the kumquatvelvet dial.\n',
      'kumquatvelvet',
    )
    const e = await synced
    expect(e.changes).toEqual([{ path: 'guide/intro.md', change: 'changed' }])
    expect(e.full).toBe(false)
    await expectInStep()
  })

  it('a rename is a delete and an add', async () => {
    const synced = nextSync((e) => touched('guide/new.md')(e) && touched('guide/renamed.md')(e))
    await rename(path.join(root, 'guide/new.md'), path.join(root, 'guide/renamed.md'))
    const e = await synced
    expect(e.changes).toEqual([
      { path: 'guide/new.md', change: 'removed' },
      { path: 'guide/renamed.md', change: 'added' },
    ])
    await expectInStep()
    const hits = await engine.search('zebraquartz', { mode: 'keyword', k: 5 })
    expect(hits.results.map((h) => h.path)).toEqual(['guide/renamed.md'])
  })

  it('a delete removes the document and its chunks', async () => {
    const synced = nextSync(touched('a/notes.md'))
    await rm(path.join(root, 'a/notes.md'))
    expect((await synced).changes).toEqual([{ path: 'a/notes.md', change: 'removed' }])
    await expectInStep()
  })

  it('a folder renamed moves every document in it', async () => {
    const synced = nextSync((e) => touched('guide/intro.md')(e) && touched('manual/intro.md')(e))
    await rename(path.join(root, 'guide'), path.join(root, 'manual'))
    await synced
    await expectInStep()
  })

  it('a burst of 1,000 new files (and then their removal) is applied in a few syncs', async () => {
    const before = events.filter((e) => e.type === 'sync-started').length
    const t0 = performance.now()
    for (let start = 0; start < 1000; start += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const n = start + i
          return write(`bulk/${String(n % 10)}/page-${n}.md`, `# Page ${n}\n\nBulk page number ${n} about topic ${n % 37}.\n`)
        }),
      )
    }
    const count = async () =>
      Number(
        (await engine.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM documents WHERE path LIKE 'bulk/%'`)).rows[0]!.n,
      )
    while ((await count()) < 1000) {
      if (performance.now() - t0 > 120_000) throw new Error(`only ${await count()} of 1000 files imported after 120 s`)
      await new Promise((r) => setTimeout(r, 100))
    }
    latencies['burst_1000_files'] = Math.round(performance.now() - t0)
    await expectInStep()
    const syncs = events.filter((e) => e.type === 'sync-started').length - before
    console.log(`1,000-file burst: ${syncs} sync(s), all searchable after ${latencies['burst_1000_files']} ms`)
    expect(syncs).toBeLessThanOrEqual(10)

    const t1 = performance.now()
    await rm(path.join(root, 'bulk'), { recursive: true })
    while ((await count()) > 0) {
      if (performance.now() - t1 > 60_000) throw new Error(`${await count()} bulk documents left after 60 s`)
      await new Promise((r) => setTimeout(r, 100))
    }
    latencies['burst_delete_1000_files'] = Math.round(performance.now() - t1)
    await expectInStep()
  })

  it('a versions.json saved beside docs/ re-versions the files it governs, though they did not change', async () => {
    const added = nextSync(touched('site/docs/pairing.md'))
    await write('site/docs/pairing.md', '# Pairing\n\nHold the button for five seconds.\n')
    await added
    const version = async () =>
      (await engine.db.query<{ version: string | null }>(`SELECT version FROM documents WHERE path = 'site/docs/pairing.md'`))
        .rows[0]?.version
    expect(await version()).toBeNull()
    // Docusaurus starts versioning the site: the unchanged docs/ page becomes "next".
    const retagged = nextSync(touched('site/docs/pairing.md'))
    await write('site/versioned_docs/version-1.0/pairing.md', '# Pairing\n\nHold the button for ten seconds.\n')
    await write('site/versions.json', '["1.0"]\n')
    expect((await retagged).changes).toContainEqual({ path: 'site/docs/pairing.md', change: 'changed' })
    expect(await version()).toBe('next')
    await expectInStep()
  })

  it('a v2/ folder saved beside v1/ makes both versions, though v1/ did not change', async () => {
    const added = nextSync(touched('api/v1/users.md'))
    await write('api/v1/users.md', '# Users\n\nList users with GET /users.\n')
    await added
    const version = async () =>
      (await engine.db.query<{ version: string | null }>(`SELECT version FROM documents WHERE path = 'api/v1/users.md'`)).rows[0]
        ?.version
    // A lone v1/ is part of an address, not a version.
    expect(await version()).toBeNull()
    const retagged = nextSync(touched('api/v1/users.md'))
    await write('api/v2/users.md', '# Users\n\nList users with GET /users?page=1.\n')
    expect((await retagged).changes).toContainEqual({ path: 'api/v1/users.md', change: 'changed' })
    expect(await version()).toBe('v1')
    await expectInStep()
  })

  it('stops cleanly', async () => {
    await watch.stop()
    await write('after-stop.md', '# After\n\nWritten after the watch stopped.\n')
    // Nothing watches any more: a second watch catches up with what changed meanwhile.
    const again = await engine.watch('notes')
    await again.idle()
    expect((await snapshot(engine, 'notes')).docs.map((d) => (d as { path: string }).path)).toContain('after-stop.md')
    await again.stop()
  })
})
