import type { Db } from '../store/db'
import type { ChatModel, Embedder, Loaded, Reranker } from '../core/model-ports'
import { resolveSearchScope, searchModelsFor, searchWithModels, type SearchModels } from '../retrieve/search'
import { searchText } from '../retrieve/scope'
import type { AskRequest, AskResult } from '../../shared/answer'
import type { AskContext } from './context'
import { keywordEvidence } from './gate'
import { ANSWER_SYSTEM_PROMPT } from './prompt'
import { AUTHORITATIVE_KINDS, checkRelease } from './release'
import { similarityFloorFor, type Similarity } from './support'
import type { Closeness } from './close-sentences'
import { runAsk, type AskOptions } from './pipeline'
import { AnswerStore } from './store'

export interface EngineAskOptions extends AskOptions {
  /**
   * Use this chat model instead of the installed one (tests drive the pipeline with a scripted
   * model; evals compare configurations). `null` forces search-only mode.
   */
  chat?: ChatModel | null
  /** Use this reranker instead of the installed one; `null` runs without one (degraded gate). */
  reranker?: Reranker | null
}

/** The models answering uses, each loaded on first use and shared (the engine's model cache, models/loaded.ts). */
export interface AskModels {
  chatModel(): Promise<Loaded<ChatModel>>
  reranker(): Promise<Loaded<Reranker>>
  /** The embedding model: questions for retrieval, and sentences for the support check. */
  embedder(): Promise<Loaded<Embedder>>
}

/**
 * What answering needs of the engine: its store and its model cache. Not the engine itself: the
 * pipeline's dependencies call the domain functions (retrieve/, release, the answer store) with the
 * db, never back into the engine.
 */
export interface AskEngine {
  readonly db: Db
  /** Keep no trace, thread or cached answer (a read-only engine). */
  readonly readOnly?: boolean
  readonly models: AskModels
}

/** Wires the pipeline to an engine: its store, scope resolution, retrievers and models. */
export async function askWithEngine(engine: AskEngine, request: AskRequest, opts: EngineAskOptions = {}): Promise<AskResult> {
  const { chat: chatOverride, reranker: rerankerOverride, ...askOpts } = opts
  const wantsModel = !request.searchOnly && chatOverride === undefined
  const loaded = wantsModel
    ? await engine.models.chatModel()
    : { model: chatOverride ?? null, problem: chatOverride === null ? 'search-only was requested' : null }
  // Read the answer instructions while the question is searched: every later answer reuses them.
  if (wantsModel && loaded.model?.warm) void loaded.model.warm(ANSWER_SYSTEM_PROMPT).catch(() => undefined)
  const models: SearchModels = {
    embedder: () => engine.models.embedder(),
    reranker: async () =>
      rerankerOverride !== undefined
        ? { model: rerankerOverride, problem: rerankerOverride ? null : 'the reranker was switched off for this run' }
        : await engine.models.reranker(),
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
    checkRelease: (scope, question, bridged) => checkRelease(engine.db, scope, question, AUTHORITATIVE_KINDS, bridged),
    ...(await sentenceSimilarity(engine.models, !request.searchOnly && loaded.model !== null)),
    chat: request.searchOnly ? null : loaded.model,
    chatProblem: loaded.problem,
    store: new AnswerStore(engine.db, { readOnly: engine.readOnly }),
  }
  return runAsk(ctx, request, askOpts)
}

/**
 * The embedding model's view of how close an answer sentence is to the passage sentences it
 * cites (the last of the support checks, support.ts), with the floor for that model, and how close
 * a passage sentence is to the question (close-sentences.ts). Passage sentences are embedded once
 * per question.
 */
async function sentenceSimilarity(
  models: AskModels,
  wanted: boolean,
): Promise<{ similarity?: Similarity; closeness?: Closeness; similarityFloor: number | null }> {
  if (!wanted) return { similarityFloor: null }
  const { model } = await models.embedder()
  const floor = similarityFloorFor(model?.id ?? null)
  if (!model || floor === null) return { similarityFloor: null }
  const cache = new Map<string, Float32Array>()
  const embed = async (texts: string[]): Promise<Float32Array[]> => {
    const missing = [...new Set(texts.filter((t) => !cache.has(t)))]
    if (missing.length) {
      const vectors = await model.embedDocuments(missing)
      missing.forEach((t, i) => cache.set(t, vectors[i]!))
    }
    return texts.map((t) => cache.get(t)!)
  }
  const dot = (a: Float32Array, b: Float32Array) => {
    let d = 0
    for (let i = 0; i < a.length; i++) d += a[i]! * b[i]!
    return d
  }
  const similarity: Similarity = async (sentence, units) => {
    if (units.length === 0) return null
    const [s, ...us] = await embed([sentence, ...units])
    let best = -1
    for (const u of us) best = Math.max(best, dot(s!, u))
    return best
  }
  // The question is embedded as a query (a model with a query instruction gets it), the sentences as documents.
  const closeness: Closeness = {
    cosines: async (question, sentences) => {
      const q = await model.embedQuery(question)
      return (await embed(sentences)).map((v) => dot(q, v))
    },
    floor,
  }
  return { similarity, closeness, similarityFloor: floor }
}
