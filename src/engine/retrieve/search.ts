import type { RetrievalTrace } from '../../shared/trace'
import type { Scope, SearchHit, SearchMode, SearchResult } from '../../shared/search'
import { joinWords } from '../../shared/words'
import type { Loaded, QueryEmbedder, Reranker } from '../core/model-ports'
import type { Queryable } from '../store/db'
import { collectionSlug } from '../store/ids'
import { chunksById, PASSAGE_FIELDS, toPassage, type ChunkRow } from '../store/passages'
import { round } from '../core/numbers'
import { retrieveKeyword, type KeywordHit } from './keyword'
import { retrieveVector, type VectorHit } from './vector'
import { extractExactTerms } from '../core/exact-terms'
import {
  changeLogRanking,
  changeLogSections,
  changeSubject,
  fuseLists,
  HYBRID_FUSION,
  isChangeLog,
  withChangeLog,
  type Fused,
  type FusionInput,
  type FusionRule,
} from './fuse'
import { resolveScope, searchText, type ResolvedScope } from './scope'
import { foldSameText } from './same-text'
import { bridgeWords, canBridge, withBridges, type Bridge } from './bridge'

export interface SearchOptions {
  mode: SearchMode
  rerank: boolean
  k: number
  /** Candidates taken from each retriever (same for both, so neither dominates fusion by length). */
  candidates?: number
  /** How many fused candidates the cross-encoder reads. */
  rerankCandidates?: number
  /** How the keyword and vector lists are joined (default HYBRID_FUSION, ADR 0017; equal RRF for comparison). */
  fusion?: FusionRule
  signal?: AbortSignal
}

export interface SearchContext {
  db: Queryable
  embedder: QueryEmbedder | null
  reranker: Reranker | null
  /** Why the embedder or reranker is missing, for the notice shown to the person. */
  embedderProblem?: string | null
  rerankerProblem?: string | null
}

export const DEFAULT_CANDIDATES = 50
export const DEFAULT_RERANK_CANDIDATES = 30
/** How much deeper than `candidates` a change question looks for change-log sections. */
export const CHANGE_LOG_DEPTH = 4

/** Where a search gets its models (the engine loads each once; answering may override the reranker). */
export interface SearchModels {
  embedder(): Promise<Loaded<QueryEmbedder>>
  reranker(): Promise<Loaded<Reranker>>
}

const NO_MODEL = { model: null, problem: null }

/**
 * A scope as people and front ends give it (collection names, a version selector), resolved
 * against the store. With no version chosen ('auto'), versions named in `question` are searched.
 */
export function resolveSearchScope(db: Queryable, scope: Partial<Scope>, question = ''): Promise<ResolvedScope> {
  return resolveScope(
    db,
    {
      collections: (scope.collections ?? []).map((c) => collectionSlug(c)),
      version: scope.version ?? 'auto',
    },
    question,
  )
}

/**
 * The models a search with these options uses: the embedder unless it is keyword-only, the
 * reranker when it reranks. Loading them here keeps search and ask from disagreeing about it.
 */
export async function searchModelsFor(
  models: SearchModels,
  opts: { mode: SearchMode; rerank: boolean },
): Promise<{ embedder: Loaded<QueryEmbedder>; reranker: Loaded<Reranker> }> {
  return {
    embedder: opts.mode !== 'keyword' ? await models.embedder() : NO_MODEL,
    reranker: opts.rerank ? await models.reranker() : NO_MODEL,
  }
}

/** Searches a resolved scope with the models the options call for, and reports which of them actually ran. */
export async function searchWithModels(
  db: Queryable,
  models: SearchModels,
  query: string,
  scope: ResolvedScope,
  opts: SearchOptions,
): Promise<{ result: SearchResult & { trace: RetrievalTrace }; embedderId: string | null; rerankerId: string | null }> {
  const { embedder, reranker } = await searchModelsFor(models, opts)
  const result = await searchChunks(
    {
      db,
      embedder: embedder.model,
      reranker: reranker.model,
      embedderProblem: embedder.problem,
      rerankerProblem: reranker.problem,
    },
    query,
    scope,
    opts,
  )
  return {
    result,
    embedderId: result.trace.vector ? (embedder.model?.id ?? null) : null,
    rerankerId: result.trace.reranked ? (reranker.model?.id ?? null) : null,
  }
}
/** What a search reports besides its hits: milliseconds per step, notices for the person, and whether it ran with less than it was asked. */
class SearchLog {
  readonly timings: Record<string, number> = {}
  readonly notices: string[] = []
  degraded = false

