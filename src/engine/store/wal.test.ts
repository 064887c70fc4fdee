import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openPGlite, type Db } from './db'
import { migrate } from './migrations'
import { chunkId, documentId, sha256Hex } from './ids'
import { markSynced, replaceDocument, upsertCollection, vacuumHotTables } from './writer'
import { tempDir } from '../../test-support/paths'

/**
 * Embedded PGlite has no checkpointer process, so its write-ahead log grows until the store closes
 * unless something checkpoints. The writer does, during long imports (vacuumHotTables, every 500
 * documents) and after each sync: the checkpoint's position in the log must move each time.
 */
describe('write-ahead log of an embedded store on disk', () => {
  const checkpointLsn = async (db: Db) =>
    (await db.query<{ lsn: string }>('SELECT checkpoint_lsn::text AS lsn FROM pg_control_checkpoint()')).rows[0]!.lsn
  const writeDocs = async (db: Db, from: number, n: number) => {
    for (let d = from; d < from + n; d++) {
      const rel = `doc-${d}.md`
      const text = `Document ${d} explains how the widget retries a failed upload, step ${d}.`
      await replaceDocument(
        db,
        {
          id: documentId('c', rel),
          collectionId: 'c',
          path: rel,
          size: text.length,
          mtimeMs: 0,
          sha256: sha256Hex(text),
          version: null,
          kind: null,
          title: null,
          pageCount: null,
          chunker: 'test',
        },
        [
          {
            id: chunkId('c', rel, ['Doc'], 0),
            ordinal: 0,
            heading: 'Doc',
            pageStart: null,
            pageEnd: null,
            text,
            embedHash: sha256Hex(text),
            tokenCount: 16,
            lexLen: 12,
            exactTerms: [],
            embedding: null,
            embeddingModel: null,
          },
        ],
      )
    }
  }

  it('is checkpointed during a long import and after a sync', async () => {
    const d = await tempDir('docent-wal-')
    const db = await openPGlite(path.join(d.dir, 'db'))
    try {
      await migrate(db)
      await upsertCollection(db, 'c', '/c')
      await writeDocs(db, 0, 40)
      const first = await checkpointLsn(db)
      await vacuumHotTables(db)
      const second = await checkpointLsn(db)
      expect(second).not.toBe(first)
      await writeDocs(db, 40, 40)
      await markSynced(db, 'c')
      expect(await checkpointLsn(db)).not.toBe(second)
    } finally {
      await db.close()
      await d.cleanup()
    }
  })
})
