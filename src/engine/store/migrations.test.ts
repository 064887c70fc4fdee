import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-support/paths'
import { openPGlite, type Db } from './db'
import { MIGRATIONS, migrate } from './migrations'
import { chunkId, documentId, sha256Hex } from './ids'
import { keywordPostingsOf } from './postings'
import { checkIndexConsistency } from './consistency'
import { markSynced, replaceDocument, upsertCollection, type ChunkRow } from './writer'
import { retrieveKeyword, sameRanking } from '../retrieve/keyword'
import { resolveScope } from '../retrieve/scope'

/**
 * A data folder written before migration 4 (keyword postings) is upgraded in place: its chunks
 * keep a NULL seq, are read by the postings' full build, and leave tombstones when replaced.
 */
function chunks(rel: string, texts: string[]): ChunkRow[] {
  return texts.map((text, i) => ({
    id: chunkId('docs', rel, [`Part ${i}`], 0),
    ordinal: 0,
    heading: `Part ${i}`,
    pageStart: null,
    pageEnd: null,
    text,
    embedHash: sha256Hex(text),
    tokenCount: 5,
    lexLen: text.split(' ').length,
    exactTerms: [],
    embedding: null,
    embeddingModel: null,
  }))
}

async function write(db: Db, rel: string, texts: string[]): Promise<void> {
  const doc = {
    id: documentId('docs', rel),
    collectionId: 'docs',
    path: rel,
    size: 1,
    mtimeMs: 1,
    sha256: sha256Hex(texts.join()),
  }
  await replaceDocument(db, { ...doc, version: null, kind: null, title: null, pageCount: null, chunker: 't' }, chunks(rel, texts))
}

describe('migration 4 on a data folder from before it', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let db: Db

  beforeAll(async () => {
    ;({ dir, cleanup } = await tempDir())
    const old = await openPGlite(dir)
    await old.exec(
      `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    )
    for (const m of MIGRATIONS.filter((m) => m.version <= 3)) {
      await old.exec(m.sql)
      await old.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name])
    }
    await upsertCollection(old, 'docs', '/docs')
    await write(old, 'a.md', ['the retry policy waits', 'timeouts end a request', 'retry budgets per host'])
    await write(old, 'b.md', ['hosts share one pool', 'a pool retries idle sockets'])
    await old.close()
    db = await openPGlite(dir)
  }, 120_000)
  afterAll(async () => {
    await db?.close()
    await cleanup?.()
  })

  it('upgrades in place, and the old chunks are searched from memory as in SQL', async () => {
    expect(await migrate(db)).toBe(MIGRATIONS.at(-1)!.version)
    const { rows } = await db.query<{ n: number; nulls: number }>(
      'SELECT count(*)::int AS n, count(*) FILTER (WHERE seq IS NULL)::int AS nulls FROM chunks',
    )
    expect(rows[0]).toEqual({ n: 5, nulls: 5 })
    await keywordPostingsOf(db)!.warm()
    const scope = await resolveScope(db, { collections: ['docs'], version: 'all' })
    const sql = await retrieveKeyword(db, 'retry pool', scope, 10, { path: 'sql' })
    expect(sql.length).toBe(4)
    expect(sameRanking(await retrieveKeyword(db, 'retry pool', scope, 10, { path: 'memory' }), sql)).toBe(true)
  })

  it('replacing an old document leaves tombstones without a seq, which the postings apply', async () => {
    await write(db, 'a.md', ['the backoff doubles', 'nothing else here'])
    const { rows } = await db.query<{ n: number; nulls: number }>(
      'SELECT count(*)::int AS n, count(*) FILTER (WHERE seq IS NULL)::int AS nulls FROM chunk_tombstones',
    )
    expect(rows[0]).toEqual({ n: 3, nulls: 3 })
    const scope = await resolveScope(db, { collections: ['docs'], version: 'all' })
    const mem = await retrieveKeyword(db, 'retry backoff', scope, 10, { path: 'memory' })
    expect(sameRanking(mem, await retrieveKeyword(db, 'retry backoff', scope, 10, { path: 'sql' }))).toBe(true)
    expect(mem.map((h) => h.chunk_id)).toHaveLength(2)
    expect(keywordPostingsOf(db)!.stats().chunks).toBe(4)
    await markSynced(db, 'docs')
    expect(await checkIndexConsistency(db)).toEqual([])
  })
})