  async time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now()
    try {
      return await fn()
    } finally {
      this.timings[name] = round(performance.now() - t0, 2)
    }
  }

  /** The search goes on without something it was asked for; the notice says what and why. */
  degrade(notice: string): void {
    this.degraded = true
    this.notices.push(notice)
  }
}

type KeywordList = KeywordHit[] | null
type VectorList = VectorHit[] | null

export async function searchChunks(
  ctx: SearchContext,
  query: string,
  scope: ResolvedScope,
  opts: SearchOptions,
): Promise<SearchResult & { trace: RetrievalTrace }> {
  const log = new SearchLog()
  const candidates = Math.max(opts.candidates ?? DEFAULT_CANDIDATES, opts.k)
  // Version mentions say where to search (the scope), not what the passage says: neither retriever reads them.
  const text = searchText(query, scope)
  // A change question looks deeper into each list for change-log sections (see fuseFor); the lists
  // fused stay `candidates` long.
  const depth = scope.changeLogFirst ? candidates * CHANGE_LOG_DEPTH : candidates
  // Words the documents never use are searched by keyword as the title word nearest to them (bridge.ts).
  const bridged = await log.time('bridge_ms', () => bridgesFor(ctx, text, scope, opts))
  if (bridged.length > 0) log.notices.push(bridgeNotice(bridged))
  const deep = await retrieveLists(ctx, text, scope, depth, opts.mode, log, bridged)
  const keyword = deep.keyword?.slice(0, candidates) ?? null
  const vector = deep.vector?.slice(0, candidates) ?? null
  if (vector && vector.length === 0 && deep.wantVector) await noticeUnembedded(ctx, scope, log)

  const exact = extractExactTerms(text).length > 0
  const fused = await fuseFor(ctx, scope, opts.fusion ?? HYBRID_FUSION, exact, { keyword, vector }, deep, changeSubject(text))
  const { order, reranked } = await rerankFused(ctx, text, fused, opts, log)
  // RRF is shown only where lists were fused: both retrievers ran, or change logs were ranked in.
  const rrfShown = !!(keyword && vector) || scope.changeLogFirst
  // The same section copied into several places is one result (same-text.ts).
  const hashes = await chunksById(
    ctx.db,
    order.map((o) => o.chunk_id),
    ['embed_hash'],
  )
  const top = foldSameText(order, new Map([...hashes].map(([id, r]) => [id, r.embed_hash])), opts.k)
  const results = await hitsOf(ctx.db, top, { keyword, vector, fused }, rrfShown)
  return {
    mode: opts.mode,
    rerank: opts.rerank,
    degraded: log.degraded,
    notices: log.notices,
    results,
    timings_ms: log.timings,
    trace: { keyword, vector, fused, reranked, ...(bridged.length ? { bridged } : {}) },
  }
}

/** What the person is told of a bridge: the results rest on the embedder's reading of their word. */
export function bridgeNotice(bridged: readonly Bridge[]): string {
  const words = joinWords(
    bridged.map((b) => `"${b.word}"`),
    'or',
  )
  const terms = joinWords(bridged.map((b) => `"${b.term}"`))
  return bridged.length > 1
    ? `No passage says ${words}, so they were searched as ${terms}, the nearest words in the section titles.`
    : `No passage says ${words}, so it was searched as ${terms}, the nearest word in the section titles.`
}

/** Bridges for a search that reads the keyword index with an embedder that has a bridge floor; none otherwise. */
async function bridgesFor(ctx: SearchContext, text: string, scope: ResolvedScope, opts: SearchOptions): Promise<Bridge[]> {
  if (opts.mode === 'vector' || !canBridge(ctx.embedder)) return []
  return bridgeWords(ctx.db, ctx.embedder, scope.collections, text, opts.signal)
}

