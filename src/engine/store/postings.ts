import type { Db, Queryable } from './db'
import { SerialQueue } from '../core/serial-queue'
import { parseTsvector } from './tsvector'
import { STORE_MARK_COLUMNS, storeMarkOf, type StoreMark, type StoreMarkRow } from './store-mark'
import { TermList } from './term-list'

/**
 * Keyword postings in memory: for every lexeme of every chunk's tsvector, the chunks containing it
 * with their term frequency (breadcrumb occurrences counted twice, as in retrieve/keyword.ts).
 * Derived from the store only, never written back: built from `chunks`, then kept current by
 * reading the chunks written since (`seq` above a watermark) and the tombstones of the chunks
 * deleted since, in one statement so both come from one snapshot (ADR 0009). Anything it cannot
 * follow (tombstones pruned past its watermark) makes it build again. Until it is built keyword
 * search runs in SQL, with the same ranking.
 */

/** Lexemes whose per-collection counts are kept (the cache is cleared when it is full). */
const DF_CACHE_TERMS = 50_000

/** Chunks read per statement while building (other queries run between batches). */
const BUILD_BATCH = 5000
/** A query brings the postings up to date itself when at most this many chunk rows changed. */
export const INLINE_CATCH_UP = 5000

export interface PostingsStats {
  chunks: number
  terms: number
  postings: number
  /** Typed-array bytes held by the postings and per-chunk arrays (not the Maps and strings). */
  bytes: number
  build_ms: number | null
}

export class KeywordPostings {
  private terms = new Map<string, TermList>()
  /** Per lexeme, its live chunks per collection at `changes` (statistics()). */
  private dfCache = new Map<string, { changes: number; counts: Int32Array }>()
  /** Bumped by every change to the postings: what the cache above was counted at. */
  private changes = 0
  private slotOf = new Map<string, number>()
  private ids: string[] = []
  private seqs: (number | null)[] = []
  dl = new Int32Array(1024)
  /** The shortest and longest chunk length added since the postings were built (deleted ones too): bounds for every chunk's. */
  minDl = Infinity
  maxDl = 0
  coll = new Uint16Array(1024)
  ver = new Uint16Array(1024)
  live = new Uint8Array(1024)
  private slots = 0
  private dead = 0
  /** The slots of the chunks deleted since the last compaction (`dead` of them), and the same sorted when asked. */
  private deadSlots: number[] = []
  private deadSorted: Int32Array | null = null
  readonly collections: string[] = []
  readonly versions: (string | null)[] = [null]
  /** Live chunks and the sum of their lengths, per collection index: collections.chunk_count and total_len. */
  private collChunks: number[] = []
  private collLen: number[] = []
  private collIndex = new Map<string, number>()
  private verIndex = new Map<string | null, number>([[null, 0]])
  private mark: { seq: number; tomb: number } = { seq: 0, tomb: 0 }
  /** What the role could read when these postings were built (StoreMark.access); null before a build. */
  private access: string | null = null
  private state: 'empty' | 'building' | 'ready' | 'closed' = 'empty'
  /** Builds and catch-ups, one at a time. */
  private readonly builds = new SerialQueue()
  private buildMs: number | null = null
  /** Scratch space for scoring, one cell per slot (see retrieve/keyword.ts). */
  score = new Float64Array(0)
  epochOf = new Int32Array(0)
  epoch = 0

  constructor(private readonly db: Queryable) {}

  get ready(): boolean {
    return this.state === 'ready'
  }

  get slotCount(): number {
    return this.slots
  }

  list(lexeme: string): TermList | undefined {
    return this.terms.get(lexeme)
  }

  chunkId(slot: number): string {
    return this.ids[slot]!
  }

  collectionIndex(id: string): number | undefined {
    return this.collIndex.get(id)
  }

  /**
   * What term_stats and the collections table say for these lexemes over these collections, read
   * from the postings instead (call when current(): both then describe the same snapshot): each
   * lexeme's document frequency, the number of chunks and the sum of their lengths.
   */
  statistics(lexemes: string[], collections: string[]): { df: number[]; n: number; totalLen: number } {
    const inColl = new Uint8Array(this.collections.length)
    let n = 0
    let totalLen = 0
    for (const c of collections) {
      const i = this.collIndex.get(c)
      if (i === undefined || inColl[i]) continue
      inColl[i] = 1
      n += this.collChunks[i] ?? 0
      totalLen += this.collLen[i] ?? 0
    }
    const df = lexemes.map((lexeme) => {
      const list = this.terms.get(lexeme)
      const dead = list && list.coll >= 0 ? this.deadIn(list) : null
      if (list && dead !== null) return inColl[list.coll] ? list.n - dead : 0
      const per = this.countsByCollection(lexeme)
      if (!per) return 0
      let count = 0
      for (let c = 0; c < per.length; c++) if (inColl[c]) count += per[c]!
      return count
    })
    return { df, n, totalLen }
  }

