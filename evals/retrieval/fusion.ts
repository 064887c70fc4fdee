/**
 * Fusion candidates for hybrid search, measured on the golden sets with the real embedder
 * (issue "Hybrid search that earns its cost", ADR 0011). For every answerable question the keyword
 * and vector lists are collected once, exactly as the engine's search builds them (same scope,
 * same search text, same depth, the change-log boost, and for hybrid the keyword list with the
 * words no passage holds bridged, retrieve/bridge.ts), then fused by each candidate in memory.
 * Parameters are fitted on the `fit` half of every set (gate-calibration.ts halfOf) and reported
 * on the `held_out` half, beside keyword and vector alone.
 *
 *   npx tsx evals/retrieval/fusion.ts --models <dir> \
 *     --set mcp-docs=<data dir>:<collection>:evals/datasets/mcp-docs/questions.jsonl [--set ...] [--json out.json]
 */
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { Engine } from '../../src/engine/engine'
import { halfOf } from '../../src/engine/eval/gate-calibration'
import { isHit, loadQuestions, searchQuestion } from '../../src/engine/eval/questions'
import { extractExactTerms } from '../../src/engine/core/exact-terms'
import {
  HYBRID_FUSION,
  changeLogRanking,
  changeLogSections,
  changeSubject,
  fuseLists,
  RRF_K,
  withChangeLog,
  type FusionInput,
  type FusionRule,
  type ScoredList,
} from '../../src/engine/retrieve/fuse'
import { retrieveKeyword } from '../../src/engine/retrieve/keyword'
import { bridgeWords, canBridge, withBridges } from '../../src/engine/retrieve/bridge'
import { searchText } from '../../src/engine/retrieve/scope'
import { CHANGE_LOG_DEPTH, DEFAULT_CANDIDATES, resolveSearchScope } from '../../src/engine/retrieve/search'
import { retrieveVector } from '../../src/engine/retrieve/vector'

interface Candidate {
  id: string
  bm25: number | null
  cosine: number | null
}

interface Collected {
  set: string
  id: string
  half: 'fit' | 'held_out'
  exact: boolean
  changeLogFirst: boolean
  keyword: Candidate[]
  /**
   * The keyword list hybrid search reads when a word of the question no passage holds was bridged
   * (retrieve/bridge.ts; keyword-only search has no embedder to bridge with); absent otherwise.
   */
  bridged?: Candidate[]
  vector: Candidate[]
  changeLog: Set<string>
  hit: Set<string>
}

/** A fusion: the question's lists in, an order of chunk ids out (change-log boost included), as the engine's search orders them. */
type Fusion = (q: Collected) => string[]

const scored = (xs: Candidate[], f: (c: Candidate) => number | null): ScoredList[] =>
  xs.map((x) => ({ chunk_id: x.id, score: f(x) ?? 0 }))

/**
 * The engine's own fusion (retrieve/fuse.ts fuseLists and withChangeLog), over the lists collected
 * for `q`; with `only`, the engine's keyword or vector mode, which ranks change-log sections in the
 * same way for a change question (search.ts fuseFor runs for one list too).
 */
function engineFusion(rule: FusionRule, only?: 'keyword' | 'vector'): Fusion {
  return (q) => {
    // Hybrid reads the keyword list with the question's bridged words; keyword mode alone does not.
    const words = only === 'keyword' ? q.keyword : (q.bridged ?? q.keyword)
    const input = (n: number): FusionInput => ({
      keyword: only === 'vector' ? null : scored(words.slice(0, n), (c) => c.bm25),
      vector: only === 'keyword' ? null : scored(q.vector.slice(0, n), (c) => c.cosine),
      exact: q.exact,
    })
    const lists = input(DEFAULT_CANDIDATES)
    let fused = fuseLists(rule, lists)
    if (q.changeLogFirst) {
      const deep = fuseLists(rule, input(Infinity))
      fused = withChangeLog(rule, lists, fused, changeLogRanking(deep, q.changeLog))
    }
    return fused.map((f) => f.chunk_id)
  }
}

