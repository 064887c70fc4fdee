/**
 * One lexeme's postings (store/postings.ts): the slots of the chunks holding it, ascending, and its
 * term frequency in each. `maxTf` bounds what the lexeme can add to any chunk's BM25 score, which
 * lets a search skip chunks that cannot reach its top k (retrieve/keyword-pruned.ts, ADR 0009).
 */
export class TermList {
  slots = new Int32Array(4)
  tfs = new Uint16Array(4)
  n = 0
  /**
   * The largest term frequency in the list. Postings of deleted chunks still count until the list
   * is compacted: a bound only has to be at least every live chunk's frequency, never equal to one.
   */
  maxTf = 0
  /** The collection (index) of every posting; -1 while there are none, -2 once they span several. */
  coll = -1

  push(slot: number, tf: number, coll: number): void {
    if (this.coll !== coll) this.coll = this.coll === -1 ? coll : -2
    if (this.n === this.slots.length) {
      const slots = new Int32Array(Math.max(4, this.n * 2))
      slots.set(this.slots)
      this.slots = slots
      const tfs = new Uint16Array(slots.length)
      tfs.set(this.tfs)
      this.tfs = tfs
    }
    this.slots[this.n] = slot
    this.tfs[this.n] = tf
    if (this.tfs[this.n]! > this.maxTf) this.maxTf = this.tfs[this.n]!
    this.n++
  }

  /** Gives back the doubling's spare room (after a build). */
  trim(): void {
    if (this.slots.length > this.n + 8) {
      this.slots = this.slots.slice(0, this.n)
      this.tfs = this.tfs.slice(0, this.n)
    }
  }

  /** The first index from `lo` on whose slot is at least `slot` (slots ascend). */
  lowerBound(slot: number, lo = 0): number {
    let hi = this.n
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.slots[mid]! < slot) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /**
   * Keeps the postings whose slot `to` maps to a new slot (-1: the chunk is gone), renumbered and
   * still ascending (`to` keeps the order of the slots it keeps), and recounts maxTf over them.
   * Returns how many are left.
   */
  renumber(to: Int32Array): number {
    let w = 0
    let maxTf = 0
    for (let i = 0; i < this.n; i++) {
      const s = to[this.slots[i]!]!
      if (s < 0) continue
      this.slots[w] = s
      const tf = (this.tfs[w] = this.tfs[i]!)
      if (tf > maxTf) maxTf = tf
      w++
    }
    this.n = w
    this.maxTf = maxTf
    return w
  }
}
