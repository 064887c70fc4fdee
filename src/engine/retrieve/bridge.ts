import type { Queryable } from '../store/db'
import { STORE_MARK_COLUMNS, storeMarkOf, type StoreMarkRow } from '../store/store-mark'

/**
 * Words of a question that the documents never use, bridged to the word their section titles
 * use for the same thing. A person asks how a tool returns "a screenshot"; the documents call it
 * "Image Content", and no passage has the word "screenshot", so keyword search finds nothing for
 * it and the release rules cannot see which feature is asked about. The embedder can: the single
 * word "screenshot" is close to the title word "image" by the embedding model.
 *
 * Only a word with no passage at all in the searched collections is bridged (a word the documents
 * use is searched as it is), and only to a word of a section title, where documents name what
 * they describe. Never to a title word that begins the question's word or that it begins: the
 * embedder reads an unknown word in pieces, and its first piece makes "chatty" close to "chat"
 * (0.62) and "decorater" to "decoratereply" (0.79), which mean other things; searching for them
 * lowered the gold section in each case it happened (docs/benchmarks.md). The nearest title word counts when its cosine reaches the embedder's floor. The bridge
 * adds that word to the keyword query (the vector half reads the question as it is), and the
 * release rules weigh it as a word of the question (answer/release.ts): "a spoken message
 * recorded from a microphone" in the 2024-11-05 release, which never mentions audio.
 */

/**
 * The least cosine between a question's word and a title word for a bridge, per embedder: each
 * model has its own scale of cosines, so a model without a floor read from it bridges nothing.
 * all-MiniLM-L6-v2's floor was hand-set on single words before any question ran (in-sample for
 * those words; `evals/retrieval/bridges.ts --words` prints them, docs/benchmarks.md):
 * "pictures"/"photo" to "image" 0.75/0.77, "sound" to "audio" 0.77, "voice" to "audio" 0.60,
 * "folders" to "directory" 0.68, while "verbose" is 0.50 from its nearest title word
 * ("stateful") and "bundle" 0.58 from "package".
 */
export const BRIDGE_FLOORS: readonly { match: string; floor: number | null; note: string }[] = [
  { match: 'all-minilm-l6-v2', floor: 0.6, note: 'hand-set on single words (in-sample for them)' },
]

/** The bridge floor of an embedder, or null: no bridge with a model whose cosines were never read. */
export function bridgeFloorFor(embedderId: string): number | null {
  const id = embedderId.toLowerCase()
  return BRIDGE_FLOORS.find((f) => id.includes(f.match))?.floor ?? null
}

/** Words longer than this are not bridged (a pasted token or a URL is no word). */
const MAX_WORD = 24

/**
 * Most title words a library offers as bridges. Each is embedded once per embedder, on the first
 * question with a word no passage holds (the MCP docs' six releases have about 700); a far larger
 * library keeps the words that name most sections, so that first question does not wait long.
 */
const MAX_TITLE_WORDS = 5000

/** Most words of one question that are bridged (a long question pasted from elsewhere). */
const MAX_BRIDGED = 4

export interface Bridge {
  /** The question's word, as written (lower case). */
  word: string
  /** The title word it is bridged to, lower case. */
  term: string
  cosine: number
}