/** Runs the retrievers the mode asks for, `depth` deep; vector search only with an embedding model (else a notice says why). */
async function retrieveLists(
  ctx: SearchContext,
  text: string,
  scope: ResolvedScope,
  depth: number,
  mode: SearchMode,
  log: SearchLog,
  bridged: Bridge[] = [],
): Promise<{ keyword: KeywordList; vector: VectorList; wantVector: boolean }> {
  const wantKeyword = mode === 'keyword' || mode === 'hybrid'
  let wantVector = mode === 'vector' || mode === 'hybrid'
  if (wantVector && !ctx.embedder) {
    wantVector = false
    log.degrade(
      `Vector search is unavailable: ${ctx.embedderProblem ?? 'no embedding model is installed'}.` +
        (mode === 'hybrid' ? ' Showing keyword results only.' : ' Install an embedding model, or use keyword search.'),
    )
  }
  const embedder = ctx.embedder
  const [keyword, vector] = await Promise.all([
    wantKeyword
      ? log.time('keyword_ms', () => retrieveKeyword(ctx.db, withBridges(text, bridged), scope, depth))
      : Promise.resolve(null),
    wantVector && embedder
      ? log.time('vector_ms', async () => {
          const qv = await log.time('embed_query_ms', () => embedder.embedQuery(text))
          return retrieveVector(ctx.db, qv, embedder.id, scope, depth)
        })
      : Promise.resolve(null),
  ])
  return { keyword, vector, wantVector }
}

