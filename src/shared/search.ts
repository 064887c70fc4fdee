import { z } from 'zod'
import { PassageText, SamePlace } from './passage'

/**
 * Data shapes that cross process boundaries (engine <-> CLI, MCP, renderer). Plain data only:
 * no Node, Electron or DOM imports here, so every process can load this file.
 */

/**
 * Which versions to search. 'auto' is "not chosen": a version named in the question is searched
 * (retrieve/version-mention.ts), else every version. 'all', 'latest' or a version name are explicit
 * choices (a picker value, --version, the MCP `version` argument) and win over the question.
 */
export const VersionSelector = z.union([z.literal('auto'), z.literal('all'), z.literal('latest'), z.string().min(1).max(64)])
export type VersionSelector = z.infer<typeof VersionSelector>

export const SearchMode = z.enum(['keyword', 'vector', 'hybrid'])
export type SearchMode = z.infer<typeof SearchMode>

/** Where to search: some collections (empty = all) and a version selector applied to every retriever alike. */
export const Scope = z.object({
  collections: z.array(z.string().min(1).max(200)).max(100).default([]),
  version: VersionSelector.default('auto'),
})
export type Scope = z.infer<typeof Scope>

/** Where the versions searched came from: the person's choice, the question's words, or the default (all). */
export const ScopeSource = z.enum(['chosen', 'named_in_question', 'default'])
export type ScopeSource = z.infer<typeof ScopeSource>

/** The scope a search actually used, for front ends to show: "Searching 2024-11-05, named in your question". */
export const ScopeInfo = z.object({
  /** In words, e.g. "2024-11-05, named in your question" or "all versions". */
  label: z.string(),
  source: ScopeSource,
  collections: z.array(z.string()),
  /** Versions searched per collection (unversioned documents are always searched too). */
  versions: z.record(z.string(), z.union([z.array(z.string()), z.literal('all')])),
  /** The words of the question that named the versions ("2024-11-05 spec", "the latest release"). */
  named: z.array(z.string()),
  /** The question asks what changed or when: change-log sections were ranked first. */
  change_log_first: z.boolean(),
})
export type ScopeInfo = z.infer<typeof ScopeInfo>

/** Each score under its true name; null where that stage did not run or did not return the chunk. */
export const HitScores = z.object({
  keyword_rank: z.number().int().nullable(),
  vector_rank: z.number().int().nullable(),
  /** BM25 score of the keyword retriever (not normalised). */
  bm25: z.number().nullable(),
  /** Reciprocal-rank-fusion score, sum of 1/(60 + rank) over retrievers. */
  rrf: z.number().nullable(),
  /** Cosine similarity between query and chunk embeddings, in [-1, 1]. */
  cosine: z.number().nullable(),
  /** Raw cross-encoder score (a logit, not a probability). */
  reranker: z.number().nullable(),
})
export type HitScores = z.infer<typeof HitScores>

/** A passage a search found, with every score it got. */
export const SearchHit = PassageText.extend({
  scores: HitScores,
  /** The same section, word for word, elsewhere (other releases' copies), best first; absent when there is none. */
  same_in: z.array(SamePlace).max(200).optional(),
})
export type SearchHit = z.infer<typeof SearchHit>

export const SearchResult = z.object({
  mode: SearchMode,
  rerank: z.boolean(),
  /** True when a stage could not run (no embedding model, reranker missing) and results came from what was left. */
  degraded: z.boolean(),
  /** Why degraded, in words a person understands. */
  notices: z.array(z.string()),
  results: z.array(SearchHit),
  timings_ms: z.record(z.string(), z.number()),
})
export type SearchResult = z.infer<typeof SearchResult>
