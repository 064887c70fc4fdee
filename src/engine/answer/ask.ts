import type { Db } from '../store/db'
import {
  resolveSearchScope,
  searchModelsFor,
  searchWithModels,
  type LoadedModel,
  type QueryEmbedder,
  type RerankerLike,
  type SearchModels,
} from '../retrieve/search'
import { searchText } from '../retrieve/scope'
import type { AskRequest, AskResult } from '../../shared/answer'
import type { AskContext } from './context'
import { keywordEvidence } from './gate'
import { runAsk, type AskOptions } from './pipeline'
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

/** What answering needs of the engine: its store and its models, each loaded on first use. */
export interface AskEngine {
  readonly db: Db
  /** Keep no trace, thread or cached answer (a read-only engine). */
  readonly readOnly?: boolean
  chatModel(): Promise<LoadedModel<ChatModelLike>>
  reranker(): Promise<LoadedModel<RerankerLike & { id: string }>>
  embedder(): Promise<LoadedModel<QueryEmbedder & { id: string }>>
}

/** Wires the pipeline to an engine: its store, scope resolution, retrievers and models. */
export async function askWithEngine(engine: AskEngine, request: AskRequest, opts: EngineAskOptions = {}): Promise<AskResult> {
  const { chat: chatOverride, reranker: rerankerOverride, ...askOpts } = opts
  const wantsModel = !request.searchOnly && chatOverride === undefined
  const loaded = wantsModel
    ? await engine.chatModel()
    : { model: chatOverride ?? null, problem: chatOverride === null ? 'search-only was requested' : null }
  const models: SearchModels = {
    embedder: () => engine.embedder(),
    reranker: async () =>
      rerankerOverride !== undefined
        ? { model: rerankerOverride, problem: rerankerOverride ? null : 'the reranker was switched off for this run' }
        : await engine.reranker(),
  }
  const ctx: AskContext = {
    resolveScope: (scope, question) => resolveSearchScope(engine.db, scope, question),
    retrieve: async (query, scope, o) => {
      const { result, rerankerId, embedderId } = await searchWithModels(engine.db, models, query, scope, o)
      return { ...result, rerankerId, embedderId }
    },
    // The gate weighs the same words retrieval searched: version mentions are scope, not content.
    keywordEvidence: (query, scope, top) => keywordEvidence(engine.db, searchText(query, scope), scope.collections, top),
    retrievalModels: async (o) => {
      const { embedder, reranker } = await searchModelsFor(models, o)
      return { embedder: embedder.model?.id ?? null, reranker: reranker.model?.id ?? null }
    },
    chat: request.searchOnly ? null : loaded.model,
    chatProblem: loaded.problem,
    store: new AnswerStore(engine.db, { readOnly: engine.readOnly }),
  }
  return runAsk(ctx, request, askOpts)
}
