import { cp } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import { mcpCorpus, tempDir } from '../../test-support/paths'
import { ingestAndKill } from '../../test-support/ingest-child'
import { storeBackends, type StoreBackend } from '../../test-support/backends'

for (const backend of storeBackends)
  describe.skipIf(backend.skip)(`killing the process mid-import (${backend.name})`, () => suite(backend))

function suite(backend: StoreBackend): void {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('leaves a database that opens, with no half-written document, and a re-run completes it', async () => {
    const corpus = await tempDir()
    const data = await tempDir()
    const place = await backend.place()
    cleanups.push(corpus.cleanup, data.cleanup, place.cleanup)
    // One release of the spec and its guides: enough files to be mid-write when killed.
    await cp(path.join(mcpCorpus, 'specification/2025-06-18'), path.join(corpus.dir, 'specification/2025-06-18'), {
      recursive: true,
    })
    await cp(path.join(mcpCorpus, 'docs/2025-06-18'), path.join(corpus.dir, 'docs/2025-06-18'), { recursive: true })

    const run = await ingestAndKill(corpus.dir, {
      ...(place.options.database ? { database: place.options.database } : { data: place.options.dataDir! }),
      models: path.join(data.dir, 'none'),
      collection: 'mcp',
      killAfterDocs: 10,
    })
    // The fault happened: our SIGKILL ended the child while the import was still running.
    expect(run.signal, `ingest ended with code ${run.code} before the kill: no fault`).toBe('SIGKILL')
    expect(run.killed).toBe(true)
    expect(run.last?.imported ?? 0).toBeGreaterThanOrEqual(10)
    expect(run.last?.phase).not.toBe('done')
    expect(run.last!.filesDone).toBeLessThan(run.last!.filesTotal)

    const engine = await Engine.open({ ...place.options, modelsDir: path.join(data.dir, 'none') })
    try {
      expect(await checkIndexConsistency(engine.db)).toEqual([])
      // The killed import is offered for resuming (on a server: its connections are gone).
      expect((await engine.unfinishedImports()).map((u) => [u.collection, u.state])).toEqual([['mcp', 'interrupted']])
      const resumed = await engine.importFolder(corpus.dir, { collection: 'mcp' })
      expect(resumed.failed).toEqual([])
      // The kill left documents to import: it interrupted the import rather than following it.
      expect(resumed.imported).toBeGreaterThan(0)
      expect(await checkIndexConsistency(engine.db)).toEqual([])
      const ids = (await engine.db.query<{ id: string; text: string }>('SELECT id, text FROM chunks ORDER BY id')).rows

      const clean = await backend.place()
      cleanups.push(clean.cleanup)
      const fresh = await Engine.open({ ...clean.options, modelsDir: path.join(data.dir, 'none') })
      try {
        await fresh.importFolder(corpus.dir, { collection: 'mcp' })
        const freshIds = (await fresh.db.query<{ id: string; text: string }>('SELECT id, text FROM chunks ORDER BY id')).rows
        expect(ids).toEqual(freshIds)
      } finally {
        await fresh.close()
      }
    } finally {
      await engine.close()
    }
    // A guard against a hang, not a speed limit: two imports of a release and a kill took 127 s on a
    // busy 2-core machine, past the default 120 s.
  }, 900_000)
}
