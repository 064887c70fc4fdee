import { keywordChunk, writeKeywordDoc } from './keyword-docs.testutil'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPGlite, type Db } from '../store/db'
import { migrate } from '../store/migrations'
import { documentId } from '../store/ids'
import { deleteCollection } from '../store/collections'
import { keywordPostingsOf } from '../store/postings'
import { TermList } from '../store/term-list'
import { deleteDocument, markSynced, upsertCollection, type ChunkRow } from '../store/writer'
import { retrieveKeyword, SCORING, type KeywordHit, type PruningTrace } from './keyword'
import { resolveScope, type ResolvedScope } from './scope'
import type { Scope } from '../../shared/search'

/**
 * The pruned scorer (keyword-pruned.ts) against the exhaustive one it replaces, on random corpora
 * and random questions: the same top k, chunk for chunk, rank for rank and score for score (bit
 * for bit), in every scope, with short and long lists read either way, after deletions, and with
 * what makes bounds loose or ties many (chunk lengths from 1 to 80 words, a word repeated 40
 * times, chunks with identical text, exact tokens, repeated and unknown query words).
 */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 4294967296
  }
}
/** Made-up words (stemming leaves them alone); few enough that the common ones are in most chunks. */
const words = Array.from({ length: 300 }, (_, i) => `p${i.toString(36)}x`)
const EXACT = ['tools/call', '-32602', 'Mcp-Session-Id', 'E-04', 'listChanged']
function zipf(n: number, r: () => number): () => number {
  const cdf: number[] = []
  let sum = 0
  for (let i = 0; i < n; i++) cdf.push((sum += 1 / (i + 1)))
  return () => {
    const x = r() * sum
    const i = cdf.findIndex((c) => c >= x)
    return i < 0 ? n - 1 : i
  }
}

function randomText(r: () => number, sample: () => number): string {
  const kind = r()
  if (kind < 0.03) return `${words[sample()]!} ${Array(40).fill(words[sample()]!).join(' ')}` // one word, very often
  const n = kind < 0.15 ? 1 + Math.floor(r() * 3) : 5 + Math.floor(r() * 75)
  const ws = Array.from({ length: n }, () => (r() < 0.02 ? EXACT[Math.floor(r() * EXACT.length)]! : words[sample()]!))
  return ws.join(' ') + '.'
}

function chunksOf(collection: string, rel: string, texts: string[], r: () => number, sample: () => number): ChunkRow[] {
  return texts.map((text, c) =>
    keywordChunk(collection, rel, `${words[sample()]!} ${r() < 0.3 ? words[sample()]! : ''} > Part ${c}`, text),
  )
}

const writeDoc = writeKeywordDoc

/** Which collection document d is in: alpha holds most, so a word of its own has a long list. */
const collectionOf = (d: number) => ['alpha', 'alpha', 'alpha', 'beta', 'gamma'][d % 5]!
/** A word only alpha's chunks hold, nearly all of them. */
const ALPHA_WORD = 'palphaonlyx'

/** A random corpus: three collections, versioned and unversioned documents, some chunks repeated verbatim. */
async function writeCorpus(db: Db, seed: number): Promise<void> {
  const r = rng(seed)
  const sample = zipf(words.length, r)
  for (const c of ['alpha', 'beta', 'gamma']) await upsertCollection(db, c, `/${c}`)
  for (let d = 0; d < 70; d++) {
    const collection = collectionOf(d)
    const version = collection === 'gamma' ? null : ['1.0', '2.0', null][Math.floor(r() * 3)]!
    const texts = Array.from(
      { length: 4 + Math.floor(r() * 14) },
      () => randomText(r, sample) + (collection === 'alpha' && r() < 0.95 ? ` ${ALPHA_WORD}` : ''),
    )
    // Identical text in several chunks: equal scores, ordered by chunk id.
    if (d % 5 === 0) texts.push(texts[0]!, texts[0]!)
    await writeDoc(db, collection, `d${d}.md`, version, chunksOf(collection, `d${d}.md`, texts, r, sample))
  }
  for (const c of ['alpha', 'beta', 'gamma']) await markSynced(db, c)
}

