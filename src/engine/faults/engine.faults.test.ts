import { execFileSync } from 'node:child_process'
import { cp, mkdir, readdir, stat, statfs, truncate } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import { fixtureModels, mcpCorpus, tempDir } from '../../test-support/paths'
import { killEngine, KILLED_BY_SIGKILL, realEngineClient, type Seen } from '../../test-support/engine-process'
import type { EventPayload } from '../../shared/api'

/**
 * Faults the engine must survive: killed mid-import and mid-answer (several times, at random
 * points), a truncated model file, concurrent questions while importing. After each, the database
 * reopens and passes the consistency check (counts, no orphan chunks, no half-written documents).
 */
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c()
})

async function temp() {
  const t = await tempDir('docent-faults-')
  cleanups.push(t.cleanup)
  return t.dir
}

/** 25 documents; `large` (56 documents) leaves room for several kills, each of which lands a progress event (100 ms of writing) late. */
async function corpusSubset(size: 'small' | 'large' = 'small'): Promise<string> {
  const dir = await temp()
  const parts =
    size === 'small'
      ? ['specification/2025-06-18', 'docs/2025-06-18/learn']
      : ['specification/2025-06-18', 'docs/2025-06-18', 'specification/2025-03-26']
  for (const part of parts) await cp(path.join(mcpCorpus, part), path.join(dir, part), { recursive: true })
  return dir
}

async function chunkSnapshot(dataDir: string, modelsDir: string) {
  const engine = await Engine.open({ dataDir, modelsDir })
  try {
    const problems = await checkIndexConsistency(engine.db)
    const { rows } = await engine.db.query<{ id: string; text: string }>('SELECT id, text FROM chunks ORDER BY id')
    return { problems, rows }
  } finally {
    await engine.close()
  }
}

/** Deterministic "random" kill points, so a failure can be reproduced. */
function killPoints(n: number, seed: number, max: number): number[] {
  let s = seed
  return Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2 ** 31
    return 1 + (s % max)
  })
}

/**
 * Every test first checks that its fault really happened (the process ended by SIGKILL while the
 * job was still running, the model files really are truncated, the disk really filled up) and
 * fails when it could not be produced: a fault test that silently skips its fault proves nothing.
 */
