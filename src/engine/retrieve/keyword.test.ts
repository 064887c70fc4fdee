import { keywordChunk, writeKeywordDoc } from './keyword-docs.testutil'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Db } from '../store/db'
import { migrate } from '../store/migrations'
import { documentId } from '../store/ids'
import { deleteCollection } from '../store/collections'
import { KeywordPostings, keywordPostingsOf } from '../store/postings'
import { parseTsvector } from '../store/tsvector'
import { deleteDocument, markSynced, upsertCollection, type ChunkRow } from '../store/writer'
import { checkIndexConsistency } from '../store/consistency'
import { retrieveKeyword, sameRanking, SCORING, topK } from './keyword'
import { resolveScope } from './scope'
import { storeBackends, type StoreBackend } from '../../test-support/backends'

/**
 * The keyword postings kept in memory against the SQL path they replace: the same hits in the same
 * order with the same scores, on a store large enough that the rarest query word alone can exceed
 * the candidate budget, across collections, versions and scopes, and after every kind of write.
 */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 4294967296
  }
}
/** Made-up words (so stemming leaves them alone), drawn with Zipf frequencies as in real text. */
const words = Array.from({ length: 1500 }, (_, i) => `w${i.toString(36)}q`)
function zipfSampler(n: number, r: () => number): () => number {
  const cdf: number[] = []
  let sum = 0
  for (let i = 0; i < n; i++) cdf.push((sum += 1 / (i + 1)))
  return () => {
    const x = r() * sum
    const i = cdf.findIndex((c) => c >= x)
    return i < 0 ? n - 1 : i
  }
}
const sentence = (ws: string[], sample: () => number, n: number) => Array.from({ length: n }, () => ws[sample()]!).join(' ') + '.'
/** A candidate budget small enough that the commonest words of this small store exceed it alone. */
const BUDGET = 60

function makeChunks(collection: string, rel: string, n: number, r: () => number, extra = ''): ChunkRow[] {
  const sample = zipfSampler(words.length, r)
  return Array.from({ length: n }, (_, c) => {
    const heading = `${sentence(words, sample, 2).slice(0, -1)} > Part ${c}`
    const text = `${Array.from({ length: 2 + Math.floor(r() * 6) }, () => sentence(words, sample, 6 + Math.floor(r() * 10))).join(' ')}${extra}`
    return keywordChunk(collection, rel, heading, text)
  })
}

const writeDoc = writeKeywordDoc

describe('parseTsvector', () => {
  it('counts positions, breadcrumb positions twice, and exact tokens without positions once', () => {
    expect(parseTsvector(`'call':3,7 'it''s':2A 'tools/call' 'x\\\\y':1A,4B,9`)).toEqual([
      ['call', 2],
      ["it's", 2],
      ['tools/call', 1],
      ['x\\y', 4],
    ])
  })
})

describe('topK', () => {
  it('keeps the best k in order, with ties broken by the comparator', () => {
    const items = Array.from({ length: 1000 }, (_, i) => i)
    const score = (i: number) => (i * 37) % 101
    const order = (a: number, b: number) => score(b) - score(a) || a - b
    expect(topK([...items], 10, order)).toEqual([...items].sort(order).slice(0, 10))
  })
})

for (const backend of storeBackends)
  describe.skipIf(backend.skip)(`keyword postings in memory (${backend.name})`, () => postingsSuite(backend))