/** Vector search found nothing: when passages in scope lack this model's vectors, say so (a re-sync embeds them). */
async function noticeUnembedded(ctx: SearchContext, scope: ResolvedScope, log: SearchLog): Promise<void> {
  const { rows } = await ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chunks WHERE collection_id = ANY($1::text[]) AND embedding_model IS DISTINCT FROM $2`,
    [scope.collections, ctx.embedder!.id],
  )
  if (Number(rows[0]?.n ?? 0) > 0) {
    log.degrade(
      `${rows[0]!.n} passages have no embedding from this model yet, so vector search cannot see them; re-sync the collection (or run ingest again) to embed them.`,
    )
  }
}

/** Fuses the keyword and vector lists on chunk id; a change question also ranks change-log sections from the deeper lists. */
async function fuseFor(
  ctx: SearchContext,
  scope: ResolvedScope,
  rule: FusionRule,
  exact: boolean,
  lists: { keyword: KeywordList; vector: VectorList },
  deep: { keyword: KeywordList; vector: VectorList },
  /** The words of a change question that name what changed (fuse.ts changeSubject). */
  subject: string[],
): Promise<Fused[]> {
  const inputOf = (kw: KeywordList, vec: VectorList): FusionInput => ({
    keyword: kw?.map((h) => ({ chunk_id: h.chunk_id, score: h.bm25 })) ?? null,
    vector: vec?.map((h) => ({ chunk_id: h.chunk_id, score: h.cosine })) ?? null,
    exact,
  })
  const input = inputOf(lists.keyword, lists.vector)
  const fused = fuseLists(rule, input)
  if (!scope.changeLogFirst) return fused
  // Change-log sections ranked by the same evidence, over the deeper lists: a change log that
  // ranks 80th by words (it lists many changes in few words each) still competes.
  const deepFused = fuseLists(rule, inputOf(deep.keyword, deep.vector))
  const changeLog = await changeLogIds(
    ctx.db,
    deepFused.map((f) => f.chunk_id),
    subject,
  )
  return withChangeLog(rule, input, fused, changeLogRanking(deepFused, changeLog))
}

/** The final order: the cross-encoder's over the top fused candidates when asked and it works, else the fused order (with a notice). */
async function rerankFused(
  ctx: SearchContext,
  text: string,
  fused: Fused[],
  opts: SearchOptions,
  log: SearchLog,
): Promise<{ order: { chunk_id: string; reranker: number | null }[]; reranked: RetrievalTrace['reranked'] }> {
  const fusedOrder = fused.map((f) => ({ chunk_id: f.chunk_id, reranker: null }))
  if (!opts.rerank) return { order: fusedOrder, reranked: null }
  const reranker = ctx.reranker
  if (!reranker) {
    log.degrade(
      `Reranking is unavailable: ${ctx.rerankerProblem ?? 'no reranker model is installed'}. Results are in fused order.`,
    )
    return { order: fusedOrder, reranked: null }
  }
  if (fused.length === 0) return { order: fusedOrder, reranked: null }
  const pool = fused.slice(0, Math.max(opts.rerankCandidates ?? DEFAULT_RERANK_CANDIDATES, opts.k))
  const rows = await chunksById(
    ctx.db,
    pool.map((p) => p.chunk_id),
    ['heading', 'text'],
  )
  try {
    const scores = await log.time('rerank_ms', () =>
      reranker.score(
        text,
        pool.map((p) => passageText(rows.get(p.chunk_id)!)),
        opts.signal,
      ),
    )
    const reranked = pool
      .map((p, i) => ({ chunk_id: p.chunk_id, reranker: scores[i]! }))
      .sort((a, b) => b.reranker - a.reranker || a.chunk_id.localeCompare(b.chunk_id))
    return { order: reranked, reranked }
  } catch (err) {
    if (opts.signal?.aborted) throw err
    log.degrade(`The reranker failed (${err instanceof Error ? err.message : String(err)}); results are in fused order.`)
    return { order: fusedOrder, reranked: null }
  }
}

/** The hits shown, in order, each with its scores from every list it was in (RRF only where lists were fused). */
async function hitsOf(
  db: Queryable,
  top: { item: { chunk_id: string; reranker: number | null }; same: string[] }[],
  lists: { keyword: KeywordList; vector: VectorList; fused: Fused[] },
  showRrf: boolean,
): Promise<SearchHit[]> {
  const rows = await chunksById(
    db,
    top.flatMap((t) => [t.item.chunk_id, ...t.same]),
    PASSAGE_FIELDS,
  )
  const kwById = new Map((lists.keyword ?? []).map((h) => [h.chunk_id, h]))
  const vecById = new Map((lists.vector ?? []).map((h) => [h.chunk_id, h]))
  const fusedById = new Map(lists.fused.map((f) => [f.chunk_id, f]))
  return top.map(({ item: t, same }) => {
    const r = rows.get(t.chunk_id)!
    const kw = kwById.get(t.chunk_id)
    const vec = vecById.get(t.chunk_id)
    const sameIn = same
      .map((id) => rows.get(id))
      .filter((c) => c !== undefined)
      .map((c) => ({ chunk_id: c.chunk_id, path: c.path, version: c.version, page: c.page_start }))
    return {
      ...toPassage(r),
      ...(sameIn.length ? { same_in: sameIn } : {}),
      scores: {
        keyword_rank: kw?.rank ?? null,
        vector_rank: vec?.rank ?? null,
        bm25: kw?.bm25 ?? null,
        rrf: showRrf ? (fusedById.get(t.chunk_id)?.rrf ?? null) : null,
        cosine: vec?.cosine ?? null,
        reranker: t.reranker,
      },
    }
  })
}

/** What the cross-encoder and the answer model read for a chunk: where it is, then what it says. */
export function passageText(r: Pick<ChunkRow, 'heading' | 'text'>): string {
  return r.heading ? `${r.heading}\n\n${r.text}` : r.text
}

/** Which of these chunks are change-log sections about the subject (fuse.ts changeLogSections). */
async function changeLogIds(db: Queryable, ids: string[], subject: string[]): Promise<Set<string>> {
  const logs = [...(await chunksById(db, ids, ['path', 'heading', 'kind'])).values()].filter(isChangeLog)
  const rows = await chunksById(
    db,
    logs.map((r) => r.chunk_id),
    ['path', 'heading', 'kind', 'text'],
  )
  return changeLogSections([...rows.values()], subject)
}