describe('engine killed at random points', () => {
  it('mid-import, four times: each restart completes the import and the index equals a clean import', async () => {
    const corpus = await corpusSubset('large')
    const data = path.join(await temp(), 'index')
    const models = path.join(await temp(), 'none')
    const { client, rec } = realEngineClient(data, models)
    const kills: string[] = []
    try {
      // `imported` counts the documents this run wrote (a re-import skips the finished ones), so the
      // points stay small: four kills after 1-4 new documents (plus what one progress interval
      // writes) leave work in a 56-document folder.
      for (const point of killPoints(4, 42, 4)) {
        const started = await client.invoke('collections.import', { folder: corpus, collection: 'mcp' })
        if (!started.ok) throw new Error(started.error.message)
        const jobId = started.value.jobId
        const hit = await rec.waitFor(
          (s) =>
            jobOf(s) === jobId &&
            (s.event === 'import.done' ||
              (s.event === 'import.progress' && progressOf(s).phase !== 'done' && progressOf(s).imported >= point)),
        )
        expect(hit.event, `the import finished before writing ${point} new documents: no kill point inside it`).toBe(
          'import.progress',
        )
        const at = progressOf(hit)
        expect(at.filesDone).toBeLessThan(at.filesTotal)
        killEngine(client)
        const done = await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === jobId)
        const error = (done.payload as EventPayload<'import.done'>).error
        // The job ended because the process was SIGKILLed, not because the import completed.
        expect(error).toMatch(KILLED_BY_SIGKILL)
        expect(error).toMatch(/did not finish/)
        kills.push(`after ${at.imported} new (${at.filesDone}/${at.filesTotal} files)`)
      }
      expect(kills).toHaveLength(4)
      console.log(`mid-import kills: ${kills.join('; ')}`)
      const final = await client.invoke('collections.import', { folder: corpus, collection: 'mcp' })
      if (!final.ok) throw new Error(final.error.message)
      const done = await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === final.value.jobId)
      const finalDone = done.payload as EventPayload<'import.done'>
      expect(finalDone.error).toBeNull()
      // The kills left documents for the last run: they really interrupted the import.
      expect(finalDone.report!.imported).toBeGreaterThan(0)
    } finally {
      await client.dispose(5_000)
    }
    const resumed = await chunkSnapshot(data, models)
    expect(resumed.problems).toEqual([])

    const cleanData = path.join(await temp(), 'index')
    const clean = await Engine.open({ dataDir: cleanData, modelsDir: models })
    await clean.importFolder(corpus, { collection: 'mcp' })
    await clean.close()
    const reference = await chunkSnapshot(cleanData, models)
    expect(resumed.rows.length).toBe(reference.rows.length)
    expect(resumed.rows).toEqual(reference.rows)
  })

  it('mid-import, as the app runs it: the restarted engine resumes the import by itself', async () => {
    const corpus = await corpusSubset()
    const data = path.join(await temp(), 'index')
    const models = path.join(await temp(), 'none')
    const { client, rec } = realEngineClient(data, models, { watch: true })
    try {
      const started = await client.invoke('collections.import', { folder: corpus, collection: 'mcp' })
      if (!started.ok) throw new Error(started.error.message)
      const hit = await rec.waitFor(
        (s) =>
          jobOf(s) === started.value.jobId &&
          (s.event === 'import.done' ||
            (s.event === 'import.progress' && progressOf(s).phase !== 'done' && progressOf(s).imported >= 8)),
      )
      expect(hit.event, 'the import finished before 8 documents: no kill point inside it').toBe('import.progress')
      killEngine(client)
      const killed = await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === started.value.jobId)
      expect((killed.payload as EventPayload<'import.done'>).error).toMatch(KILLED_BY_SIGKILL)
      // Any request starts the engine again; it finds the interrupted import and finishes it.
      expect((await client.invoke('collections.list', {})).ok).toBe(true)
      const resumed = await rec.waitFor(
        (s) =>
          s.event === 'import.done' &&
          jobOf(s) !== started.value.jobId &&
          (s.payload as EventPayload<'import.done'>).report?.collection === 'mcp',
        300_000,
      )
      const report = (resumed.payload as EventPayload<'import.done'>).report!
      expect(report.unchanged).toBeGreaterThanOrEqual(8)
      // The kill left documents to import, so this really was a resumed import.
      expect(report.imported).toBeGreaterThan(0)
      expect(report.failed).toEqual([])
    } finally {
      await client.dispose(5_000)
    }
    const after = await chunkSnapshot(data, models)
    expect(after.problems).toEqual([])
    const cleanData = path.join(await temp(), 'index')
    const clean = await Engine.open({ dataDir: cleanData, modelsDir: models })
    await clean.importFolder(corpus, { collection: 'mcp' })
    await clean.close()
    expect(after.rows).toEqual((await chunkSnapshot(cleanData, models)).rows)
  })

  it('mid-answer, three times: the database reopens consistent and the next question is answered', async () => {
    const corpus = await corpusSubset()
    const data = path.join(await temp(), 'index')
    const { client, rec } = realEngineClient(data, fixtureModels)
    try {
      const started = await client.invoke('collections.import', { folder: corpus, collection: 'mcp' })
      if (!started.ok) throw new Error(started.error.message)
      await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === started.value.jobId, 300_000)
      for (let i = 0; i < 3; i++) {
        const asked = await client.invoke('ask', {
          question: `How do servers report tool errors? (${i})`,
          scope: { collections: ['mcp'], version: 'all' },
        })
        if (!asked.ok) throw new Error(asked.error.message)
        const requestId = asked.value.requestId
        const ofThisAsk = (s: Seen) =>
          (s.event === 'ask.event' || s.event === 'ask.done') && (s.payload as { requestId: string }).requestId === requestId
        // Kill at a different point each time: the first stage, the model's first token (mid-generation:
        // the 'generate' stage starts on it, whatever the token is; a reply of no sentences streams no
        // draft text), or at once.
        const writing = (s: Seen) => {
          const e = (s.payload as EventPayload<'ask.event'>).event
          return e.type === 'token' || (e.type === 'stage' && e.stage === 'generate')
        }
        if (i < 2) {
          const hit = await rec.waitFor((s) => ofThisAsk(s) && (s.event === 'ask.done' || i === 0 || writing(s)))
          expect(hit.event, `question ${i} finished before its kill point`).toBe('ask.event')
        }
        killEngine(client)
        const done = await rec.waitFor((s) => s.event === 'ask.done' && ofThisAsk(s))
        // Not answered: the process was SIGKILLed while the question was open.
        expect((done.payload as EventPayload<'ask.done'>).error).toMatch(KILLED_BY_SIGKILL)
      }
      // The restarted engine answers the next question.
      const next = await client.invoke('ask', {
        question: 'How do servers report tool errors?',
        scope: { collections: ['mcp'], version: 'all' },
      })
      if (!next.ok) throw new Error(next.error.message)
      const answered = await rec.waitFor(
        (s) => s.event === 'ask.done' && (s.payload as { requestId: string }).requestId === next.value.requestId,
        300_000,
      )
      expect((answered.payload as EventPayload<'ask.done'>).error).toBeNull()
      const again = await client.invoke('search', {
        query: 'tool errors',
        scope: { collections: ['mcp'], version: 'all' },
        mode: 'keyword',
        rerank: false,
        k: 3,
      })
      expect(again.ok).toBe(true)
    } finally {
      await client.dispose(5_000)
    }
    const after = await chunkSnapshot(data, fixtureModels)
    expect(after.problems).toEqual([])
    expect(after.rows.length).toBeGreaterThan(50)
  })
})

