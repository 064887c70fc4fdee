import type { KeywordPostings } from '../store/postings'
import type { TermList } from '../store/term-list'
import type { ResolvedScope } from './scope'
import {
  allowedScope,
  BM25,
  bm25Term,
  cmp,
  K1_PLUS_1,
  lowerBound,
  ONE_MINUS_B,
  SCORING,
  topK,
  type KeywordHit,
  type QueryTerm,
} from './keyword-memory'

/**
 * The top k of scoreExhaustive (keyword-memory.ts), the same chunks in the same order with the
 * same scores, without scoring every candidate over every query lexeme (ADR 0009, "Pruning").
 *
 * The candidates (in-scope live chunks holding a selective lexeme) are read first, then the other
 * lexemes one at a time, rarest first, each only for the candidates still in play: a candidate
 * leaves play when what it has so far, plus the most every lexeme not read yet could add to it,
 * is below the k-th best of what the candidates in play have so far. Contributions are never
 * negative, so that k-th value is at most the final k-th best score, and a candidate that left
 * could not have reached it: the top k is exactly the exhaustive one (a term-at-a-time form of
 * MaxScore). What a lexeme can add is bounded by its largest term frequency (TermList.maxTf) at the
 * candidate's own length. The candidates left at the end are scored with the exhaustive
 * arithmetic in the exhaustive order (lexeme order), so their scores are bit for bit the same.
 *
 * At a million chunks a question of common words has a rarest word in tens of thousands of chunks
 * and other words in most of them; scoring all those candidates walked every list whole. Here the
 * rarest word usually decides which candidates are left, and the common words' lists are searched
 * for those few. Scratch space is kept between searches (typed arrays, no allocation per candidate).
 */

/** Slack on the cut for floating-point rounding: bounds and running sums add in other orders than the final score. */
const ROUNDING_SLACK = 1e-9

/** Larger term-frequency tables than this (entries) are not kept between searches. */
const KEEP_TF_ENTRIES = 8 * 2 ** 20

class Scratch {
  /** Per slot: this search's epoch while the chunk is a candidate in play. */
  mark = new Int32Array(0)
  /** Per slot: its candidate's row. */
  row = new Int32Array(0)
  epoch = 0
  /** Per row: the candidate's slot (ascending). */
  cand = new Int32Array(0)
  /** The rows in play, ascending. */
  alive = new Int32Array(0)
  /** Per row: what the lexemes read so far add (rarest-first order: a bound, not the score). */
  partial = new Float64Array(0)
  /** Per row: BM25's length normalisation, k1 · (1 - b + b · dl / avgdl). */
  norm = new Float64Array(0)
  /** Per row and lexeme (row-major): the term frequency, 0 when absent. */
  tf = new Uint16Array(0)
  /** The k largest values seen (a min-heap), to find the k-th best so far. */
  heap = new Float64Array(0)
  /** Per term frequency: the most the rarest lexeme adds to a chunk (startFromRarest). */
  shares = new Float64Array(0)
}

/** What a search did, for tests and the bench. */
export interface PruningTrace {
  /** The candidates; from the rarest lexeme alone, its postings (deleted and out-of-scope chunks not told apart). */
  candidates: number
  /** The candidates scored to the end. */
  scored: number
}

const scratches = new WeakMap<KeywordPostings, Scratch>()

/** The bytes of scratch space kept between searches of these postings (the bench reports it beside theirs). */
export function pruningScratchBytes(p: KeywordPostings): number {
  const x = scratches.get(p)
  if (!x) return 0
  return [x.mark, x.row, x.cand, x.alive, x.partial, x.norm, x.tf, x.heap, x.shares].reduce((sum, a) => sum + a.byteLength, 0)
}

function need<A extends Int32Array | Float64Array | Uint16Array>(a: A, n: number, make: (n: number) => A): A {
  return a.length >= n ? a : make(Math.max(n, a.length * 2))
}

/** Room for `rows` candidates of `m` lexemes, keeping what the rows so far hold (grown by doubling). */
function reserve(x: Scratch, rows: number, m: number): void {
  const grow = <A extends Int32Array | Float64Array | Uint16Array>(a: A, n: number, make: (n: number) => A): A => {
    if (a.length >= n) return a
    const b = make(Math.max(n, a.length * 2, 1024))
    b.set(a as never)
    return b
  }
  x.cand = grow(x.cand, rows, (n) => new Int32Array(n))
  x.alive = grow(x.alive, rows, (n) => new Int32Array(n))
  x.partial = grow(x.partial, rows, (n) => new Float64Array(n))
  x.norm = grow(x.norm, rows, (n) => new Float64Array(n))
  x.tf = grow(x.tf, rows * m, (n) => new Uint16Array(n))
}

