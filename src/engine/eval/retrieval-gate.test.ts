import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { goldenQuestions, mcpCorpus, tempDir } from '../../test-support/paths'
import { loadQuestions } from './questions'
import { evalRetrieval } from './retrieval'

/**
 * The retrieval eval as a CI gate: the MCP docs corpus, the golden questions, keyword mode (no
 * model needed). Thresholds sit just under what was measured (recall@10 0.786, MRR 0.616 on
 * 42 answerable questions), so a change that loses even one question fails here.
 */
const GATE = { recall_at_10: 0.76, mrr: 0.59 }

describe('retrieval eval gate (keyword, MCP docs)', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    const t = await tempDir()
    cleanup = t.cleanup
    engine = await Engine.open({ dataDir: t.dir, modelsDir: path.join(t.dir, 'no-models') })
    const report = await engine.ingest(mcpCorpus, { collection: 'mcp' })
    expect(report.failed).toEqual([])
  }, 300_000)
  afterAll(async () => {
    await engine?.close()
    await cleanup?.()
  })

  it(`keeps recall@10 >= ${GATE.recall_at_10} and MRR >= ${GATE.mrr}`, async () => {
    const questions = await loadQuestions(goldenQuestions)
    expect(questions.length).toBeGreaterThanOrEqual(40)
    const r = await evalRetrieval(engine, questions, { collection: 'mcp', mode: 'keyword', rerank: false })
    console.log(`keyword: recall@5 ${r.recall_at_5} recall@10 ${r.recall_at_10} MRR ${r.mrr} (p50 ${r.p50_ms} ms)`)
    expect(r.recall_at_10).toBeGreaterThanOrEqual(GATE.recall_at_10)
    expect(r.mrr).toBeGreaterThanOrEqual(GATE.mrr)
  })

  it('answers exact-token questions at rank 1-3 (tokens matched as written)', async () => {
    const questions = (await loadQuestions(goldenQuestions)).filter((q) => q.kind === 'exact-token')
    const r = await evalRetrieval(engine, questions, { collection: 'mcp', mode: 'keyword', rerank: false })
    const missed = r.per_question.filter((p) => p.first_hit_rank === null || p.first_hit_rank > 3).map((p) => p.id)
    // One question (q30) ranks its section 8th among many near-identical error tables; allow one.
    expect(missed.length, `missed: ${missed.join(', ')}`).toBeLessThanOrEqual(1)
  })
})