  /**
   * How many of a list's postings are of deleted chunks, when that is quicker to find than walking
   * the list (none deleted since the last compaction, as after a build, or few): each deleted slot
   * is looked for in the list. Null when walking is as quick.
   */
  private deadIn(list: TermList): number | null {
    if (this.dead === 0) return 0
    if (this.dead * 16 > list.n) return null
    const dead = (this.deadSorted ??= Int32Array.from(this.deadSlots).sort())
    let found = 0
    let lo = 0
    for (let i = 0; i < dead.length && lo < list.n; i++) {
      lo = list.lowerBound(dead[i]!, lo)
      if (lo < list.n && list.slots[lo] === dead[i]) found++
    }
    return found
  }

  /**
   * A lexeme's live chunks per collection, counted once and kept until the postings change: a
   * common word's list at a million chunks takes milliseconds to walk, and every search of it would.
   */
  private countsByCollection(lexeme: string): Int32Array | null {
    const list = this.terms.get(lexeme)
    if (!list) return null
    const hit = this.dfCache.get(lexeme)
    if (hit && hit.changes === this.changes && hit.counts.length === this.collections.length) return hit.counts
    const counts = new Int32Array(this.collections.length)
    const { live, coll } = this
    for (let i = 0; i < list.n; i++) {
      const s = list.slots[i]!
      if (live[s]) counts[coll[s]!]!++
    }
    if (this.dfCache.size >= DF_CACHE_TERMS) this.dfCache.clear()
    this.dfCache.set(lexeme, { changes: this.changes, counts })
    return counts
  }

  versionIndex(v: string | null): number | undefined {
    return this.verIndex.get(v)
  }

  stats(): PostingsStats {
    let postings = 0
    let bytes = this.dl.byteLength + this.coll.byteLength + this.ver.byteLength + this.live.byteLength
    for (const t of this.terms.values()) {
      postings += t.n
      bytes += t.slots.byteLength + t.tfs.byteLength
    }
    return { chunks: this.slots - this.dead, terms: this.terms.size, postings, bytes, build_ms: this.buildMs }
  }

  /**
   * True when the postings equal the store now (bringing them up to date when few chunk rows
   * changed); false while they are being built or caught up in the background: search in SQL.
   * `mark`, when the caller read it already (STORE_MARK_COLUMNS), saves reading it again.
   */
  async current(mark?: StoreMark): Promise<boolean> {
    if (this.state === 'closed') return false
    if (this.state === 'empty') {
      this.startBuild()
      return false
    }
    if (this.builds.busy) {
      if (this.state !== 'ready') return false
      await this.builds.idle()
    }
    if (this.state !== 'ready') return false
    const w = mark ?? (await this.storeMark())
    if (w.access !== this.access) {
      // A grant or a revoke since the build: what is held here is another scope's. Build again
      // under the role's grants now; meanwhile keyword search runs in SQL, under the policies.
      this.reset()
      this.startBuild()
      return false
    }
    if (w.pruned > this.mark.tomb) {
      this.reset()
      this.startBuild()
      return false
    }
    if (w.seq <= this.mark.seq && w.tomb <= this.mark.tomb) return true
    if (w.seq - this.mark.seq + (w.tomb - this.mark.tomb) <= INLINE_CATCH_UP) {
      await this.exclusive(() => this.catchUp())
      return this.state === 'ready'
    }
    void this.exclusive(() => this.catchUp()).catch(() => undefined)
    return false
  }

  /** Builds now (or waits for the build under way), then catches up. Benchmarks and tests call it. */
  async warm(): Promise<void> {
    if (this.state === 'empty') this.startBuild()
    while (this.builds.busy) await this.builds.idle()
    if (this.state === 'ready') await this.exclusive(() => this.catchUp())
  }

  /** The tombstone watermark these postings still need (null when none are built or building): prune up to it only. */
  needsTombstonesAfter(): number | null {
    return this.state === 'ready' || this.state === 'building' ? this.mark.tomb : null
  }

  close(): void {
    this.state = 'closed'
  }

  private closed(): boolean {
    return this.state === 'closed'
  }

  private startBuild(): void {
    this.state = 'building'
    void this.exclusive(() => this.build()).catch(() => {
      if (this.state !== 'closed') this.reset()
    })
  }

  private exclusive(fn: () => Promise<void>): Promise<void> {
    return this.builds.run(fn)
  }

