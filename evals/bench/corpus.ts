import { chunkId, documentId, sha256Hex } from '../../src/engine/store/ids'
import { markSynced, replaceDocument, upsertCollection, vacuumHotTables, type ChunkRow } from '../../src/engine/store/writer'
import type { Db, Queryable } from '../../src/engine/store/db'
import type { ResolvedScope } from '../../src/engine/retrieve/scope'
import { retrieveKeyword } from '../../src/engine/retrieve/keyword'
import { retrieveVector } from '../../src/engine/retrieve/vector'
import { fuseRanks } from '../../src/engine/retrieve/fuse'
import { countWords, extractExactTerms } from '../../src/engine/core/exact-terms'
import { clusteredVectors, normalise, rng, sentence, vocabulary, zipfSampler } from './synthetic'

/**
 * The synthetic chunk set of `bench -- query` and `bench -- server`: Zipf-distributed text from a
 * 30,000-word vocabulary (8 sentences of 14 words a chunk), 384-dimension clustered unit vectors,
 * ten chunks a document and three versions, written through the engine's own writer; and the
 * queries (3 to 8 words of one chunk, with a vector near that chunk's).
 */
export const DIMS = 384
export const MODEL = 'bench/clustered-random@384'
export const CHUNKS_PER_DOC = 10
export const K = 50

export interface ChunkSet {
  texts: string[]
  vectors: Float32Array[] | null
}

/** `total` chunks of text (seeded by `total` unless `seed` is given) and, when asked, their vectors. */
export function chunkSet(total: number, opts: { vectors: boolean; seed?: number }): ChunkSet {
  const r = rng(opts.seed ?? total)
  const words = vocabulary(30_000, 11)
  const sample = zipfSampler(words.length, r)
  const vectors = opts.vectors
    ? clusteredVectors(total, DIMS, Math.max(50, Math.round(total / 500)), 13 + (opts.seed ?? 0))
    : null
  const texts = Array.from({ length: total }, () => Array.from({ length: 8 }, () => sentence(words, sample, 14)).join(' '))
  return { texts, vectors }
}

const docPath = (d: number) => `part-${Math.floor(d / 100)}/doc-${d}.md`
const heading = (d: number, c: number) => `Doc ${d} > Section ${c}`

/** The id of chunk `i` of a set written by writeChunkSet into `collection` (with `perDoc` chunks a document). */
export function chunkIdOf(collection: string, i: number, perDoc = CHUNKS_PER_DOC): string {
  const d = Math.floor(i / perDoc)
  return chunkId(collection, docPath(d), [heading(d, i % perDoc)], 0)
}

/**
 * Writes the set as documents of `perDoc` chunks (ten unless asked) into `collection`: one
 * transaction a document, as an import does, with its vacuum and checkpoint every 5,000 chunks (every
 * 500 documents of ten, as ingest/sync/write.ts does). Larger documents make fewer, larger
 * transactions through the same writer: `bench -- query --chunks-per-doc 100` loads a keyword-only
 * tier several times faster (docs/benchmarks.md).
 */
export async function writeChunkSet(db: Db, collection: string, set: ChunkSet, perDoc = CHUNKS_PER_DOC): Promise<void> {
  await upsertCollection(db, collection, `/${collection}`)
  const versions = ['1.0', '2.0', null]
  const vacuumEvery = Math.max(1, Math.round(5000 / perDoc))
  for (let d = 0; d < set.texts.length / perDoc; d++) {
    const rel = docPath(d)
    const chunks: ChunkRow[] = []
    for (let c = 0; c < perDoc && d * perDoc + c < set.texts.length; c++) {
      const i = d * perDoc + c
      const text = set.texts[i]!
      const h = heading(d, c)
      chunks.push({
        id: chunkId(collection, rel, [h], 0),
        ordinal: 0,
        heading: h,
        pageStart: null,
        pageEnd: null,
        text,
        embedHash: sha256Hex(text),
        tokenCount: 150,
        lexLen: countWords(text),
        exactTerms: extractExactTerms(text),
        embedding: set.vectors ? set.vectors[i]! : null,
        embeddingModel: set.vectors ? MODEL : null,
      })
    }
    const doc = { id: documentId(collection, rel), collectionId: collection, path: rel, size: 0, mtimeMs: 0 }
    await replaceDocument(
      db,
      { ...doc, sha256: sha256Hex(rel), version: versions[d % 3]!, kind: null, title: null, pageCount: null, chunker: 'bench' },
      chunks,
    )
    if ((d + 1) % vacuumEvery === 0) await vacuumHotTables(db)
  }
  await markSynced(db, collection)
}

export interface BenchQuery {
  text: string
  vector: Float32Array | null
  target: number
}

/** `n` questions of 3 to 8 words of a random chunk, and a vector near that chunk's. */
export function makeQueries(set: ChunkSet, n: number, seed = 99): BenchQuery[] {
  const qr = rng(seed)
  const out: BenchQuery[] = []
  for (let q = 0; q < n; q++) {
    const target = Math.floor(qr() * set.texts.length)
    const tw = set.texts[target]!.replace(/\./g, '').split(' ')
    const len = 3 + Math.floor(qr() * 6)
    const text = Array.from({ length: len }, () => tw[Math.floor(qr() * tw.length)]).join(' ')
    const vector = set.vectors ? normalise(Float32Array.from(set.vectors[target]!, (x) => x + (qr() - 0.5) * 0.05)) : null
    out.push({ text, vector, target })
  }
  return out
}

export type SearchKind = 'keyword' | 'vector' | 'hybrid'

/** One search as the engine runs it (keyword from the postings in memory); resolves to its latency in ms. */
export async function timedSearch(db: Queryable, kind: SearchKind, q: BenchQuery, scope: ResolvedScope): Promise<number> {
  const s = performance.now()
  if (kind === 'keyword') await retrieveKeyword(db, q.text, scope, K, { path: 'memory' })
  else if (kind === 'vector') await retrieveVector(db, q.vector!, MODEL, scope, K)
  else {
    const [k, v] = await Promise.all([
      retrieveKeyword(db, q.text, scope, K, { path: 'memory' }),
      retrieveVector(db, q.vector!, MODEL, scope, K),
    ])
    fuseRanks({ keyword: k, vector: v })
  }
  return performance.now() - s
}
