/**
 * The same section, word for word, in several places: documentation copied into every release's
 * folder (docs/2024-11-05/…, docs/2025-06-18/…, versioned_docs/version-3.1/…), or a file kept twice.
 * With no version chosen, a search for "where are the log files?" found six copies of one section
 * first, so the answer read one passage six times, cited it six times on one sentence, and
 * nothing else fitted. Such copies are one result: the best-ranked stands for them, names the
 * others (`same_in`), and the places they held go to the next different passages.
 *
 * "The same" is the embedding cache key (store/passages.ts embed_hash: the breadcrumb and text),
 * so a section whose words differ by one character in another release stays apart: that difference
 * may be the answer.
 */

export interface Ordered {
  chunk_id: string
}

/**
 * The first `k` of `order` with copies folded: each kept item with the ids of its copies found
 * anywhere in `order` (best first). An item without a hash is never folded.
 */
export function foldSameText<T extends Ordered>(
  order: readonly T[],
  hashOf: ReadonlyMap<string, string>,
  k: number,
): { item: T; same: string[] }[] {
  const kept: { item: T; same: string[] }[] = []
  const byHash = new Map<string, { item: T; same: string[] }>()
  for (const item of order) {
    const hash = hashOf.get(item.chunk_id)
    const first = hash === undefined ? undefined : byHash.get(hash)
    if (first) {
      first.same.push(item.chunk_id)
      continue
    }
    if (kept.length >= k) continue
    const entry = { item, same: [] as string[] }
    kept.push(entry)
    if (hash !== undefined) byHash.set(hash, entry)
  }
  return kept
}
