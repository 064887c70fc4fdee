import type { ResolvedScope } from '../../retrieve/scope'
import { AnswerStore, type CacheEntry, type IndexState } from '../store'
import type { AskRun } from './run'

/** Where a verified answer would be cached; null when caching is off for this question. */
export interface CacheSlot {
  key: string
  state: IndexState
}

/**
 * Verified answers to the same question in the same scope are reused while the index is
 * unchanged. The key covers everything that changes an answer: the question, the scope, the
 * models and the pipeline's options.
 */
export async function lookUpCache(
  run: AskRun,
  scope: ResolvedScope,
  searchOnly: boolean,
): Promise<{ slot: CacheSlot | null; hit: CacheEntry | null }> {
  const { ctx, opts, trace } = run
  if (!opts.useCache || searchOnly) return { slot: null, hit: null }
  run.stage('cache', 'Checking for a recent answer to the same question')
  const state = await ctx.store.indexState(scope.collections)
  const dropped = await ctx.store.dropStale(state)
  const key = AnswerStore.cacheKey({
    access: await ctx.store.access(),
    question: run.standalone,
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
  trace.cache = { key, index_state: state, dropped_stale: dropped, hit: !!hit, from_trace: hit?.trace_id ?? null }
  return { slot: { key, state }, hit }
}