describe('damaged models', () => {
  it('a truncated embedding model and GGUF are reported, and import and search carry on', async () => {
    const models = await temp()
    await cp(fixtureModels, models, { recursive: true })
    const onnx = path.join(models, 'embedding/tiny-random-bert/onnx/model.onnx')
    const onnxBefore = (await stat(onnx)).size
    await truncate(onnx, Math.floor(onnxBefore / 3))
    const gguf = (await readdir(path.join(models, 'llm'))).find((f) => f.endsWith('.gguf'))!
    const ggufPath = path.join(models, 'llm', gguf)
    const ggufSize = (await stat(ggufPath)).size
    await truncate(ggufPath, 4096)
    // The files really are truncated (and were larger before): the fault is in place.
    expect((await stat(onnx)).size).toBe(Math.floor(onnxBefore / 3))
    expect((await stat(ggufPath)).size).toBe(4096)
    expect(ggufSize).toBeGreaterThan(4096)

    const corpus = await corpusSubset()
    const engine = await Engine.open({ dataDir: path.join(await temp(), 'index'), modelsDir: models })
    try {
      const report = await engine.importFolder(corpus, { collection: 'mcp' })
      expect(report.failed).toEqual([])
      expect(report.imported).toBeGreaterThan(10)
      const res = await engine.search('tool errors', { mode: 'hybrid', k: 5 })
      expect(res.degraded).toBe(true)
      expect(res.notices.join(' ')).toMatch(/embedding model could not be loaded/)
      expect(res.results.length).toBeGreaterThan(0)
      const answer = await engine.ask({
        question: 'How do servers report tool errors?',
        scope: { collections: ['mcp'], version: 'all' },
      })
      // Without a loadable language model Ask falls back to search-only: passages, no generated text.
      expect(answer.mode).toBe('search-only')
      expect(answer.citations.length).toBeGreaterThan(0)
      expect(await checkIndexConsistency(engine.db)).toEqual([])
    } finally {
      await engine.close()
    }
  })
})