function postingsSuite(backend: StoreBackend): void {
  let db: Db
  let closeDb: () => Promise<void> = async () => undefined
  const queries: string[] = []

  const same = async (query: string, scope: Awaited<ReturnType<typeof resolveScope>>) => {
    const sql = await retrieveKeyword(db, query, scope, 50, { path: 'sql', budget: BUDGET })
    const mem = await retrieveKeyword(db, query, scope, 50, { path: 'memory', budget: BUDGET })
    // Same chunks, scores and order (SQL may order chunks of equal score by their last bit).
    expect(sameRanking(mem, sql), query).toBe(true)
    expect(new Set(mem.map((h) => h.chunk_id)), query).toEqual(new Set(sql.map((h) => h.chunk_id)))
    // In memory, equal scores are exactly equal, and ordered by chunk id.
    mem.forEach((h, i) => i > 0 && h.bm25 === mem[i - 1]!.bm25 && expect(h.chunk_id > mem[i - 1]!.chunk_id).toBe(true))
    return sql
  }

  const checkAll = async () => {
    const all = await resolveScope(db, { collections: [], version: 'all' })
    const v1 = await resolveScope(db, { collections: ['alpha'], version: '1.0' })
    const beta = await resolveScope(db, { collections: ['beta'], version: 'all' })
    let hits = 0
    for (const q of queries) {
      hits += (await same(q, all)).length
      await same(q, v1)
      await same(q, beta)
    }
    expect(hits).toBeGreaterThan(queries.length * 5)
  }

  beforeAll(async () => {
    ;({ db, cleanup: closeDb } = await backend.openDb())
    await migrate(db)
    await upsertCollection(db, 'alpha', '/alpha')
    await upsertCollection(db, 'beta', '/beta')
    const r = rng(42)
    // 480 chunks: the commonest words appear in more chunks than the candidate budget.
    for (let d = 0; d < 40; d++) {
      const version = ['1.0', '2.0', null][d % 3]!
      await writeDoc(
        db,
        'alpha',
        `v/doc-${d}.md`,
        version,
        makeChunks('alpha', `v/doc-${d}.md`, 10, r, d % 7 === 0 ? ' Call tools/call, -32602.' : ''),
      )
    }
    for (let d = 0; d < 8; d++) await writeDoc(db, 'beta', `doc-${d}.md`, null, makeChunks('beta', `doc-${d}.md`, 10, r))
    await markSynced(db, 'alpha')
    await markSynced(db, 'beta')
    const qr = rng(7)
    const sample = zipfSampler(words.length, qr)
    for (let q = 0; q < 12; q++) queries.push(sentence(words, sample, 2 + Math.floor(qr() * 6)).slice(0, -1))
    queries.push('how does tools/call report -32602', words[0]! + ' ' + words[1]!)
    await keywordPostingsOf(db)!.warm()
  }, 120_000)
  afterAll(async () => {
    await closeDb()
  })

  it('ranks exactly as the SQL path whether long lists are walked or searched per candidate', async () => {
    const saved = SCORING.lookupRatio
    try {
      for (const ratio of [0, Infinity]) {
        SCORING.lookupRatio = ratio
        await checkAll()
      }
    } finally {
      SCORING.lookupRatio = saved
    }
  })

  it('ranks exactly as the SQL path, in every scope', async () => {
    expect(keywordPostingsOf(db)!.ready).toBe(true)
    const { rows } = await db.query<{ df: number }>(`SELECT max(df)::int AS df FROM term_stats`)
    expect(Number(rows[0]!.df)).toBeGreaterThan(BUDGET * 3)
    await checkAll()
  }, 120_000)

  it('searches in SQL until the postings are built, then from memory', async () => {
    const { db: fresh, cleanup } = await backend.openDb()
    await migrate(fresh)
    await upsertCollection(fresh, 'alpha', '/alpha')
    await writeDoc(fresh, 'alpha', 'a.md', null, makeChunks('alpha', 'a.md', 5, rng(3)))
    const p = keywordPostingsOf(fresh)!
    expect(p.ready).toBe(false)
    const scope = await resolveScope(fresh, { collections: [], version: 'all' })
    const first = await retrieveKeyword(fresh, words[0]!, scope, 10)
    expect(first.length).toBeGreaterThan(0)
    await p.warm()
    expect(p.ready).toBe(true)
    expect(sameRanking(await retrieveKeyword(fresh, words[0]!, scope, 10, { path: 'memory' }), first)).toBe(true)
    await cleanup()
  })

  it('follows replaced and deleted documents, cascades and a deleted collection', async () => {
    const other = new KeywordPostings(db)
    await other.warm()
    const r = rng(99)
    // Replaced (same chunk ids, new text), shortened, deleted, and removed through the documents cascade.
    await writeDoc(db, 'alpha', 'v/doc-3.md', '1.0', makeChunks('alpha', 'v/doc-3.md', 10, r, ' replaced'))
    await writeDoc(db, 'alpha', 'v/doc-4.md', '2.0', makeChunks('alpha', 'v/doc-4.md', 2, r))
    await deleteDocument(db, documentId('alpha', 'v/doc-5.md'), 'alpha')
    const { rows: before } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunk_tombstones')
    await db.query('DELETE FROM documents WHERE id = $1', [documentId('beta', 'doc-1.md')])
    const { rows: after } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunk_tombstones')
    // The cascade really removed chunks, and the trigger saw them.
    expect(Number(after[0]!.n) - Number(before[0]!.n)).toBe(10)
    // The writer keeps term_stats and the collection's counts; this raw delete went around it, so
    // they are recounted as the writer would have left them (searches from the postings count
    // them from the chunks themselves, so they agree with the SQL path only on a consistent store).
    expect(await checkIndexConsistency(db)).not.toEqual([])
    await db.query(
      `UPDATE collections c SET chunk_count = s.n, total_len = s.len
         FROM (SELECT count(*)::int AS n, coalesce(sum(lex_len), 0) AS len FROM chunks WHERE collection_id = 'beta') s
        WHERE c.id = 'beta'`,
    )
    await db.query(`DELETE FROM term_stats WHERE collection_id = 'beta'`)
    await db.query(
      `INSERT INTO term_stats (collection_id, lexeme, df)
         SELECT 'beta', u.lexeme, count(*)::int FROM chunks ch, unnest(ch.tsv) u WHERE ch.collection_id = 'beta' GROUP BY u.lexeme`,
    )
    expect(await checkIndexConsistency(db)).toEqual([])
    await checkAll()
    expect(await retrieveKeyword(db, 'replaced', await resolveScope(db, { collections: [], version: 'all' }), 50)).toHaveLength(
      10,
    )

    await deleteCollection(db, 'beta')
    await upsertCollection(db, 'beta', '/beta')
    await writeDoc(db, 'beta', 'new.md', null, makeChunks('beta', 'new.md', 10, r))
    await checkAll()
    // The second reader was not asked meanwhile: it catches up from the same tombstones.
    expect(await other.current()).toBe(true)
    expect(other.stats().chunks).toBe(keywordPostingsOf(db)!.stats().chunks)
  }, 120_000)

  it('rebuilds when the tombstones it had not read were pruned', async () => {
    const stale = new KeywordPostings(db)
    await stale.warm()
    await writeDoc(db, 'alpha', 'v/doc-6.md', null, makeChunks('alpha', 'v/doc-6.md', 10, rng(5), ' pruned'))
    // The sync prunes what this store's own postings have read (they catch up on a search); the
    // stale reader had not read them.
    expect(await keywordPostingsOf(db)!.current()).toBe(true)
    if (db.kind === 'server') {
      // On a server other processes read the tombstones too: a sync keeps the recent ones…
      await markSynced(db, 'alpha')
      const { rows: kept } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunk_tombstones')
      expect(Number(kept[0]!.n)).toBeGreaterThan(0)
      expect(await stale.current()).toBe(true)
      // …and prunes them once they are older than SERVER_TOMBSTONE_AGE (made so here).
      await writeDoc(db, 'alpha', 'v/doc-6.md', null, makeChunks('alpha', 'v/doc-6.md', 10, rng(6), ' pruned'))
      expect(await keywordPostingsOf(db)!.current()).toBe(true)
      await db.query(`UPDATE chunk_tombstones SET at = now() - interval '1 day'`)
    }
    await markSynced(db, 'alpha')
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunk_tombstones')
    expect(Number(rows[0]!.n)).toBe(0)
    expect(await stale.current()).toBe(false)
    await stale.warm()
    expect(await stale.current()).toBe(true)
    expect(stale.stats().chunks).toBe(keywordPostingsOf(db)!.stats().chunks)
    expect(await checkIndexConsistency(db)).toEqual([])
    await checkAll()
  }, 120_000)

  it('a search from current postings is one statement, and sees a write made just before it', async () => {
    const scope = await resolveScope(db, { collections: [], version: 'all' })
    expect(await keywordPostingsOf(db)!.current()).toBe(true)
    const spy = vi.spyOn(db, 'query')
    try {
      expect((await retrieveKeyword(db, words[0]!, scope, 10, { path: 'memory' })).length).toBeGreaterThan(0)
      // The query's lexemes and the store's mark come back together: no round trip for the mark.
      expect(spy).toHaveBeenCalledTimes(1)
    } finally {
      spy.mockRestore()
    }
    // The mark read with the lexemes shows the write, and the postings catch up before scoring.
    await writeDoc(db, 'alpha', 'v/doc-7.md', null, makeChunks('alpha', 'v/doc-7.md', 10, rng(8), ' zzfreshzz'))
    expect(await retrieveKeyword(db, 'zzfreshzz', scope, 50, { path: 'memory' })).toHaveLength(10)
    await checkAll()
  })

  it('a chunk rewritten in place counts as deleted and written anew', async () => {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM chunks WHERE collection_id = 'alpha' ORDER BY id LIMIT 1`)
    await db.query(`UPDATE chunks SET text = text || ' zzrewrittenzz' WHERE id = $1`, [rows[0]!.id])
    await db.query(`UPDATE chunks SET embedding_model = NULL WHERE id = $1`, [rows[0]!.id])
    const scope = await resolveScope(db, { collections: [], version: 'all' })
    // term_stats are the writer's; this in-place edit bypasses it, so only the postings see the word.
    const p = keywordPostingsOf(db)!
    expect(await p.current()).toBe(true)
    expect(p.list('zzrewrittenzz')?.n).toBe(1)
    expect(await retrieveKeyword(db, 'anything', scope, 5)).toBeDefined()
  })
}