  private reset(): void {
    this.changes++
    this.dfCache.clear()
    this.terms = new Map()
    this.slotOf = new Map()
    this.ids = []
    this.seqs = []
    this.slots = 0
    this.dead = 0
    this.deadSlots = []
    this.deadSorted = null
    this.live.fill(0)
    this.minDl = Infinity
    this.maxDl = 0
    this.collChunks = []
    this.collLen = []
    this.mark = { seq: 0, tomb: 0 }
    this.access = null
    if (this.state !== 'closed') this.state = 'empty'
  }

  private async storeMark(): Promise<StoreMark> {
    const { rows } = await this.db.query<StoreMarkRow>(`SELECT ${STORE_MARK_COLUMNS}`)
    return storeMarkOf(rows[0]!)
  }

  /** Every chunk, read in batches by id; what changes meanwhile is caught up from the watermark taken first. */
  private async build(): Promise<void> {
    const t0 = performance.now()
    const w = await this.storeMark()
    this.mark = { seq: w.seq, tomb: Math.max(w.tomb, w.pruned) }
    this.access = w.access
    let after = ''
    for (;;) {
      if (this.closed()) return
      const { rows } = await this.db.query<ChunkTerms>(
        `SELECT id, seq, collection_id, version, lex_len, tsv::text AS tsv FROM chunks WHERE id > $1 ORDER BY id LIMIT ${BUILD_BATCH}`,
        [after],
      )
      for (const r of rows) this.add(r)
      if (rows.length < BUILD_BATCH) break
      after = rows[rows.length - 1]!.id
    }
    if (this.closed()) return
    for (const list of this.terms.values()) list.trim()
    this.state = 'ready'
    await this.catchUp()
    this.buildMs = performance.now() - t0
  }

  /** Reads what changed since the watermark, in one statement (one snapshot), and applies it. */
  private async catchUp(): Promise<void> {
    for (;;) {
      if (this.state !== 'ready') return
      const { seq, tomb } = this.mark
      const { rows } = await this.db.query<ChunkTerms & { kind: 'c' | 't' | 'p' | 'm'; tomb_id: string | null }>(
        `(SELECT 'c' AS kind, id, seq, collection_id, version, lex_len, tsv::text AS tsv, NULL::bigint AS tomb_id
            FROM chunks WHERE seq > $1 ORDER BY seq LIMIT ${BUILD_BATCH})
         UNION ALL
         SELECT 't', chunk_id, seq, NULL, NULL, NULL, NULL, id FROM chunk_tombstones WHERE id > $2
         UNION ALL
         SELECT 'p', '', NULL, NULL, NULL, NULL, NULL, pruned_through FROM chunk_tombstones_pruned
         UNION ALL
         SELECT 'm', '', docent_chunk_seq(), NULL, NULL, NULL, NULL, NULL`,
        [seq, tomb],
      )
      let newSeq = seq
      let newTomb = tomb
      for (const r of rows) {
        if (r.kind === 'p') {
          if (Number(r.tomb_id) > tomb) {
            // Tombstones these postings had not read were pruned: build again.
            this.reset()
            this.startBuild()
            return
          }
        } else if (r.kind === 't') {
          const slot = this.slotOf.get(r.id)
          if (slot !== undefined && this.seqs[slot] === (r.seq === null ? null : Number(r.seq))) this.remove(slot)
          newTomb = Math.max(newTomb, Number(r.tomb_id))
        }
      }
      let read = 0
      for (const r of rows) {
        if (r.kind !== 'c') continue
        read++
        const s = Number(r.seq)
        newSeq = Math.max(newSeq, s)
        const slot = this.slotOf.get(r.id)
        if (slot !== undefined && this.seqs[slot] === s) continue
        if (slot !== undefined) this.remove(slot)
        this.add(r)
      }
      // Read to the end: the chunk rows up to the store's newest (in this statement's snapshot) that
      // are not here are rows this role may not read (row-level security), so the mark moves past
      // them and the next store mark, which counts them (docent_chunk_seq), finds these postings current.
      const storeSeq = Number(rows.find((r) => r.kind === 'm')?.seq ?? 0)
      if (read < BUILD_BATCH) newSeq = Math.max(newSeq, storeSeq)
      this.mark = { seq: newSeq, tomb: newTomb }
      if (this.dead > 1000 && this.dead * 4 > this.slots) this.compact()
      if (read < BUILD_BATCH) return
    }
  }

  private add(r: ChunkTerms): void {
    this.changes++
    const slot = this.slots++
    if (slot >= this.live.length) this.grow(slot + 1)
    this.ids[slot] = r.id
    this.seqs[slot] = r.seq === null ? null : Number(r.seq)
    this.slotOf.set(r.id, slot)
    const dl = (this.dl[slot] = Number(r.lex_len))
    if (dl < this.minDl) this.minDl = dl
    if (dl > this.maxDl) this.maxDl = dl
    const c = (this.coll[slot] = this.intern(this.collIndex, this.collections, r.collection_id))
    this.ver[slot] = this.intern(this.verIndex, this.versions, r.version)
    this.live[slot] = 1
    this.collChunks[c] = (this.collChunks[c] ?? 0) + 1
    this.collLen[c] = (this.collLen[c] ?? 0) + this.dl[slot]!
    for (const [lexeme, tf] of parseTsvector(r.tsv)) {
      let list = this.terms.get(lexeme)
      if (!list) this.terms.set(lexeme, (list = new TermList()))
      list.push(slot, tf, c)
    }
  }