describe('concurrency', () => {
  it('questions asked while an import runs all get their final answer, and the import completes', async () => {
    const corpus = await corpusSubset()
    const data = path.join(await temp(), 'index')
    const { client, rec } = realEngineClient(data, path.join(await temp(), 'none'))
    try {
      const first = await client.invoke('collections.import', { folder: corpus, collection: 'mcp' })
      if (!first.ok) throw new Error(first.error.message)
      await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === first.value.jobId, 300_000)
      // Re-import a second copy while asking: reads and writes interleave on one engine.
      const second = await temp()
      await cp(corpus, second, { recursive: true })
      const started = await client.invoke('collections.import', { folder: second, collection: 'mcp-copy' })
      if (!started.ok) throw new Error(started.error.message)
      await rec.waitFor(
        (s) =>
          s.event === 'import.progress' &&
          jobOf(s) === started.value.jobId &&
          (s.payload as { phase: string }).phase === 'importing',
      )
      const asks = await Promise.all(
        ['What is a tool?', 'How does pagination work?', 'What is sampling?'].map((q) =>
          client.invoke('ask', { question: q, scope: { collections: ['mcp'], version: 'all' } }),
        ),
      )
      const ids = asks.map((a) => (a.ok ? a.value.requestId : null))
      expect(ids.every(Boolean)).toBe(true)
      // The questions were accepted while the import was still running: the overlap really happened.
      expect(rec.seen.some((s) => s.event === 'import.done' && jobOf(s) === started.value.jobId)).toBe(false)
      const finals = await Promise.all(
        ids.map((id) =>
          rec.waitFor((s) => s.event === 'ask.done' && (s.payload as { requestId: string }).requestId === id, 300_000),
        ),
      )
      for (const f of finals) expect((f.payload as { error: string | null }).error).toBeNull()
      const done = await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === started.value.jobId, 300_000)
      expect((done.payload as EventPayload<'import.done'>).error).toBeNull()
    } finally {
      await client.dispose(5_000)
    }
    expect((await chunkSnapshot(data, path.join(await temp(), 'none'))).problems).toEqual([])
  })
})

function jobOf(s: Seen): string | undefined {
  return (s.payload as { jobId?: string }).jobId
}

function progressOf(s: Seen): EventPayload<'import.progress'> {
  return s.payload as EventPayload<'import.progress'>
}

/** A small tmpfs stands in for a full disk; mounting needs root (CI runs as root). */
function mountSmallDisk(dir: string, size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' })
    cleanups.unshift(async () => {
      try {
        execFileSync('umount', [dir], { stdio: 'ignore' })
      } catch {
        // Already gone.
      }
    })
    return null
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
}

describe('disk full', () => {
  it('an import that runs out of space stops with a clear reason, and what was written reopens consistent', async () => {
    const disk = await temp()
    const problem = mountSmallDisk(disk, '128m')
    // Without a small disk there is no disk-full fault to test: fail rather than skip.
    expect(problem, 'cannot mount a small tmpfs here (needs root), so the disk cannot fill up').toBeNull()
    const size = await statfs(disk)
    expect(Number(size.blocks) * Number(size.bsize)).toBeLessThanOrEqual(128 * 2 ** 20)
    const data = path.join(disk, 'index')
    await mkdir(data, { recursive: true })
    const models = path.join(await temp(), 'none')
    const engine = await Engine.open({ dataDir: data, modelsDir: models })
    let failure: unknown = null
    try {
      await engine.importFolder(mcpCorpus, { collection: 'mcp' })
    } catch (err) {
      failure = err
    }
    const kept = (await engine.catalog.list())[0]?.documents ?? 0
    await engine.close()
    // The disk really filled up: the free-space guard (or the file system) stopped the import, not an unrelated error.
    expect(failure).not.toBeNull()
    expect(String(failure)).toMatch(/not enough free disk space|ENOSPC/)
    console.log(`disk full: import stopped after ${kept} documents: ${String(failure).slice(0, 140)}`)
    // Free space (as a person would), then the database must open, be consistent and finish the import.
    execFileSync('mount', ['-o', 'remount,size=512m', disk], { stdio: 'ignore' })
    const after = await chunkSnapshot(data, models)
    expect(after.problems).toEqual([])
    const again = await Engine.open({ dataDir: data, modelsDir: models })
    try {
      const report = await again.importFolder(mcpCorpus, { collection: 'mcp' })
      expect(report.failed).toEqual([])
      expect(report.unchanged).toBeGreaterThanOrEqual(kept)
      expect(await checkIndexConsistency(again.db)).toEqual([])
    } finally {
      await again.close()
    }
  })
})
