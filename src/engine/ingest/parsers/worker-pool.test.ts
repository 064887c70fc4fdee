import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BroadcastChannel } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { Engine } from '../../engine'
import { tempDir } from '../../../test-support/paths'
import { importFolder } from '../importer'
import { ParseError } from '../types'
import { ParsePool } from './worker-pool'

/**
 * A parser that never ends (hang-worker.testutil.ts spins on files named *hang*) is stopped after
 * the time limit, the file is reported as failed, the next file gets a fresh worker, and searches
 * meanwhile answer at once: parsing runs off the engine's thread.
 */

const here = path.dirname(fileURLToPath(import.meta.url))
const LIMIT_MS = 1500
/** What hang-worker.testutil.ts announces for each file it is given. */
const Announced = z.object({ relativePath: z.string(), threadId: z.number() })

describe('parsing in a worker with a time limit', () => {
  let root: string
  let engine: Engine
  let pool: ParsePool
  const log: { relativePath: string; threadId: number; at: number }[] = []
  const channel = new BroadcastChannel('docent-test-parse-log')
  const cleanups: (() => Promise<void>)[] = []

  const spinning = () =>
    new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (log.some((l) => l.relativePath === 'hang.md')) {
          clearInterval(check)
          resolve()
        }
      }, 5)
    })

  beforeAll(async () => {
    channel.onmessage = (e) => log.push({ ...Announced.parse((e as { data: unknown }).data), at: Date.now() })
    const a = await tempDir()
    const b = await tempDir()
    const d = await tempDir()
    cleanups.push(a.cleanup, b.cleanup, d.cleanup)
    root = a.dir
    await writeFile(path.join(root, 'a.md'), '# A\n\nThe first page is about albatrosses.\n')
    await writeFile(path.join(root, 'hang.md'), '# Hang\n\nThis one never finishes parsing.\n')
    await writeFile(path.join(root, 'z.md'), '# Z\n\nThe last page is about zebras.\n')
    await writeFile(path.join(b.dir, 'searchable.md'), '# Searchable\n\nKingfishers dive for fish.\n')
    engine = await Engine.open({ dataDir: d.dir, modelsDir: path.join(d.dir, 'none') })
    await engine.importFolder(b.dir, { collection: 'other' })
    pool = new ParsePool({ timeoutMs: LIMIT_MS, entry: path.join(here, 'hang-worker.testutil.ts') })
  })
  afterAll(async () => {
    channel.close()
    await pool?.close()
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('kills a parse that runs past the limit, reports the file, and keeps search answering meanwhile', async () => {
    const started = Date.now()
    const run = importFolder(engine.db, root, {
      collection: 'hangs',
      embedder: null,
      tokenCounter: await engine.tokenCounter(),
      parsePool: pool,
    })
    await spinning()
    // The fault is happening: the worker is spinning on hang.md and the import has not finished.
    let finished = false
    void run.finally(() => (finished = true))
    const latencies: number[] = []
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now()
      const res = await engine.search('kingfishers', { mode: 'keyword', k: 3 })
      latencies.push(performance.now() - t0)
      expect(res.results.map((h) => h.path)).toEqual(['searchable.md'])
    }
    expect(finished).toBe(false)
    expect(Math.max(...latencies)).toBeLessThan(500)

    const report = await run
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMIT_MS)
    expect(report.failed).toEqual([{ path: 'hang.md', reason: 'took longer than 1.5 s to parse' }])
    expect(report.imported).toBe(2)
    // The spinning worker was terminated: z.md was parsed by a new thread.
    const hang = log.find((l) => l.relativePath === 'hang.md')!
    const z = log.find((l) => l.relativePath === 'z.md')!
    expect(z.threadId).not.toBe(hang.threadId)
    expect(z.at - hang.at).toBeGreaterThanOrEqual(LIMIT_MS - 50)
    const { rows } = await engine.db.query<{ path: string; status: string }>(
      `SELECT path, status FROM documents WHERE collection_id = 'hangs' ORDER BY path`,
    )
    expect(rows).toEqual([
      { path: 'a.md', status: 'indexed' },
      { path: 'hang.md', status: 'failed' },
      { path: 'z.md', status: 'indexed' },
    ])
  })

  it('cancelling the import stops a parse at once, without marking the file failed', async () => {
    log.length = 0
    const controller = new AbortController()
    const run = importFolder(engine.db, root, {
      collection: 'cancelled',
      embedder: null,
      tokenCounter: await engine.tokenCounter(),
      parsePool: pool,
      signal: controller.signal,
    })
    await spinning()
    const t0 = Date.now()
    controller.abort()
    const report = await run
    expect(Date.now() - t0).toBeLessThan(LIMIT_MS)
    expect(report.cancelled).toBe(true)
    expect(report.failed).toEqual([])
    const { rows } = await engine.db.query<{ path: string }>(
      `SELECT path FROM documents WHERE collection_id = 'cancelled' AND status = 'failed'`,
    )
    expect(rows).toEqual([])
  })

  it('stops a parse that outgrows the heap limit, names the reason, and parses the next file in a fresh worker', async () => {
    const small = new ParsePool({ timeoutMs: 60_000, maxHeapMb: 64, entry: path.join(here, 'hang-worker.testutil.ts') })
    try {
      const text = new TextEncoder().encode('# Memory\n\nThis one takes memory until it is stopped.\n')
      const failed = await small.parse(text, 'hog.md').catch((e: unknown) => e)
      // The fault happened: the worker ran out of its heap, and the file got that as its reason.
      expect(failed).toBeInstanceOf(ParseError)
      expect((failed as Error).message).toBe('needed more than 64 MB of memory to parse, and was stopped')
      const doc = await small.parse(new TextEncoder().encode('# After\n\nZebras come next.\n'), 'after.md')
      expect(doc.sections[0]!.headings).toEqual(['After'])
      const threads = log.filter((l) => l.relativePath === 'hog.md' || l.relativePath === 'after.md').map((l) => l.threadId)
      expect(threads).toHaveLength(2)
      expect(threads[0]).not.toBe(threads[1])
    } finally {
      await small.close()
    }
  })
})