/** A new epoch for x.mark (slots marked with an older one are not in play), and room per slot. */
function nextEpoch(p: KeywordPostings, x: Scratch): number {
  x.mark = need(x.mark, p.slotCount, (n) => new Int32Array(n))
  x.row = need(x.row, p.slotCount, (n) => new Int32Array(n))
  if (++x.epoch >= 2 ** 30) {
    x.mark.fill(0)
    x.epoch = 1
  }
  return x.epoch
}

/** The most lexemes j.. can add to a candidate in play: at the shortest candidate's length, and at the longest's. */
interface RestBounds {
  shortest: Float64Array
  longest: Float64Array
}

/** How a search starts: its candidates, how many of them are in play, and the bounds. */
interface Start {
  candidates: number
  inPlay: number
  bounds: RestBounds
}

export function scorePruned(
  p: KeywordPostings,
  terms: QueryTerm[],
  selective: QueryTerm[],
  avgdl: number,
  scope: ResolvedScope,
  limit: number,
  trace?: PruningTrace,
): KeywordHit[] {
  const allowed = allowedScope(p, scope)
  if (!allowed || limit <= 0) return []
  let x = scratches.get(p)
  if (!x) scratches.set(p, (x = new Scratch()))
  const m = terms.length
  const lists = terms.map((t) => p.list(t.lexeme))
  x.heap = need(x.heap, limit, (n) => new Float64Array(n))
  // Selective lexemes are the rarest, so they come first in `terms`. One alone (a long list: its
  // postings passed the candidate budget) decides which of its chunks can reach the top k at all.
  const rarest = selective.length === 1 && terms[0]?.lexeme === selective[0]!.lexeme
  const start = rarest
    ? startFromRarest(p, x, allowed, terms, lists, avgdl, limit)
    : startFromUnion(
        p,
        x,
        allowed,
        terms,
        lists,
        selective.map((t) => p.list(t.lexeme)),
        avgdl,
      )
  let inPlay = start.inPlay
  for (let j = rarest ? 1 : 0; j < m; j++) {
    if (j > 0 && inPlay > limit) inPlay = prune(x, inPlay, limit, j, terms, lists, start.bounds)
    readLexeme(x, lists[j], j, m, terms[j]!.idf, inPlay)
  }
  if (inPlay > limit) inPlay = prune(x, inPlay, limit, m, terms, lists, start.bounds)
  if (trace) {
    trace.candidates = start.candidates
    trace.scored = inPlay
  }
  return finalTopK(p, x, inPlay, terms, avgdl, limit)
}

function restBounds(
  terms: QueryTerm[],
  lists: (TermList | undefined)[],
  minDl: number,
  maxDl: number,
  avgdl: number,
): RestBounds {
  const suffix = (d: number) => {
    const norm = BM25.k1 * (ONE_MINUS_B + (BM25.b * d) / avgdl)
    const rest = new Float64Array(terms.length + 1)
    for (let j = terms.length - 1; j >= 0; j--) rest[j] = rest[j + 1]! + bound(terms[j]!.idf, lists[j]?.maxTf ?? 0, norm)
    return rest
  }
  return { shortest: suffix(minDl), longest: suffix(maxDl) }
}

/**
 * Whether a candidate with `have` so far and this length normalisation can still reach `cut` with
 * lexemes j..: first against the bounds at the shortest and longest lengths, then, between them,
 * the bound at its own length.
 */
function canReach(
  have: number,
  norm: number,
  cut: number,
  j: number,
  terms: QueryTerm[],
  lists: (TermList | undefined)[],
  bounds: RestBounds,
): boolean {
  if (have + bounds.shortest[j]! < cut) return false
  if (have + bounds.longest[j]! >= cut) return true
  let can = have
  for (let t = j; t < terms.length && can < cut; t++) can += bound(terms[t]!.idf, lists[t]?.maxTf ?? 0, norm)
  return can >= cut
}

/**
 * Candidates from the rarest lexeme's list alone, read twice. First for the k-th best of what
 * that lexeme adds to its in-scope chunks (a lower bound of the k-th best score); then only the
 * chunks that can still reach it go into play, with that share as their partial sum. At a million
 * chunks a list of hundreds of thousands leaves a few hundred in play, and nothing is written for
 * the others. Most postings are passed over on their term frequency alone (the most it adds, at
 * the shortest length there is), without reading their chunk's length, scope or liveness.
 */
