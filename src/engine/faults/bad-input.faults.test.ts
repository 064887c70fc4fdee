import { lstat } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-support/paths'
import { realEngineClient } from '../../test-support/engine-process'
import { writeBadInputCorpus } from '../../test-support/bad-input'
import type { EventPayload } from '../../shared/api'

/**
 * The generated bad-input corpus (evals/bad-input/generate.ts) imported through the app's engine
 * process: every file ends imported or failed/skipped with a reason, the rest of the folder is
 * searchable, and the engine keeps answering searches while it works.
 */
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups) await c()
})

describe('bad-input corpus', () => {
  it('every input is imported or refused with a reason, and the engine keeps serving', async () => {
    const corpus = await tempDir('docent-bad-input-')
    const data = await tempDir('docent-bad-input-db-')
    cleanups.push(corpus.cleanup, data.cleanup)
    const inputs = await writeBadInputCorpus(corpus.dir)
    // The hostile inputs are really there, as written: a refusal below is a refusal of them.
    const hostile = inputs.filter((i) => !i.expect.imported)
    expect(hostile.length).toBeGreaterThanOrEqual(7)
    for (const input of inputs) await lstat(path.join(corpus.dir, input.path))
    expect((await lstat(path.join(corpus.dir, 'bad/huge.txt'))).size).toBe(30 * 1024 * 1024)
    expect((await lstat(path.join(corpus.dir, 'bad/loop/back'))).isSymbolicLink()).toBe(true)
    const { client, rec } = realEngineClient(path.join(data.dir, 'index'), path.join(data.dir, 'none'))
    try {
      const started = await client.invoke('collections.import', { folder: corpus.dir, collection: 'bad' })
      if (!started.ok) throw new Error(started.error.message)
      // While it imports (the 2,000-page PDF takes a while), searches are still answered.
      const during = await client.invoke('search', {
        query: 'zebra',
        scope: { collections: [], version: 'all' },
        mode: 'keyword',
        rerank: false,
        k: 3,
      })
      expect(during.ok).toBe(true)
      // …and it was answered while the import was still running.
      expect(
        rec.seen.some((e) => e.event === 'import.done' && (e.payload as { jobId: string }).jobId === started.value.jobId),
      ).toBe(false)
      const done = await rec.waitFor(
        (s) => s.event === 'import.done' && (s.payload as { jobId: string }).jobId === started.value.jobId,
        600_000,
      )
      const { report, error } = done.payload as EventPayload<'import.done'>
      expect(error).toBeNull()
      const refused = new Map([...report!.failed, ...report!.skipped_files].map((f) => [f.path, f.reason]))
      for (const input of inputs) {
        if (input.expect.imported) {
          expect(refused.get(input.path), input.path).toBeUndefined()
          if (input.expect.probe) {
            const r = await client.invoke('search', {
              query: input.expect.probe,
              scope: { collections: ['bad'], version: 'all' },
              mode: 'keyword',
              rerank: false,
              k: 3,
            })
            if (!r.ok) throw new Error(r.error.message)
            expect(r.value.results[0]?.path, `${input.path} searchable by "${input.expect.probe}"`).toBe(input.path)
          }
        } else {
          expect(refused.get(input.path), input.path).toMatch(input.expect.reason)
        }
      }
      // The long PDF kept its page numbers.
      const pdf = await client.invoke('search', {
        query: 'page 1500 quokka',
        scope: { collections: ['bad'], version: 'all' },
        mode: 'keyword',
        rerank: false,
        k: 5,
      })
      if (!pdf.ok) throw new Error(pdf.error.message)
      expect(
        pdf.value.results.some(
          (h) => h.path === 'long/report.pdf' && h.page !== null && h.page <= 1500 && (h.page_end ?? h.page) >= 1500,
        ),
      ).toBe(true)
    } finally {
      await client.dispose(5_000)
    }
  })
})