  private remove(slot: number): void {
    if (!this.live[slot]) return
    this.changes++
    this.live[slot] = 0
    this.collChunks[this.coll[slot]!]!--
    this.collLen[this.coll[slot]!]! -= this.dl[slot]!
    this.slotOf.delete(this.ids[slot]!)
    this.dead++
    this.deadSlots.push(slot)
    this.deadSorted = null
  }

  private intern<T>(index: Map<T, number>, values: T[], v: T): number {
    let i = index.get(v)
    if (i === undefined) {
      i = values.length
      values.push(v)
      index.set(v, i)
    }
    return i
  }

  private grow(min: number): void {
    let size = this.live.length
    while (size < min) size *= 2
    const resize = <A extends Int32Array | Uint16Array | Uint8Array>(a: A, make: (n: number) => A): A => {
      const b = make(size)
      b.set(a)
      return b
    }
    this.dl = resize(this.dl, (n) => new Int32Array(n))
    this.coll = resize(this.coll, (n) => new Uint16Array(n))
    this.ver = resize(this.ver, (n) => new Uint16Array(n))
    this.live = resize(this.live, (n) => new Uint8Array(n))
  }

  /** Drops deleted chunks from every list and renumbers the live ones. */
  private compact(): void {
    this.changes++
    const to = new Int32Array(this.slots).fill(-1)
    let next = 0
    for (let s = 0; s < this.slots; s++) {
      if (!this.live[s]) continue
      to[s] = next
      this.ids[next] = this.ids[s]!
      this.seqs[next] = this.seqs[s]!
      this.dl[next] = this.dl[s]!
      this.coll[next] = this.coll[s]!
      this.ver[next] = this.ver[s]!
      this.live[next] = 1
      this.slotOf.set(this.ids[next]!, next)
      next++
    }
    this.live.fill(0, next)
    this.ids.length = next
    this.seqs.length = next
    for (const [lexeme, list] of this.terms) if (list.renumber(to) === 0) this.terms.delete(lexeme)
    this.slots = next
    this.dead = 0
    this.deadSlots = []
    this.deadSorted = null
  }
}

interface ChunkTerms {
  id: string
  seq: string | number | null
  collection_id: string
  version: string | null
  lex_len: number
  tsv: string
}

const registry = new WeakMap<Queryable, KeywordPostings>()

/**
 * The postings of an open store (one per Db, made on first use). A transaction handle has none:
 * it may see writes that are not committed.
 */
export function keywordPostingsOf(db: Queryable): KeywordPostings | null {
  if (!isDb(db)) return null
  let p = registry.get(db)
  if (!p) {
    p = new KeywordPostings(db)
    registry.set(db, p)
    db.onClose(() => p!.close())
  }
  return p
}

function isDb(db: Queryable): db is Db {
  return typeof (db as Partial<Db>).onClose === 'function'
}

/** How old a tombstone must be before a server prunes it: other processes' postings read them too. */
export const SERVER_TOMBSTONE_AGE = '15 minutes'

/**
 * After a sync: drops the tombstones every reader has applied, and records how far, so older
 * postings rebuild. Embedded, this process's postings are the only reader (one process owns a data
 * folder). On a server other processes' postings read them as well, and nothing here knows how
 * far they got: only tombstones older than SERVER_TOMBSTONE_AGE go (and never past what this
 * process's postings have read), and postings that have not looked for that long build again (ADR 0010).
 */
export async function pruneTombstones(db: Queryable): Promise<void> {
  const keep = keywordPostingsOf(db)?.needsTombstonesAfter()
  const server = isDb(db) && db.kind === 'server'
  const { rows } = await db.query<{ max: string | null }>(
    server
      ? `SELECT max(id) AS max FROM chunk_tombstones WHERE at < now() - interval '${SERVER_TOMBSTONE_AGE}'`
      : 'SELECT max(id) AS max FROM chunk_tombstones',
  )
  // Never past what this process's own postings have read: they would only have to build again.
  const through = Math.min(Number(rows[0]?.max ?? 0), keep ?? Infinity)
  if (through <= 0) return
  await db.query('DELETE FROM chunk_tombstones WHERE id <= $1', [through])
  await db.query('UPDATE chunk_tombstones_pruned SET pruned_through = greatest(pruned_through, $1)', [through])
}
