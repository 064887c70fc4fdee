import type { AskEvent } from '../../shared/answer'
import type { KeywordEvidence, RetrievalTrace } from '../../shared/trace'
import type { SearchMode, SearchResult } from '../../shared/search'
import type { ResolvedScope } from '../retrieve/scope'
import type { AnswerStore } from './store'
import type { ReleaseCheck } from './release'
import type { Bridge } from '../retrieve/bridge'
import type { Similarity } from './support'
import type { Closeness, CloseRule } from './close-sentences'
import type { ChatModel } from '../core/model-ports'

/**
 * What the answer pipeline is given: injected dependencies (retrieval, the chat model, the store)
 * so every branch can be driven by a scripted model in tests, and the options of one question.
 */

export interface RetrievalOutcome extends SearchResult {
  trace: RetrievalTrace
  /** Models that actually ran (null when the stage did not run). */
  rerankerId: string | null
  embedderId: string | null
}

export interface AskContext {
  /** With no version chosen ('auto'), versions named in `question` are searched (retrieve/scope.ts). */
  resolveScope(scope: { collections: string[]; version: string }, question: string): Promise<ResolvedScope>
  retrieve(
    query: string,
    scope: ResolvedScope,
    opts: { k: number; mode: SearchMode; rerank: boolean; signal?: AbortSignal },
  ): Promise<RetrievalOutcome>
  keywordEvidence(query: string, scope: ResolvedScope, topKeywordChunkId: string | null): Promise<KeywordEvidence>
  /** The release rules before the model (release.ts), with the words retrieval bridged (retrieve/bridge.ts). */
  checkRelease(scope: ResolvedScope, question: string, bridged?: readonly Bridge[]): Promise<ReleaseCheck>
  /** Best cosine of an answer sentence to passage sentences, by the embedding model; absent without one. */
  similarity?: Similarity
  /** Cosine of each sentence to the question, by the same embedding model; absent without one. */
  closeness?: Closeness
  /** The floor `similarity` must reach for the embedding model in use (support.ts); null: no floor. */
  similarityFloor: number | null
  /** Ids of the retrieval models a search with these options would use (part of the cache key). */
  retrievalModels(opts: { mode: SearchMode; rerank: boolean }): Promise<{ embedder: string | null; reranker: string | null }>
  /** null: no language model installed (or it failed to load): search-only mode. */
  chat: ChatModel | null
  chatProblem: string | null
  store: AnswerStore
}

export interface AskOptions {
  /** Passages given to the model (the reranked top). */
  passages?: number
  /** Most tokens of each passage's text the model reads: the rest is cut to what bears on the question (trim.ts). */
  passageTokens?: number
  mode?: SearchMode
  rerank?: boolean
  /** Apply the relevance gate (eval configurations switch it off to measure what it adds). */
  gate?: boolean
  /** Replaces the per-model threshold from gate.ts (calibration runs, tests). */
  gateThreshold?: number | null
  /**
   * The share of the question's terms a passage sentence must hold to be the answer when the
   * model's does not stand (answer/key-sentences.ts QUOTE_SHARE); null: never. For measuring variants.
   */
  quoteShare?: number | null
  /** The choices of the rule that copies sentences close in meaning to the question (close-sentences.ts). For measuring variants. */
  closeRule?: CloseRule
  /** One corrective retry when verification fails. */
  correctiveRetry?: boolean
  /** One query-rewrite retry when the gate finds nothing. Off by default: measured, the rewrite loop fixed nothing. */
  queryRewriteRetry?: boolean
  useCache?: boolean
  /** Reply budget of the answer model. */
  maxAnswerTokens?: number
  onEvent?: (e: AskEvent) => void
  signal?: AbortSignal
}

export const DEFAULT_ASK_OPTIONS = {
  passages: 6,
  passageTokens: 140,
  mode: 'hybrid' as SearchMode,
  rerank: true,
  gate: true,
  correctiveRetry: true,
  queryRewriteRetry: false,
  useCache: true,
  maxAnswerTokens: 700,
}

/** The options of one question with every default filled in. */
export type ResolvedAskOptions = typeof DEFAULT_ASK_OPTIONS & Omit<AskOptions, keyof typeof DEFAULT_ASK_OPTIONS>
