/**
 * Reciprocal rank fusion keyed on the stored chunk id, never on text: identical text exists in
 * several versions of the same docs, and fusing by text would merge them and lose the version
 * (seed 000). Each retriever's rank is kept for the trace.
 */
export const RRF_K = 60

export interface Ranked {
  chunk_id: string
  rank: number
}

export interface Fused {
  chunk_id: string
  rrf: number
  ranks: Record<string, number>
}

export function fuseRanks(rankings: Record<string, Ranked[]>, k: number = RRF_K): Fused[] {
  const byId = new Map<string, Fused>()
  for (const [name, list] of Object.entries(rankings)) {
    for (const item of list) {
      const entry = byId.get(item.chunk_id) ?? { chunk_id: item.chunk_id, rrf: 0, ranks: {} }
      // A retriever that returns the same id twice counts once, at its best rank.
      if (entry.ranks[name] !== undefined) continue
      entry.rrf += 1 / (k + item.rank)
      entry.ranks[name] = item.rank
      byId.set(item.chunk_id, entry)
    }
  }
  return [...byId.values()].sort((a, b) => b.rrf - a.rrf || a.chunk_id.localeCompare(b.chunk_id))
}