function startFromRarest(
  p: KeywordPostings,
  x: Scratch,
  allowed: Uint8Array,
  terms: QueryTerm[],
  lists: (TermList | undefined)[],
  avgdl: number,
  k: number,
): Start {
  const epoch = nextEpoch(p, x)
  const bounds = restBounds(terms, lists, p.minDl, p.maxDl, avgdl)
  const list = lists[0]
  if (!list) return { candidates: 0, inPlay: 0, bounds }
  const m = terms.length
  const idf = terms[0]!.idf
  const { live, coll, ver, dl } = p
  const width = p.versions.length
  const everywhere = allowed.every((a) => a === 1)
  const { n, slots: ss, tfs } = list
  const most = (x.shares = need(x.shares, list.maxTf + 1, (size) => new Float64Array(size)))
  const shortest = BM25.k1 * (ONE_MINUS_B + (BM25.b * p.minDl) / avgdl)
  for (let t = 0; t <= list.maxTf; t++) most[t] = bound(idf, t, shortest)
  const { heap } = x
  let size = 0
  for (let i = 0; i < n; i++) {
    const t = tfs[i]!
    if (size === k && most[t]! <= heap[0]!) continue
    const s = ss[i]!
    if (!live[s] || !(everywhere || allowed[coll[s]! * width + ver[s]!])) continue
    size = offer(heap, size, k, (idf * (t * K1_PLUS_1)) / (t + BM25.k1 * (ONE_MINUS_B + (BM25.b * dl[s]!) / avgdl)))
  }
  const theta = size === k ? heap[0]! : -Infinity
  const cut = theta - ROUNDING_SLACK * Math.max(1, Math.abs(theta))
  const reach = bounds.shortest[1]!
  let rows = 0
  for (let i = 0; i < n; i++) {
    const t = tfs[i]!
    if (most[t]! + reach < cut) continue
    const s = ss[i]!
    if (!live[s] || !(everywhere || allowed[coll[s]! * width + ver[s]!])) continue
    const norm = BM25.k1 * (ONE_MINUS_B + (BM25.b * dl[s]!) / avgdl)
    const have = (idf * (t * K1_PLUS_1)) / (t + norm)
    if (!canReach(have, norm, cut, 1, terms, lists, bounds)) continue
    if (rows >= x.cand.length || (rows + 1) * m > x.tf.length) reserve(x, rows + 1, m)
    x.cand[rows] = s
    x.alive[rows] = rows
    x.partial[rows] = have
    x.norm[rows] = norm
    x.tf[rows * m] = t
    x.mark[s] = epoch
    x.row[s] = rows++
  }
  return { candidates: n, inPlay: rows, bounds }
}

/**
 * Candidates from several selective lexemes' lists (short ones: their postings fit the candidate
 * budget together): the in-scope live chunks holding any, once each, ascending, all in play with
 * nothing read yet.
 */
function startFromUnion(
  p: KeywordPostings,
  x: Scratch,
  allowed: Uint8Array,
  terms: QueryTerm[],
  lists: (TermList | undefined)[],
  selectiveLists: (TermList | undefined)[],
  avgdl: number,
): Start {
  const epoch = nextEpoch(p, x)
  let most = 0
  for (const list of selectiveLists) most += list?.n ?? 0
  reserve(x, most, terms.length)
  const { mark, row, cand, alive, partial, norm } = x
  const { live, coll, ver, dl } = p
  const width = p.versions.length
  let nc = 0
  for (const list of selectiveLists) {
    if (!list) continue
    for (let i = 0; i < list.n; i++) {
      const s = list.slots[i]!
      if (mark[s] === epoch || !live[s] || !allowed[coll[s]! * width + ver[s]!]) continue
      mark[s] = epoch
      cand[nc++] = s
    }
  }
  if (selectiveLists.length > 1) cand.subarray(0, nc).sort()
  let minDl = Infinity
  let maxDl = 0
  for (let r = 0; r < nc; r++) {
    const s = cand[r]!
    const d = dl[s]!
    if (d < minDl) minDl = d
    if (d > maxDl) maxDl = d
    row[s] = r
    alive[r] = r
    partial[r] = 0
    norm[r] = BM25.k1 * (ONE_MINUS_B + (BM25.b * d) / avgdl)
  }
  return { candidates: nc, inPlay: nc, bounds: restBounds(terms, lists, minDl, maxDl, avgdl) }
}

/**
 * The candidates left in play, scored with the exhaustive scorer's arithmetic in its order
 * (lexemes in lexeme order), so the scores are the same bit for bit; the best `limit`, ties by
 * chunk id. x.partial, no longer needed as a bound, holds the scores.
 */
