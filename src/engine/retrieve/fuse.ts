import { queryTerms } from '../../shared/excerpt'

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

/**
 * Words that ask about change rather than name what changed ("what happened to tasks after they
 * were first introduced?": tasks is the subject), stemmed as queryTerms stems.
 */
export const CHANGE_WORDS: ReadonlySet<string> = new Set(
  queryTerms(
    `happen happened happens become became change changed changes add added adds introduce introduced
    remove removed removes deprecate deprecated replace replaced rename renamed drop dropped first
    later since after before new release released version versions evolve evolved history like way
    compare compared show showed appear appeared arrive arrived came come went gone away`,
  ),
)

/** The words of a change question that name what changed: "tasks" in "what happened to tasks?". */
export function changeSubject(question: string): string[] {
  return queryTerms(question).filter((t) => !CHANGE_WORDS.has(t))
}

/**
 * The change-log sections among these chunks that can tell the history asked about: those whose
 * heading or text mentions a word of the subject. A change log's introduction ("This document
 * lists changes made since the previous revision") or a release's list of schema changes is close
 * to "how has elicitation changed?" by its words about change, and says nothing of elicitation;
 * ranked first, it pushed out the sections that do. When none mentions the subject, or the question
 * names none ("what changed in 2025-06-18?"), every change-log section.
 */
