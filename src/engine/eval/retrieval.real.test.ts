import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { goldenQuestions, mcpCorpus, realModels, tempDir } from '../../test-support/paths'
import { onlyEmbedder } from '../../test-support/only-embedder'
import { loadQuestions } from './questions'
import { evalRetrieval, type RetrievalEvalReport } from './retrieval'

/**
 * Hybrid retrieval with the real embedder (all-MiniLM-L6-v2, installed by models:dev) must beat
 * keyword retrieval on the MCP golden set by the margin measured when it was introduced:
 * keyword recall@10 0.810 / MRR 0.603, hybrid 0.881 / 0.644 on 42 answerable questions (three
 * more questions found, docs/benchmarks.md). The gate keeps two of those three questions and most
 * of the MRR gain, so losing what the embedder adds fails CI while one question of noise from a
 * chunking change does not. There is no real cross-encoder here: no reranking.
 *
 * models:dev also installs the same model with int8 weights and names it the one in use (issue
 * 23). Each model gets a models folder of its own here, so the fp32 figures stay the fp32 model's;
 * the int8 one must keep what issue 23 asks of it: at most one golden question lost at recall@10
 * against fp32 in hybrid search, and hybrid's recall margin over keyword.
 */
const MARGIN = { recall_at_10: 2 / 42 - 1e-6, mrr: 0.02 }
const FLOOR = { recall_at_10: 36 / 42 - 1e-6 }

const embedderDir = path.join(realModels, 'embedding', 'all-minilm-l6-v2')
const int8Dir = path.join(realModels, 'embedding', 'all-minilm-l6-v2-int8')

const hitAt10 = (r: RetrievalEvalReport) =>
  new Set(r.per_question.filter((q) => q.first_hit_rank !== null && q.first_hit_rank <= 10).map((q) => q.id))

describe('real embedder: hybrid beats keyword on the MCP golden set', () => {
  let engine: Engine
  let cleanup: () => Promise<void>
  let keyword: RetrievalEvalReport
  let hybrid: RetrievalEvalReport
  let int8: { keyword: RetrievalEvalReport; hybrid: RetrievalEvalReport }

  beforeAll(async () => {
    for (const dir of [embedderDir, int8Dir])
      if (!existsSync(dir))
        throw new Error(`no real embedder at ${dir}: run npm run models:dev -- ${realModels} --only embedding`)
    const t = await tempDir()
    cleanup = t.cleanup
    const questions = await loadQuestions(goldenQuestions)
    const run = async (dir: string) => {
      const e = await Engine.open({
        dataDir: path.join(t.dir, 'data-' + path.basename(dir)),
        modelsDir: await onlyEmbedder(dir, t.dir),
      })
      const report = await e.importFolder(mcpCorpus, { collection: 'mcp' })
      expect(report.failed).toEqual([])
      const embedded = (await e.catalog.list()).find((c) => c.id === 'mcp')
      expect(embedded?.embedded, 'every chunk embedded by the real model').toBe(embedded?.chunks)
      const kw = await evalRetrieval(e, questions, { collection: 'mcp', mode: 'keyword', rerank: false })
      const hy = await evalRetrieval(e, questions, { collection: 'mcp', mode: 'hybrid', rerank: false })
      for (const r of [kw, hy])
        console.log(
          `${path.basename(dir)} ${r.mode}: recall@5 ${r.recall_at_5} recall@10 ${r.recall_at_10} MRR ${r.mrr} (p50 ${r.p50_ms} ms)`,
        )
      return { engine: e, keyword: kw, hybrid: hy }
    }
    const fp32 = await run(embedderDir)
    engine = fp32.engine
    keyword = fp32.keyword
    hybrid = fp32.hybrid
    const q = await run(int8Dir)
    await q.engine.close()
    int8 = { keyword: q.keyword, hybrid: q.hybrid }
  }, 1_500_000)
  afterAll(async () => {
    await engine?.close()
    await cleanup?.()
  })

  it('ran hybrid with the real embedder, not degraded to keyword', () => {
    expect(hybrid.degraded).toBe(false)
    // A word no passage holds is searched as its bridge, and the notice says so (retrieve/bridge.ts):
    // that is no degradation. Any other notice is.
    expect(hybrid.notices.filter((n) => !n.startsWith('No passage says '))).toEqual([])
  })

  it(`hybrid recall@10 >= keyword + ${MARGIN.recall_at_10.toFixed(3)} and >= ${FLOOR.recall_at_10.toFixed(3)}`, () => {
    expect(hybrid.recall_at_10).toBeGreaterThanOrEqual(keyword.recall_at_10 + MARGIN.recall_at_10)
    expect(hybrid.recall_at_10).toBeGreaterThanOrEqual(FLOOR.recall_at_10)
  })

  it(`hybrid MRR >= keyword MRR + ${MARGIN.mrr}`, () => {
    expect(hybrid.mrr).toBeGreaterThanOrEqual(keyword.mrr + MARGIN.mrr)
  })

  it('int8 weights lose at most one golden question at recall@10 against fp32, and keep hybrid ahead of keyword', () => {
    expect(int8.hybrid.degraded).toBe(false)
    const fp32Hits = hitAt10(hybrid)
    const int8Hits = hitAt10(int8.hybrid)
    const lost = [...fp32Hits].filter((id) => !int8Hits.has(id))
    expect(lost.length, `lost with int8: ${lost.join(', ')}`).toBeLessThanOrEqual(1)
    expect(int8.hybrid.recall_at_10).toBeGreaterThanOrEqual(int8.keyword.recall_at_10 + MARGIN.recall_at_10)
  })
})