function finalTopK(
  p: KeywordPostings,
  x: Scratch,
  inPlay: number,
  terms: QueryTerm[],
  avgdl: number,
  limit: number,
): KeywordHit[] {
  const m = terms.length
  const byLexeme = terms.map((_, j) => j).sort((a, b) => cmp(terms[a]!.lexeme, terms[b]!.lexeme))
  const { alive, cand, tf, partial: score } = x
  const { dl } = p
  const rows: number[] = []
  for (let i = 0; i < inPlay; i++) {
    const r = alive[i]!
    const s = cand[r]!
    let sc = 0
    for (const j of byLexeme) {
      const t = tf[r * m + j]!
      if (t) sc += bm25Term(terms[j]!.idf, t, dl[s]!, avgdl)
    }
    score[r] = sc
    rows.push(r)
  }
  if (x.tf.length > KEEP_TF_ENTRIES) x.tf = new Uint16Array(0)
  const top = topK(rows, limit, (a, b) => score[b]! - score[a]! || cmp(p.chunkId(cand[a]!), p.chunkId(cand[b]!)))
  return top.map((r, i) => ({ chunk_id: p.chunkId(cand[r]!), rank: i + 1, bm25: score[r]! }))
}

/** The most a lexeme of this IDF and largest term frequency adds to a chunk of this length normalisation. */
function bound(idf: number, maxTf: number, norm: number): number {
  return maxTf > 0 ? (idf * (maxTf * K1_PLUS_1)) / (maxTf + norm) : 0
}

/**
 * Reads lexeme j's term frequency for every candidate in play into x.tf and adds its share to
 * x.partial: walking the list, or, when it is far longer than the candidates in play, searching
 * it for each (the candidates ascend, so each search starts where the last one ended).
 */
function readLexeme(x: Scratch, list: TermList | undefined, j: number, m: number, idf: number, inPlay: number): void {
  const { alive, cand, tf, partial, norm } = x
  const n = list?.n ?? 0
  const add = (r: number, t: number) => {
    tf[r * m + j] = t
    partial[r]! += (idf * (t * K1_PLUS_1)) / (t + norm[r]!)
  }
  if (!list || n > SCORING.lookupRatio * inPlay) {
    let lo = 0
    for (let i = 0; i < inPlay; i++) {
      const r = alive[i]!
      const s = cand[r]!
      tf[r * m + j] = 0
      lo = gallop(list?.slots, lo, n, s)
      if (lo < n && list!.slots[lo] === s) add(r, list!.tfs[lo]!)
    }
    return
  }
  for (let i = 0; i < inPlay; i++) tf[alive[i]! * m + j] = 0
  const { mark, row } = x
  const epoch = x.epoch
  const { slots: ss, tfs } = list
  for (let i = 0; i < n; i++) {
    const s = ss[i]!
    if (mark[s] === epoch) add(row[s]!, tfs[i]!)
  }
}

/** The first index in ss[lo, hi) whose slot is at least `slot`, searching outwards from lo. */
function gallop(ss: Int32Array | undefined, lo: number, hi: number, slot: number): number {
  if (!ss || lo >= hi || ss[lo]! >= slot) return lo
  let prev = lo
  let step = 1
  while (prev + step < hi && ss[prev + step]! < slot) {
    prev += step
    step *= 2
  }
  return lowerBound(ss, prev + 1, Math.min(prev + step, hi), slot)
}

/**
 * Takes out of play the candidates that cannot reach the top k, before lexeme j is read (j = m:
 * after the last): those whose partial sum plus the most lexemes j.. can add is below the k-th
 * largest partial sum in play. Returns how many stay.
 */
function prune(
  x: Scratch,
  inPlay: number,
  k: number,
  j: number,
  terms: QueryTerm[],
  lists: (TermList | undefined)[],
  bounds: RestBounds,
): number {
  const { alive, partial, norm, mark, cand, heap } = x
  let size = 0
  for (let i = 0; i < inPlay; i++) size = offer(heap, size, k, partial[alive[i]!]!)
  const theta = size === k ? heap[0]! : -Infinity
  const cut = theta - ROUNDING_SLACK * Math.max(1, Math.abs(theta))
  let kept = 0
  for (let i = 0; i < inPlay; i++) {
    const r = alive[i]!
    if (canReach(partial[r]!, norm[r]!, cut, j, terms, lists, bounds)) alive[kept++] = r
    else mark[cand[r]!] = 0
  }
  return kept
}

/**
 * Offers v to a min-heap of the k largest values seen (`size` of them so far); returns the new
 * size. heap[0] is then the k-th largest once k were offered.
 */
function offer(heap: Float64Array, size: number, k: number, v: number): number {
  if (size < k) {
    let c = size
    while (c > 0) {
      const parent = (c - 1) >> 1
      if (heap[parent]! <= v) break
      heap[c] = heap[parent]!
      c = parent
    }
    heap[c] = v
    return size + 1
  }
  if (v <= heap[0]!) return size
  let c = 0
  for (;;) {
    const l = 2 * c + 1
    if (l >= k) break
    const small = l + 1 < k && heap[l + 1]! < heap[l]! ? l + 1 : l
    if (heap[small]! >= v) break
    heap[c] = heap[small]!
    c = small
  }
  heap[c] = v
  return size
}