const CANDIDATES: Record<string, (p: number) => FusionRule> = {
  // p: RRF's k (60 in ADR 0001); a small k gives first places more weight.
  'RRF, equal weights, k': (p) => ({ kind: 'rrf', k: p }),
  // p: the keyword weight when the question holds an exact token (error code, method name); 1 otherwise.
  'weighted RRF (exact tokens lean to keyword)': (p) => ({ kind: 'weighted_rrf', k: RRF_K, exact_keyword_weight: p }),
  // p: keyword's share in a convex mix of normalised scores.
  'convex mix of normalised scores': (p) => ({ kind: 'convex', keyword_share: p, exact_extra: 0 }),
  // p: the keyword share for plain questions; exact-token questions get 0.5 more of it (capped at 1).
  'convex mix, exact tokens lean to keyword': (p) => ({ kind: 'convex', keyword_share: p, exact_extra: 0.5 }),
  // p: how far below the best cosine the vector list is kept.
  'vector list cut off below its best cosine': (p) => ({ kind: 'vector_cutoff', k: RRF_K, delta: p }),
  // p: how many of keyword's first results keep their places ahead of the RRF order.
  'keyword leads, then RRF': (p) => ({ kind: 'keyword_led', k: RRF_K, lead: p }),
  // p: how deep in the vector list keyword's first result must also be to go first.
  "keyword's first goes first when vector agrees": (p) => ({ kind: 'agreed_first', k: RRF_K, depth: p }),
}
const GRID: Record<string, number[]> = {
  'RRF, equal weights, k': [1, 5, 10, 20, 30, 60],
  'weighted RRF (exact tokens lean to keyword)': [1, 1.5, 2, 3, 4, 6],
  'convex mix of normalised scores': [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
  'convex mix, exact tokens lean to keyword': [0.2, 0.3, 0.4, 0.5],
  'vector list cut off below its best cosine': [0.02, 0.05, 0.08, 0.12, 0.2],
  'keyword leads, then RRF': [1, 2, 3],
  "keyword's first goes first when vector agrees": [3, 5, 10, 20, 50],
}

interface Score {
  recall10: number
  mrr: number
  n: number
}

function score(qs: Collected[], f: Fusion): Score {
  let hits = 0
  let rr = 0
  for (const q of qs) {
    const top = f(q).slice(0, 10)
    const at = top.findIndex((id) => q.hit.has(id))
    if (at >= 0) {
      hits++
      rr += 1 / (at + 1)
    }
  }
  return { recall10: qs.length ? hits / qs.length : 0, mrr: qs.length ? rr / qs.length : 0, n: qs.length }
}

// Keyword and vector alone as the engine's keyword and vector modes serve them: a change question
// ranks change-log sections in there too. (Before 2026-12-05 they were the bare lists, so on a change
// question hybrid's change-log boost was weighed against lists without it.)
const KEYWORD: Fusion = engineFusion(HYBRID_FUSION, 'keyword')
const VECTOR: Fusion = engineFusion(HYBRID_FUSION, 'vector')
const RRF: Fusion = engineFusion({ kind: 'rrf', k: RRF_K })

async function collect(spec: string, models: string): Promise<Collected[]> {
  const [name, rest] = spec.split('=') as [string, string]
  const [data, collection, file] = rest.split(':') as [string, string, string]
  const engine = await Engine.open({ dataDir: data, modelsDir: models, readOnly: true })
  const out: Collected[] = []
  try {
    const embedder = (await engine.embedder()).model
    if (!embedder) throw new Error(`no embedding model in ${models}`)
    for (const q of await loadQuestions(file)) {
      if (!q.answerable) continue
      const scope = await resolveSearchScope(
        engine.db,
        { collections: [collection], version: q.version ?? 'auto' },
        searchQuestion(q),
      )
      const text = searchText(searchQuestion(q), scope)
      const depth = scope.changeLogFirst ? DEFAULT_CANDIDATES * CHANGE_LOG_DEPTH : DEFAULT_CANDIDATES
      const kw = await retrieveKeyword(engine.db, text, scope, depth)
      const vec = await retrieveVector(engine.db, await embedder.embedQuery(text), embedder.id, scope, depth)
      const bridges = canBridge(embedder) ? await bridgeWords(engine.db, embedder, [collection], text) : []
      const bridged = bridges.length ? await retrieveKeyword(engine.db, withBridges(text, bridges), scope, depth) : null
      const ids = [
        ...new Set([...kw.map((k) => k.chunk_id), ...(bridged ?? []).map((k) => k.chunk_id), ...vec.map((v) => v.chunk_id)]),
      ]
      const { rows } = await engine.db.query<{
        id: string
        path: string
        heading: string
        kind: string | null
        text: string
        page_start: number | null
        page_end: number | null
      }>('SELECT id, path, heading, kind, text, page_start, page_end FROM chunks WHERE id = ANY($1::text[])', [ids])
      out.push({
        set: name,
        id: q.id,
        half: halfOf(name, q.id),
        exact: extractExactTerms(text).length > 0,
        changeLogFirst: scope.changeLogFirst,
        keyword: kw.map((k) => ({ id: k.chunk_id, bm25: k.bm25, cosine: null })),
        ...(bridged ? { bridged: bridged.map((k) => ({ id: k.chunk_id, bm25: k.bm25, cosine: null })) } : {}),
        vector: vec.map((v) => ({ id: v.chunk_id, bm25: null, cosine: v.cosine })),
        changeLog: changeLogSections(
          rows.map((r) => ({ ...r, chunk_id: r.id })),
          changeSubject(text),
        ),
        hit: new Set(
          rows
            .filter((r) =>
              q.gold.some((g) => isHit({ path: r.path, heading: r.heading, page: r.page_start, page_end: r.page_end }, g)),
            )
            .map((r) => r.id),
        ),
      })
    }
  } finally {
    await engine.close()
  }
  return out
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      models: { type: 'string' },
      set: { type: 'string', multiple: true },
      json: { type: 'string' },
      lists: { type: 'string' },
    },
  })
  const all: Collected[] = []
  for (const spec of values.set ?? []) all.push(...(await collect(spec, values.models!)))
  // --lists FILE: keep the collected lists (with --set) or fuse the ones kept earlier (without).
  if (values.lists && all.length)
    await writeFile(
      values.lists,
      JSON.stringify(all, (_k, v: unknown) => (v instanceof Set ? [...v] : v)),
    )
  else if (values.lists)
    for (const q of JSON.parse(await readFile(values.lists, 'utf8')) as (Omit<Collected, 'changeLog' | 'hit'> & {
      changeLog: string[]
      hit: string[]
    })[])
      all.push({ ...q, changeLog: new Set(q.changeLog), hit: new Set(q.hit) })
  const sets = [...new Set(all.map((q) => q.set))]
  const part = (set: string, half: 'fit' | 'held_out') => all.filter((q) => q.set === set && q.half === half)
  // How far a fusion falls below the better half (max of keyword and vector, minus 0.01) on each set's `half`: the
  // number of (set, measure) pairs below that floor, and the mean over sets of recall@10 + MRR.
  const judge = (f: Fusion, half: 'fit' | 'held_out') => {
    let below = 0
    let sum = 0
    for (const set of sets) {
      const qs = part(set, half)
      const [kw, vec, r] = [score(qs, KEYWORD), score(qs, VECTOR), score(qs, f)]
      if (r.recall10 < Math.max(kw.recall10, vec.recall10) - 0.01 - 1e-9) below++
      if (r.mrr < Math.max(kw.mrr, vec.mrr) - 0.01 - 1e-9) below++
      sum += r.recall10 + r.mrr
    }
    return { below, mean: sum / sets.length }
  }
  // Fit on the fit halves only: fewest pairs below the floor, then the highest mean. One parameter for every set.
  const fitted: Record<string, number> = {}
  const grid: Record<string, unknown>[] = []
  for (const [name, make] of Object.entries(CANDIDATES)) {
    let best = { p: GRID[name]![0]!, below: Infinity, mean: -1 }
    for (const p of GRID[name]!) {
      const j = judge(engineFusion(make(p)), 'fit')
      grid.push({ method: name, p, fit_pairs_below: j.below, fit_mean: +j.mean.toFixed(4) })
      process.stdout.write(
        `fit grid  ${name.padEnd(45)} p=${String(p).padEnd(5)} pairs below the floor ${j.below}  mean R@10+MRR ${j.mean.toFixed(3)}\n`,
      )
      if (j.below < best.below || (j.below === best.below && j.mean > best.mean + 1e-9)) best = { p, ...j }
    }
    fitted[name] = best.p
  }
  const methods: [string, Fusion][] = [
    ['keyword', KEYWORD],
    ['vector', VECTOR],
    ['RRF, equal weights (before)', RRF],
    ...Object.entries(CANDIDATES).map(
      ([name, make]) => [`${name} (p=${fitted[name]})`, engineFusion(make(fitted[name]!))] as [string, Fusion],
    ),
  ]
  const report: Record<string, unknown>[] = []
  const f3 = (x: number) => x.toFixed(3)
  for (const set of sets)
    for (const half of ['fit', 'held_out'] as const) {
      const qs = part(set, half)
      const kw = score(qs, KEYWORD)
      const vec = score(qs, VECTOR)
      const floor = { recall10: Math.max(kw.recall10, vec.recall10) - 0.01, mrr: Math.max(kw.mrr, vec.mrr) - 0.01 }
      for (const [name, f] of methods) {
        const r = score(qs, f)
        const ok = r.recall10 >= floor.recall10 - 1e-9 && r.mrr >= floor.mrr - 1e-9
        report.push({
          set,
          half,
          method: name,
          n: r.n,
          recall_at_10: +f3(r.recall10),
          mrr: +f3(r.mrr),
          not_below_better_half: ok,
        })
        process.stdout.write(
          `${set.padEnd(18)} ${half.padEnd(8)} n=${String(r.n).padStart(3)} ${name.padEnd(58)} R@10 ${f3(r.recall10)} MRR ${f3(r.mrr)}${ok ? '' : '  (below the better half)'}\n`,
        )
      }
    }
  for (const [name, f] of methods.slice(2)) {
    const j = judge(f, 'held_out')
    process.stdout.write(`held-out  ${name.padEnd(58)} pairs below the floor ${j.below}  mean R@10+MRR ${j.mean.toFixed(3)}\n`)
  }
  // Both ways round (two-fold): each candidate's parameter fitted on one half and judged on the other, then the
  // halves swapped. Choosing among candidates on this sum uses every question once as a test, never the one it was fitted on.
  const folds: Record<string, unknown>[] = []
  const fitOn = (make: (p: number) => FusionRule, grid: number[], half: 'fit' | 'held_out') => {
    let best = { p: grid[0]!, below: Infinity, mean: -1 }
    for (const p of grid) {
      const j = judge(engineFusion(make(p)), half)
      if (j.below < best.below || (j.below === best.below && j.mean > best.mean + 1e-9)) best = { p, ...j }
    }
    return best.p
  }
  for (const [name, make] of [
    ['RRF, equal weights, k = 60 (before)', (): FusionRule => ({ kind: 'rrf', k: RRF_K })] as const,
    ...Object.entries(CANDIDATES),
  ]) {
    const grid = GRID[name] ?? [0]
    const pFit = fitOn(make, grid, 'fit')
    const pHeld = fitOn(make, grid, 'held_out')
    const a = judge(engineFusion(make(pFit)), 'held_out')
    const b = judge(engineFusion(make(pHeld)), 'fit')
    folds.push({
      method: name,
      p_fitted_on_fit: pFit,
      held_out: a,
      p_fitted_on_held_out: pHeld,
      fit: b,
      pairs_below: a.below + b.below,
      mean: +((a.mean + b.mean) / 2).toFixed(4),
    })
    process.stdout.write(
      `two-fold  ${name.padEnd(45)} p=${pFit}/${pHeld}  pairs below the floor ${a.below} + ${b.below} = ${a.below + b.below}  mean R@10+MRR ${((a.mean + b.mean) / 2).toFixed(3)}\n`,
    )
  }
  if (values.json) await writeFile(values.json, JSON.stringify({ fitted, grid, report, folds }, null, 2) + '\n')
}

await main()
