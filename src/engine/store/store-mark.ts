import { accessKey } from './access'

/** How far the keyword postings (postings.ts) have read the store: the newest chunk row and tombstone. */
export interface Watermark {
  seq: number
  tomb: number
}

/**
 * Where the store is: the newest chunk row and tombstone, how far tombstones were pruned, and what
 * the connected role may read (store/access.ts): on a server the postings hold only the chunks the
 * role could read when they were built (row-level security), so postings built under other grants
 * are never used, but built again (ADR 0011).
 */
export interface StoreMark extends Watermark {
  pruned: number
  access: string
}

/**
 * The store's mark as columns of a SELECT. A search adds them to the statement that reads its
 * query's lexemes (retrieve/keyword.ts), so checking that the postings are current costs no round
 * trip of its own, and the mark and the statistics come from one snapshot.
 */
export const STORE_MARK_COLUMNS = `docent_chunk_seq() AS mark_seq, (SELECT max(id) FROM chunk_tombstones) AS mark_tomb,
       (SELECT pruned_through FROM chunk_tombstones_pruned) AS mark_pruned, docent_readable_collections() AS mark_access`

export interface StoreMarkRow {
  mark_seq: string | number | null
  mark_tomb: string | number | null
  mark_pruned: string | number | null
  mark_access: string[] | null
}

export function storeMarkOf(r: StoreMarkRow): StoreMark {
  return {
    seq: Number(r.mark_seq ?? 0),
    tomb: Number(r.mark_tomb ?? 0),
    pruned: Number(r.mark_pruned ?? 0),
    access: accessKey(r.mark_access),
  }
}