function randomQuery(r: () => number, sample: () => number): string {
  const n = 1 + Math.floor(r() * 9)
  const ws = Array.from({ length: n }, () => {
    const x = r()
    if (x < 0.08) return EXACT[Math.floor(r() * EXACT.length)]!
    if (x < 0.12) return 'zzunknownzz'
    if (x < 0.15) return ALPHA_WORD
    return x < 0.6 ? words[sample()]! : words[Math.floor(r() * words.length)]!
  })
  if (r() < 0.3) ws.push(ws[0]!, ws[0]!) // a word said three times counts once
  return ws.join(' ')
}

const SCOPES: Scope[] = [
  { collections: [], version: 'all' },
  { collections: ['alpha'], version: '1.0' },
  { collections: ['alpha', 'beta'], version: 'latest' },
  { collections: ['gamma'], version: 'all' },
]

describe('pruned keyword scoring', () => {
  let db: Db
  const queries: string[] = []

  beforeAll(async () => {
    db = await openPGlite(null)
    await migrate(db)
    await writeCorpus(db, 11)
    const r = rng(5)
    const sample = zipf(words.length, r)
    for (let q = 0; q < 40; q++) queries.push(randomQuery(r, sample))
    await keywordPostingsOf(db)!.warm()
  }, 180_000)
  afterAll(async () => {
    await db.close()
  })

  /**
   * Document frequencies counted from the postings against a count over the store's chunks, for
   * every word and exact token, in several scopes (however the postings count them: from list
   * lengths, less the deleted chunks found in the list, or by walking it).
   */
  const checkDocumentFrequencies = async () => {
    const p = keywordPostingsOf(db)!
    expect(await p.current()).toBe(true)
    const lexemes = [...words.slice(0, 60), ...EXACT, ALPHA_WORD, 'zzunknownzz']
    for (const collections of [['alpha'], ['alpha', 'beta', 'gamma'], ['beta', 'gamma']]) {
      const { rows } = await db.query<{ lexeme: string; df: number }>(
        `SELECT u.lexeme, count(*)::int AS df FROM chunks c, unnest(c.tsv) u
          WHERE c.collection_id = ANY($1::text[]) AND u.lexeme = ANY($2::text[]) GROUP BY u.lexeme`,
        [collections, lexemes],
      )
      const store = new Map(rows.map((r) => [r.lexeme, Number(r.df)]))
      const { df } = p.statistics(lexemes, collections)
      expect(df, collections.join()).toEqual(lexemes.map((l) => store.get(l) ?? 0))
    }
  }

  /** Compares both scorers on every query, scope, k and candidate budget; returns the traces. */
  const compareAll = async (): Promise<PruningTrace[]> => {
    const traces: PruningTrace[] = []
    const scopes: ResolvedScope[] = []
    for (const s of SCOPES) scopes.push(await resolveScope(db, s))
    let hits = 0
    for (const q of queries)
      for (const scope of scopes)
        for (const [limit, budget] of [
          [1, 2000],
          [10, 40],
          [50, 300],
        ] as const) {
          const trace: PruningTrace = { candidates: 0, scored: 0 }
          const opts = { path: 'memory', budget } as const
          const pruned = await retrieveKeyword(db, q, scope, limit, { ...opts, trace })
          const exhaustive = await retrieveKeyword(db, q, scope, limit, { ...opts, scoring: 'exhaustive' })
          expect(pruned, `${q} | ${scope.label} | k ${limit} | budget ${budget}`).toEqual(exhaustive)
          traces.push(trace)
          hits += exhaustive.length
        }
    // The comparisons are not vacuous: most searches found something.
    expect(hits).toBeGreaterThan(queries.length * scopes.length * 10)
    return traces
  }

  it('returns the exhaustive top k, with long lists walked, searched, or each as it suits', async () => {
    await checkDocumentFrequencies()
    const saved = SCORING.lookupRatio
    try {
      for (const ratio of [0, Infinity, saved]) {
        SCORING.lookupRatio = ratio
        const traces = await compareAll()
        // Pruning really happened: in many searches most candidates were never scored in full.
        const pruned = traces.filter((t) => t.candidates > 20 && t.scored * 2 < t.candidates)
        expect(pruned.length).toBeGreaterThan(traces.length / 5)
      }
    } finally {
      SCORING.lookupRatio = saved
    }
  }, 300_000)

  it('returns the exhaustive top k after replaced and deleted documents and a deleted collection', async () => {
    const r = rng(77)
    const sample = zipf(words.length, r)
    const p = keywordPostingsOf(db)!
    // Deleted chunks stay in the lists (dead) until compaction, their term frequencies in maxTf.
    await deleteDocument(db, documentId('alpha', 'd0.md'), 'alpha')
    // A few chunks deleted: the common words' lists are longer than 16 times that, so the postings
    // count their document frequencies by looking for the deleted chunks in them.
    expect(await p.current()).toBe(true)
    expect((p.slotCount - p.stats().chunks) * 16).toBeLessThan(p.list(ALPHA_WORD)!.n)
    await checkDocumentFrequencies()
    for (const d of [1, 3, 9]) {
      const collection = collectionOf(d)
      const texts = Array.from({ length: 3 }, () => randomText(r, sample))
      await writeDoc(db, collection, `d${d}.md`, '2.0', chunksOf(collection, `d${d}.md`, texts, r, sample))
    }
    await deleteCollection(db, 'gamma')
    await upsertCollection(db, 'gamma', '/gamma')
    await writeDoc(db, 'gamma', 'new.md', null, chunksOf('gamma', 'new.md', [randomText(r, sample)], r, sample))
    expect(await p.current()).toBe(true)
    // Deleted chunks are still in the lists (dead), so the scorers must skip them.
    expect(p.stats().chunks).toBeLessThan(p.slotCount)
    await checkDocumentFrequencies()
    await compareAll()
  }, 300_000)

  it('gives the same answer to the same search twice (scratch space reused)', async () => {
    const scope = await resolveScope(db, SCOPES[0]!)
    const first: KeywordHit[][] = []
    for (const q of queries.slice(0, 10)) first.push(await retrieveKeyword(db, q, scope, 20, { path: 'memory' }))
    for (const [i, q] of queries.slice(0, 10).entries())
      expect(await retrieveKeyword(db, q, scope, 20, { path: 'memory' })).toEqual(first[i])
  })
})

describe('TermList', () => {
  it('keeps its largest term frequency, and recounts it when deleted chunks are dropped', () => {
    const list = new TermList()
    const tfs = [1, 3, 9, 2, 4, 1, 7]
    tfs.forEach((tf, s) => list.push(s * 2, tf, 0))
    expect(list.maxTf).toBe(9)
    expect(list.coll).toBe(0)
    const mixed = new TermList()
    mixed.push(1, 1, 0)
    mixed.push(2, 1, 3)
    expect(mixed.coll).toBe(-2)
    // Slot 4 (tf 9) and slot 12 (tf 7) are gone; the others are renumbered in order.
    const to = Int32Array.from({ length: 14 }, (_, s) => (s === 4 || s === 12 || s % 2 ? -1 : s / 2))
    expect(list.renumber(to)).toBe(5)
    expect([...list.slots.subarray(0, list.n)]).toEqual([0, 1, 3, 4, 5])
    expect([...list.tfs.subarray(0, list.n)]).toEqual([1, 3, 2, 4, 1])
    expect(list.maxTf).toBe(4)
  })
})
