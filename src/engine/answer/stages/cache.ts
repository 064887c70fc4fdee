import type { CacheTrace } from '../../../shared/trace'
import type { ResolvedScope } from '../../retrieve/scope'
import { AnswerStore, type CacheEntry, type IndexState } from '../store'
import type { StageEnv } from './run'

/** Where a verified answer would be cached; null when caching is off for this question. */
export interface CacheSlot {
  key: string
  state: IndexState
}

/** The cache's answer to this question, if any, and where a new answer goes (all null when caching is off). */
export interface CacheLookup {
  slot: CacheSlot | null
  hit: CacheEntry | null
  trace: CacheTrace | null
}

/**
 * Verified answers to the same question in the same scope are reused while the index is
 * unchanged. The key covers everything that changes an answer: the question, the scope, the
 * models and the pipeline's options.
 */
export async function lookUpCache(
  env: StageEnv,
  standalone: string,
  scope: ResolvedScope,
  searchOnly: boolean,
): Promise<CacheLookup> {
  const { ctx, opts } = env
  if (!opts.useCache || searchOnly) return { slot: null, hit: null, trace: null }
  env.stage('cache', 'Checking for a recent answer to the same question')
  const state = await ctx.store.indexState(scope.collections)
  const dropped = await ctx.store.dropStale(state)
  const key = AnswerStore.cacheKey({
    access: await ctx.store.access(),
    question: standalone,
    scope: { collections: [...scope.collections].sort(), versions: scope.versions },
    pipeline: {
      llm: ctx.chat?.id,
      ...(await ctx.retrievalModels({ mode: opts.mode, rerank: opts.rerank })),
      passages: opts.passages,
      mode: opts.mode,
      rerank: opts.rerank,
      gate: opts.gate,
      threshold: opts.gateThreshold ?? null,
      retry: opts.correctiveRetry,
    },
  })
  const hit = await ctx.store.cacheGet(key, state)
  const trace = { key, index_state: state, dropped_stale: dropped, hit: !!hit, from_trace: hit?.trace_id ?? null }
  return { slot: { key, state }, hit, trace }
}
