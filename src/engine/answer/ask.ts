import type { Db } from '../store/db'
import { collectionSlug } from '../store/ids'
import { resolveScope } from '../retrieve/scope'
import { searchChunks, type QueryEmbedder, type RerankerLike } from '../retrieve/search'
import type { AskRequest, AskResult } from '../../shared/answer'
import { keywordEvidence } from './gate'
import { runAsk, type AskContext, type AskOptions } from './pipeline'
import { AnswerStore } from './store'
import type { ChatModelLike } from './types'

export interface EngineAskOptions extends AskOptions {
  /**
   * Use this chat model instead of the installed one (tests drive the pipeline with a scripted
   * model; evals compare configurations). `null` forces search-only mode.
   */
  chat?: ChatModelLike | null
  /** Use this reranker instead of the installed one; `null` runs without one (degraded gate). */
  reranker?: RerankerLike | null
}

interface Loaded<T> {
  model: T | null
  problem: string | null
}

/** What answering needs of the engine: its store and its models, each loaded on first use. */
export interface AskEngine {
  readonly db: Db
  chatModel(): Promise<Loaded<ChatModelLike>>
  reranker(): Promise<Loaded<RerankerLike & { id: string }>>
  embedder(): Promise<Loaded<QueryEmbedder & { id: string }>>
}

/** Wires the pipeline to an engine: its store, scope resolution, retrievers and models. */
export async function askWithEngine(engine: AskEngine, request: AskRequest, opts: EngineAskOptions = {}): Promise<AskResult> {
  const { chat: chatOverride, reranker: rerankerOverride, ...askOpts } = opts
  const wantsModel = !request.searchOnly && chatOverride === undefined
  const loaded = wantsModel
    ? await engine.chatModel()
    : { model: chatOverride ?? null, problem: chatOverride === null ? 'search-only was requested' : null }
  const rerankerFor = async (rerank: boolean) =>
    !rerank
      ? { model: null, problem: null }
      : rerankerOverride !== undefined
        ? { model: rerankerOverride, problem: rerankerOverride ? null : 'the reranker was switched off for this run' }
        : await engine.reranker()
  const embedderFor = async (mode: string) => (mode !== 'keyword' ? await engine.embedder() : { model: null, problem: null })
  const ctx: AskContext = {
    resolveScope: (scope) =>
      resolveScope(engine.db, { collections: scope.collections.map((c) => collectionSlug(c)), version: scope.version }),
    retrieve: async (query, scope, o) => {
      const emb = await embedderFor(o.mode)
      const rr = await rerankerFor(o.rerank)
      const res = await searchChunks(
        { db: engine.db, embedder: emb.model, reranker: rr.model, embedderProblem: emb.problem, rerankerProblem: rr.problem },
        query,
        scope,
        { mode: o.mode, rerank: o.rerank, k: o.k, ...(o.signal ? { signal: o.signal } : {}) },
      )
      return {
        ...res,
        rerankerId: res.trace.reranked ? (rr.model?.id ?? null) : null,
        embedderId: res.trace.vector ? (emb.model?.id ?? null) : null,
      }
    },
    keywordEvidence: (query, scope, top) => keywordEvidence(engine.db, query, scope.collections, top),
    retrievalModels: async (o) => ({
      embedder: (await embedderFor(o.mode)).model?.id ?? null,
      reranker: (await rerankerFor(o.rerank)).model?.id ?? null,
    }),
    chat: request.searchOnly ? null : loaded.model,
    chatProblem: loaded.problem,
    store: new AnswerStore(engine.db),
  }
  return runAsk(ctx, request, askOpts)
}
