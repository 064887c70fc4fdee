import type { KeywordPostings } from '../store/postings'
import { HEADING_EXTRA } from '../store/tsvector'
import type { ResolvedScope } from './scope'

/**
 * What both ways of scoring from the postings in memory share (store/postings.ts, ADR 0009), and
 * the exhaustive way: every candidate scored over every query lexeme. Searches use the pruned way
 * (keyword-pruned.ts), which returns the same top k; the exhaustive one is its reference, in the
 * tests and in the query bench (`bench -- query` times both on the same queries).
 */

export const BM25 = { k1: 1.2, b: 0.75, headingWeight: 1 + HEADING_EXTRA } as const

export interface KeywordHit {
  chunk_id: string
  rank: number
  bm25: number
}

export interface QueryTerm {
  lexeme: string
  df: number
  idf: number
}

// The SQL's constants as PostgreSQL evaluates them (numeric, then float8).
export const K1_PLUS_1 = Number((BM25.k1 + 1).toPrecision(12))
export const ONE_MINUS_B = Number((1 - BM25.b).toPrecision(12))

/**
 * What a lexeme adds to a chunk's score, with the SQL's operations in the SQL's order, so both
 * paths give the same floating-point scores. Both in-memory scorers add these in lexeme order.
 */
export function bm25Term(idf: number, tf: number, dl: number, avgdl: number): number {
  return (idf * (tf * K1_PLUS_1)) / (tf + BM25.k1 * (ONE_MINUS_B + (BM25.b * dl) / avgdl))
}

export const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * A list this many times longer than the chunks still in play is searched per chunk rather than
 * walked (binary search beats a walk well before this). Tests set it to 0 and to Infinity to
 * compare the two ways with the SQL path.
 */
export const SCORING = { lookupRatio: 16 }

/** The first index in ss[lo, hi) whose slot is at least `slot` (ss ascending). */
export function lowerBound(ss: Int32Array, lo: number, hi: number, slot: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ss[mid]! < slot) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Which (collection, version) pairs of the postings are in scope, as a flat table; null when none. */
export function allowedScope(p: KeywordPostings, scope: ResolvedScope): Uint8Array | null {
  const width = p.versions.length
  const allowed = new Uint8Array(p.collections.length * width)
  const keys = scope.versionKeys ? new Set(scope.versionKeys) : null
  let any = false
  for (const c of scope.collections) {
    const ci = p.collectionIndex(c)
    if (ci === undefined) continue
    for (let vi = 0; vi < width; vi++) {
      const v = p.versions[vi]
      if (v === null || !keys || keys.has(`${c}|${v}`)) {
        allowed[ci * width + vi] = 1
        any = true
      }
    }
  }
  return any ? allowed : null
}

/**
 * The ranking of scoreInSql (retrieve/keyword.ts) from the postings, every candidate scored in
 * full: candidates are the in-scope chunks holding a selective lexeme, each scored over every
 * query lexeme, best first, ties by chunk id.
 */
export function scoreExhaustive(
  p: KeywordPostings,
  terms: QueryTerm[],
  selective: QueryTerm[],
  avgdl: number,
  scope: ResolvedScope,
  limit: number,
): KeywordHit[] {
  const allowed = allowedScope(p, scope)
  if (!allowed) return []
  const slots = p.slotCount
  if (p.score.length < slots) {
    p.score = new Float64Array(Math.max(slots, p.score.length * 2))
    p.epochOf = new Int32Array(p.score.length)
    p.epoch = 0
  }
  const epoch = ++p.epoch
  const { score, epochOf, dl, live, coll, ver } = p
  const width = p.versions.length
  const candidates: number[] = []
  for (const t of selective) {
    const list = p.list(t.lexeme)
    if (!list) continue
    for (let i = 0; i < list.n; i++) {
      const s = list.slots[i]!
      if (epochOf[s] === epoch || !live[s] || !allowed[coll[s]! * width + ver[s]!]) continue
      epochOf[s] = epoch
      score[s] = 0
      candidates.push(s)
    }
  }
  // Every query lexeme adds to the candidates, in lexeme order and with the arithmetic of the SQL
  // (same operations, same order), so both give the same floating-point scores and ties.
  const byLexeme = [...terms].sort((a, b) => cmp(a.lexeme, b.lexeme))
  const avg = avgdl
  // Lists hold their slots in ascending order (slots are appended, compaction keeps the order). A
  // list far longer than the candidates (a common word at a million chunks) is searched for each
  // candidate instead of walked whole; the sums are the same, added in the same lexeme order.
  const sorted = Int32Array.from(candidates).sort()
  for (const t of byLexeme) {
    const list = p.list(t.lexeme)
    if (!list) continue
    const { slots: ss, tfs } = list
    const add = (s: number, tf: number) => {
      score[s]! += (t.idf * (tf * K1_PLUS_1)) / (tf + BM25.k1 * (ONE_MINUS_B + (BM25.b * dl[s]!) / avg))
    }
    if (list.n > SCORING.lookupRatio * sorted.length) {
      let lo = 0
      for (let c = 0; c < sorted.length; c++) {
        const s = sorted[c]!
        lo = lowerBound(ss, lo, list.n, s)
        if (lo >= list.n) break
        if (ss[lo] === s) add(s, tfs[lo]!)
      }
      continue
    }
    for (let i = 0; i < list.n; i++) {
      const s = ss[i]!
      if (epochOf[s] !== epoch) continue
      add(s, tfs[i]!)
    }
  }
  const top = topK(candidates, limit, (a, b) => score[b]! - score[a]! || cmp(p.chunkId(a), p.chunkId(b)))
  return top.map((s, i) => ({ chunk_id: p.chunkId(s), rank: i + 1, bm25: score[s]! }))
}

/** The best `k` of `items` by `order` (negative when the first is better), best first. */
export function topK(items: number[], k: number, order: (a: number, b: number) => number): number[] {
  if (items.length <= k * 4) return items.sort(order).slice(0, k)
  // A bounded heap whose root is the worst kept item.
  const heap: number[] = []
  const worse = (a: number, b: number) => order(a, b) > 0
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!worse(heap[i]!, heap[parent]!)) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
  }
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r
      if (m === i) return
      ;[heap[i], heap[m]] = [heap[m]!, heap[i]!]
      i = m
    }
  }
  for (const x of items) {
    if (heap.length < k) {
      heap.push(x)
      up(heap.length - 1)
    } else if (k > 0 && order(x, heap[0]!) < 0) {
      heap[0] = x
      down(0)
    }
  }
  return heap.sort(order)
}