/** What the bridge needs of the embedding model: its id, and vectors for short texts. */
export interface WordEmbedder {
  id: string
  embedDocuments(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>
}

export function canBridge(embedder: unknown): embedder is WordEmbedder {
  const e = embedder as Partial<WordEmbedder> | null
  return !!e && typeof e.id === 'string' && typeof e.embedDocuments === 'function' && bridgeFloorFor(e.id) !== null
}

/** Vectors of title words, per embedder: the titles of a library change by a few words an import. */
const vectors = new Map<string, Map<string, Float32Array>>()

/** Most cached words per embedder; past it the cache starts again (a library's titles hold a few thousand). */
const MAX_CACHED = 50_000

/** The question's words that no passage of the collections holds (stop words aside), in question order. */
export async function unknownWords(db: Queryable, collections: string[], text: string): Promise<string[]> {
  const words = [
    ...new Set(
      [...text.matchAll(/[\p{L}][\p{L}'-]*/gu)]
        .map((m) => m[0].toLowerCase().replace(/'s$/, ''))
        .filter((w) => w.length >= 3 && w.length <= MAX_WORD && !/-/.test(w)),
    ),
  ]
  if (words.length === 0 || collections.length === 0) return []
  // Stemmed as the index stems them; a word whose vector is empty is a stop word.
  const { rows } = await db.query<{ word: string; lexemes: number; df: number }>(
    `SELECT w AS word,
            (SELECT count(*) FROM unnest(to_tsvector('english', w)))::int AS lexemes,
            coalesce((SELECT sum(t.df) FROM unnest(to_tsvector('english', w)) u
                        JOIN term_stats t ON t.lexeme = u.lexeme AND t.collection_id = ANY($2::text[])), 0)::float8 AS df
       FROM unnest($1::text[]) w`,
    [words, collections],
  )
  const unknown = new Set(rows.filter((r) => r.lexemes > 0 && Number(r.df) === 0).map((r) => r.word))
  return words.filter((w) => unknown.has(w))
}

/** Title words per store, kept while the store's mark says no chunk was written or removed since. */
const titleCache = new WeakMap<Queryable, { key: string; words: string[] }>()

/**
 * The words of the collections' section titles (each level of a breadcrumb), lower case. Read
 * once per state of the store: at a million chunks the distinct headings take a while to read.
 */
export async function titleWords(db: Queryable, collections: string[]): Promise<string[]> {
  const mark = await db.query<StoreMarkRow>(`SELECT ${STORE_MARK_COLUMNS}`)
  const m = storeMarkOf(mark.rows[0]!)
  const key = JSON.stringify([[...collections].sort(), m.seq, m.tomb, m.pruned, m.access])
  const cached = titleCache.get(db)
  if (cached?.key === key) return cached.words
  const words = await readTitleWords(db, collections)
  titleCache.set(db, { key, words })
  return words
}

async function readTitleWords(db: Queryable, collections: string[]): Promise<string[]> {
  const { rows } = await db.query<{ heading: string }>(
    `SELECT DISTINCT heading FROM chunks WHERE collection_id = ANY($1::text[])`,
    [collections],
  )
  // How many distinct headings hold each word: past MAX_TITLE_WORDS, the words that name most sections stay.
  const counts = new Map<string, number>()
  for (const r of rows)
    for (const w of new Set([...r.heading.matchAll(/[\p{L}][\p{L}]*/gu)].map((m) => m[0].toLowerCase())))
      if (w.length >= 3 && w.length <= MAX_WORD) counts.set(w, (counts.get(w) ?? 0) + 1)
  const kept = [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, MAX_TITLE_WORDS)
    .map(([w]) => w)
  // Stop words of the index ("what", "about") name nothing, and keyword search drops them.
  const words = await db.query<{ w: string }>(
    `SELECT w FROM unnest($1::text[]) w WHERE to_tsvector('english', w) <> ''::tsvector ORDER BY w`,
    [kept],
  )
  return words.rows.map((r) => r.w)
}

async function vectorsOf(embedder: WordEmbedder, words: string[], signal?: AbortSignal): Promise<Map<string, Float32Array>> {
  let cache = vectors.get(embedder.id)
  if (!cache || cache.size > MAX_CACHED) vectors.set(embedder.id, (cache = new Map()))
  const missing = words.filter((w) => !cache.has(w))
  const BATCH = 128
  for (let i = 0; i < missing.length; i += BATCH) {
    const batch = missing.slice(i, i + BATCH)
    const vs = await embedder.embedDocuments(batch, signal)
    batch.forEach((w, j) => cache.set(w, vs[j]!))
  }
  return cache
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

/**
 * The bridges of a question's unknown words: each to its nearest title word, when that is at
 * the embedder's floor by cosine. Nothing when every word is known (most questions: no model call).
 */
export async function bridgeWords(
  db: Queryable,
  embedder: WordEmbedder,
  collections: string[],
  text: string,
  signal?: AbortSignal,
): Promise<Bridge[]> {
  const floor = bridgeFloorFor(embedder.id)
  if (floor === null) return []
  const unknown = (await unknownWords(db, collections, text)).slice(0, MAX_BRIDGED)
  if (unknown.length === 0) return []
  const titles = await titleWords(db, collections)
  if (titles.length === 0) return []
  const cache = await vectorsOf(embedder, titles, signal)
  const out: Bridge[] = []
  for (const word of unknown) {
    // Each word alone: an int8 model's vector of a word depends a little on what it is batched with.
    const [v] = await embedder.embedDocuments([word], signal)
    let best: Bridge | null = null
    for (const t of titles) {
      if (t.startsWith(word) || word.startsWith(t)) continue
      const c = dot(v!, cache.get(t)!)
      if (c >= floor && (!best || c > best.cosine)) best = { word, term: t, cosine: Math.round(c * 1000) / 1000 }
    }
    if (best && !out.some((b) => b.term === best.term)) out.push(best)
  }
  return out
}

/** The text with each bridged word written as its title word: what keyword search and the relevance gate read. */
export function withBridges(text: string, bridges: readonly Pick<Bridge, 'word' | 'term'>[]): string {
  let out = text
  for (const b of bridges) {
    const word = b.word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}_-])${word}(?:'s)?(?![\\p{L}\\p{N}_-])`, 'giu'), b.term)
  }
  return out
}