export function changeLogSections(
  chunks: readonly { chunk_id: string; path: string; heading: string; kind: string | null; text: string }[],
  subject: readonly string[],
): Set<string> {
  const logs = chunks.filter(isChangeLog)
  const wanted = new Set(subject)
  const about = logs.filter((c) => queryTerms(`${c.heading}\n${c.text}`).some((t) => wanted.has(t)))
  return new Set((about.length ? about : logs).map((c) => c.chunk_id))
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

/** A keyword or vector list as the retrievers return it, best first, with the score it was ranked by. */
export interface ScoredList {
  chunk_id: string
  score: number
}

/**
 * How hybrid search joins the keyword and vector lists (ADRs 0014 and 0017). Every rule keys on chunk id and
 * returns the fused list best first; `rrf` in the result holds the rule's own fused score.
 *  - rrf: equal-weight reciprocal rank fusion (ADR 0001), kept for comparison;
 *  - weighted_rrf: RRF with the keyword list weighted `exact_keyword_weight` when the question holds
 *    an exact token (error code, method name), 1 otherwise;
 *  - convex: min-max normalised scores of each list mixed, `keyword_share` of keyword and the rest
 *    vector (a chunk missing from a list gets 0 from it);
 *  - vector_cutoff: RRF over the keyword list and the vector list kept only down to `delta` below
 *    its best cosine;
 *  - keyword_led: keyword's first `lead` results first, in keyword order, then the rest by RRF;
 *  - agreed_first: RRF, except that keyword's first result goes first when the vector list also
 *    has it in its first `depth` (both retrievers agree on it).
 */
export type FusionRule =
  | { kind: 'rrf'; k: number }
  | { kind: 'weighted_rrf'; k: number; exact_keyword_weight: number }
  | { kind: 'convex'; keyword_share: number; exact_extra: number }
  | { kind: 'vector_cutoff'; k: number; delta: number }
  | { kind: 'keyword_led'; k: number; lead: number }
  | { kind: 'agreed_first'; k: number; depth: number }

export interface FusionInput {
  keyword: ScoredList[] | null
  vector: ScoredList[] | null
  /** Whether the search text holds an exact token (exact-terms.ts). */
  exact: boolean
}

function ranksOf(list: ScoredList[]): Ranked[] {
  return list.map((x, i) => ({ chunk_id: x.chunk_id, rank: i + 1 }))
}

/** Min-max normalised to [0, 1] (a list whose scores are all equal scores 1 throughout). */
export function minMax(list: ScoredList[]): Map<string, number> {
  const out = new Map<string, number>()
  if (list.length === 0) return out
  let lo = Infinity
  let hi = -Infinity
  for (const x of list) {
    lo = Math.min(lo, x.score)
    hi = Math.max(hi, x.score)
  }
  for (const x of list) if (!out.has(x.chunk_id)) out.set(x.chunk_id, hi > lo ? (x.score - lo) / (hi - lo) : 1)
  return out
}

function weightedRanks(lists: [string, Ranked[], number][], k: number): Fused[] {
  const byId = new Map<string, Fused>()
  for (const [name, list, weight] of lists)
    for (const item of list) {
      const entry = byId.get(item.chunk_id) ?? { chunk_id: item.chunk_id, rrf: 0, ranks: {} }
      if (entry.ranks[name] !== undefined) continue
      entry.rrf += weight / (k + item.rank)
      entry.ranks[name] = item.rank
      byId.set(item.chunk_id, entry)
    }
  return [...byId.values()].sort((a, b) => b.rrf - a.rrf || a.chunk_id.localeCompare(b.chunk_id))
}

/** `fused` with the chunks of `first` moved to its head, in the order `first` gives them. */
function promote(fused: Fused[], first: string[]): Fused[] {
  if (first.length === 0) return fused
  const head = new Set(first)
  const byId = new Map(fused.map((f) => [f.chunk_id, f]))
  return [...first.map((id) => byId.get(id)!), ...fused.filter((f) => !head.has(f.chunk_id))]
}

/** The two lists joined by `rule`; with only one list, that list in its own order. */
export function fuseLists(rule: FusionRule, input: FusionInput): Fused[] {
  const keyword = input.keyword ? ranksOf(input.keyword) : null
  const vector = input.vector ? ranksOf(input.vector) : null
  const named: [string, Ranked[]][] = []
  if (keyword) named.push(['keyword', keyword])
  if (vector) named.push(['vector', vector])
  // One list alone keeps its own order, whatever the rule (its score is then its RRF share).
  if (named.length < 2) return fuseRanks(Object.fromEntries(named), rule.kind === 'convex' ? RRF_K : rule.k)
  switch (rule.kind) {
    case 'rrf':
      return fuseRanks(Object.fromEntries(named), rule.k)
    case 'weighted_rrf':
      return weightedRanks(
        named.map(([n, l]) => [n, l, n === 'keyword' && input.exact ? rule.exact_keyword_weight : 1]),
        rule.k,
      )
    case 'vector_cutoff': {
      const best = input.vector?.[0]?.score ?? 0
      const kept = vector?.filter((_, i) => input.vector![i]!.score >= best - rule.delta) ?? null
      const lists: Record<string, Ranked[]> = {}
      if (keyword) lists['keyword'] = keyword
      if (kept) lists['vector'] = kept
      return fuseRanks(lists, rule.k)
    }
    case 'keyword_led':
    case 'agreed_first': {
      const fused = fuseRanks(Object.fromEntries(named), rule.k)
      const lead =
        rule.kind === 'keyword_led'
          ? keyword!.slice(0, rule.lead).map((x) => x.chunk_id)
          : keyword!
              .slice(0, 1)
              .filter((x) => vector!.slice(0, rule.depth).some((v) => v.chunk_id === x.chunk_id))
              .map((x) => x.chunk_id)
      return promote(fused, lead)
    }
    case 'convex': {
      const share = input.exact ? Math.min(1, rule.keyword_share + rule.exact_extra) : rule.keyword_share
      const nk = input.keyword ? minMax(input.keyword) : new Map<string, number>()
      const nv = input.vector ? minMax(input.vector) : new Map<string, number>()
      const a = share
      const byId = new Map<string, Fused>()
      for (const [name, list] of named)
        for (const item of list) {
          const entry = byId.get(item.chunk_id) ?? { chunk_id: item.chunk_id, rrf: 0, ranks: {} }
          if (entry.ranks[name] !== undefined) continue
          entry.ranks[name] = item.rank
          byId.set(item.chunk_id, entry)
        }
      for (const e of byId.values()) e.rrf = a * (nk.get(e.chunk_id) ?? 0) + (1 - a) * (nv.get(e.chunk_id) ?? 0)
      return [...byId.values()].sort((x, y) => y.rrf - x.rrf || x.chunk_id.localeCompare(y.chunk_id))
    }
  }
}

/**
 * The fused list of a change question with its change-log ranking (`changeLogRanking` over the
 * deeper lists fused by the same rule) joined in. Equal RRF keeps its three-list form (keyword,
 * vector, change log: ADR 0001); any other rule's fused order joins the change-log ranking as two
 * RRF lists, so the best change-log section gains what a first place gives and rises to the top.
 */
export function withChangeLog(rule: FusionRule, input: FusionInput, fused: Fused[], boost: Ranked[]): Fused[] {
  if (boost.length === 0) return fused
  if (rule.kind === 'rrf') {
    const lists: Record<string, Ranked[]> = {}
    if (input.keyword) lists['keyword'] = ranksOf(input.keyword)
    if (input.vector) lists['vector'] = ranksOf(input.vector)
    return fuseRanks({ ...lists, [CHANGE_LOG_RANKING]: boost }, rule.k)
  }
  const base = new Map(fused.map((f) => [f.chunk_id, f]))
  return fuseRanks({ fused: fused.map((f, i) => ({ chunk_id: f.chunk_id, rank: i + 1 })), [CHANGE_LOG_RANKING]: boost }).map(
    (f) => ({
      chunk_id: f.chunk_id,
      rrf: f.rrf,
      ranks: {
        ...(base.get(f.chunk_id)?.ranks ?? {}),
        ...(f.ranks[CHANGE_LOG_RANKING] ? { [CHANGE_LOG_RANKING]: f.ranks[CHANGE_LOG_RANKING] } : {}),
      },
    }),
  )
}

/**
 * The rule hybrid search uses (ADR 0017, superseding 0014): keyword's first result first, then
 * equal RRF. Measured both ways round on the halves of six golden sets with two embedders, it fell
 * below the better of keyword and vector least often of the rules on ranks alone, keeping keyword's
 * first places and the vector list's extra recall.
 */
export const HYBRID_FUSION: FusionRule = { kind: 'keyword_led', k: RRF_K, lead: 1 }
