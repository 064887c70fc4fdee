/**
 * Reciprocal rank fusion keyed on the stored chunk id, never on text: identical text exists in
 * several versions of the same docs, and fusing by text would merge them and lose the version
 * (docs/lessons.md, "Hybrid retrieval and exact tokens"). Each retriever's rank is kept for the trace.
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

/**
 * Change-log sections, recognised generically: a document whose path names a change log, release
 * notes, what's new or a history (CHANGELOG.md, release-notes/, docs/whats-new.html, spec/changelog.mdx),
 * or whose title or source kind does.
 */
const CHANGE_LOG_NAME =
  /(?:^|[\s/_.-])(?:change[\s_-]?logs?|changes|release[\s_-]?notes|what'?s[\s_-]?new|history|news)(?:$|[\s/_.-])/i

export function isChangeLog(chunk: { path: string; heading: string; kind: string | null }): boolean {
  const title = chunk.heading.split(' > ')[0] ?? ''
  return CHANGE_LOG_NAME.test(chunk.path) || CHANGE_LOG_NAME.test(title) || CHANGE_LOG_NAME.test(chunk.kind ?? '')
}

/** Name of the pseudo-retriever that ranks change-log sections first (kept in the fused ranks for the trace). */
export const CHANGE_LOG_RANKING = 'change_log'

/**
 * For questions about what changed or when (retrieve/version-mention.ts): the change-log
 * sections among the candidates, in fused order, as one more ranking for RRF. The best of them
 * gains what a first place in another retriever gives, so it rises to the top of a change
 * question; the others follow by their own evidence. Content sections still compete: a change
 * log that neither retriever found is not added.
 */
export function changeLogRanking(fused: Fused[], changeLog: ReadonlySet<string>): Ranked[] {
  return fused.filter((f) => changeLog.has(f.chunk_id)).map((f, i) => ({ chunk_id: f.chunk_id, rank: i + 1 }))
}
