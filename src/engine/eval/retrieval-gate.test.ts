import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { fastifyDocsCorpus, goldenQuestions, mcpCorpus, repoRoot, tempDir } from '../../test-support/paths'
import { loadQuestions } from './questions'
import { evalRetrieval } from './retrieval'

/**
 * The retrieval eval as a CI gate: the MCP docs corpus, keyword mode (no model needed), two
 * question sets: the golden questions and questions written the way people ask (versions named in
 * the text, typos, long context). Each threshold sits half a question under what was measured
 * (recall@10: (hits - 0.5) / answerable; MRR: measured - 0.5 / answerable), so a change that loses
 * even one question, or moves one first hit from rank 1 to 3, fails here.
 */
const peopleQuestions = path.join(repoRoot, 'evals/datasets/mcp-docs-people/questions.jsonl')
const SETS = [
  // Measured here (no models installed, so chunks are cut by the approximate token counter):
  // recall@10 35/42 = 0.8333, MRR 0.6796.
  { name: 'golden', file: goldenQuestions, minQuestions: 40, recall_at_10: 34.5 / 42, mrr: 0.6796 - 0.5 / 42 },
  // Measured here: recall@10 36/44 = 0.8182, MRR 0.6674.
  { name: 'people', file: peopleQuestions, minQuestions: 40, recall_at_10: 35.5 / 44, mrr: 0.6674 - 0.5 / 44 },
]

describe('retrieval eval gate (keyword, MCP docs)', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    const t = await tempDir()
    cleanup = t.cleanup
    engine = await Engine.open({ dataDir: t.dir, modelsDir: path.join(t.dir, 'no-models') })
    const report = await engine.importFolder(mcpCorpus, { collection: 'mcp' })
    expect(report.failed).toEqual([])
  }, 300_000)
  afterAll(async () => {
    await engine?.close()
    await cleanup?.()
  })

  for (const set of SETS) {
    it(`${set.name} questions: recall@10 >= ${set.recall_at_10.toFixed(4)} and MRR >= ${set.mrr.toFixed(4)}`, async () => {
      const questions = await loadQuestions(set.file)
      expect(questions.length).toBeGreaterThanOrEqual(set.minQuestions)
      const r = await evalRetrieval(engine, questions, { collection: 'mcp', mode: 'keyword', rerank: false })
      console.log(`${set.name} keyword: recall@5 ${r.recall_at_5} recall@10 ${r.recall_at_10} MRR ${r.mrr} (p50 ${r.p50_ms} ms)`)
      expect(r.recall_at_10).toBeGreaterThanOrEqual(set.recall_at_10)
      expect(r.mrr).toBeGreaterThanOrEqual(set.mrr)
    })
  }

  it('answers exact-token questions at rank 1-3 (tokens matched as written)', async () => {
    const questions = (await loadQuestions(goldenQuestions)).filter((q) => q.kind === 'exact-token')
    const r = await evalRetrieval(engine, questions, { collection: 'mcp', mode: 'keyword', rerank: false })
    const missed = r.per_question.filter((p) => p.first_hit_rank === null || p.first_hit_rank > 3).map((p) => p.id)
    // One question (q30) ranks its section 8th among many near-identical error tables; allow one.
    expect(missed.length, `missed: ${missed.join(', ')}`).toBeLessThanOrEqual(1)
  })
})

/**
 * The same gate over a versioned documentation tree in a Docusaurus layout (four Fastify releases,
 * evals/datasets/fastify-docs): scoped questions must find their version's pages, deep headings
 * their own sections. The corpus is built from pinned npm packages by .ci/run; CI fails without
 * it, elsewhere the test is skipped with the command that builds it.
 */
const IN_CI = Boolean(process.env['CI'])
const noFastify = existsSync(path.join(fastifyDocsCorpus, 'versions.json'))
  ? null
  : `no corpus at ${fastifyDocsCorpus}: bash evals/corpora/build-fastify-docusaurus.sh ${fastifyDocsCorpus}`
if (noFastify && !IN_CI) console.warn(`retrieval-gate.test.ts: fastify-docs skipped: ${noFastify}`)
// Thresholds half a question under what keyword mode measured here (no models; in-sample: the
// set was written before the engine ran on it, and nothing was fitted to it): recall@10 32/34 = 0.9412,
// MRR 0.8081.
const FASTIFY = { recall_at_10: 31.5 / 34, mrr: 0.8081 - 0.5 / 34 }

describe.skipIf(noFastify !== null && !IN_CI)('retrieval eval gate (keyword, Fastify docs in a Docusaurus layout)', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    if (noFastify) throw new Error(`CI must build the fastify-docs corpus (.ci/run): ${noFastify}`)
    const t = await tempDir()
    cleanup = t.cleanup
    engine = await Engine.open({ dataDir: t.dir, modelsDir: path.join(t.dir, 'no-models') })
    const report = await engine.importFolder(fastifyDocsCorpus, { collection: 'fastify' })
    expect(report.failed).toEqual([])
  }, 300_000)
  afterAll(async () => {
    await engine?.close()
    await cleanup?.()
  })

  it('reads the releases from the layout under their own names', async () => {
    const [info] = await engine.catalog.list()
    expect(info!.versions).toEqual(['3.29.5', '4.29.1', '5.6.2', 'next'])
  })

  it(`recall@10 >= ${FASTIFY.recall_at_10.toFixed(4)} and MRR >= ${FASTIFY.mrr.toFixed(4)}`, async () => {
    const questions = await loadQuestions(path.join(repoRoot, 'evals/datasets/fastify-docs/questions.jsonl'))
    expect(questions.length).toBeGreaterThanOrEqual(40)
    const r = await evalRetrieval(engine, questions, { collection: 'fastify', mode: 'keyword', rerank: false })
    console.log(`fastify-docs keyword: recall@5 ${r.recall_at_5} recall@10 ${r.recall_at_10} MRR ${r.mrr} (p50 ${r.p50_ms} ms)`)
    expect(r.recall_at_10).toBeGreaterThanOrEqual(FASTIFY.recall_at_10)
    expect(r.mrr).toBeGreaterThanOrEqual(FASTIFY.mrr)
    // A question scoped to a release gets that release's pages and the unversioned ones only.
    for (const q of questions.filter((x) => x.version !== null)) {
      const top = r.per_question.find((p) => p.id === q.id)?.top ?? []
      for (const h of top) expect([q.version, null], `${q.id}: ${h.path}`).toContain(h.version)
    }
  })
})
