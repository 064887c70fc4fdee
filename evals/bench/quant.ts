import { mkdir, symlink } from 'node:fs/promises'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import { Engine } from '../../src/engine/engine'
import { loadEmbedder } from '../../src/engine/models/runtime/embedder'
import { mcpCorpus, tempDir } from '../../src/test-support/paths'
import { pct, peakMemory, printTable, r1 } from './machine'
import { rawEncoder } from './models'

/**
 * fp32 against int8 weights of the same embedder (`npm run bench -- quant --models DIR`, a models
 * folder where `npm run models:dev` installed both `all-minilm-l6-v2` and `all-minilm-l6-v2-int8`):
 * the MCP docs imported with each, and keyword-only, in one run; then each model's raw onnxruntime
 * throughput on the same 64 stored passages (the runtime's limit), beside Docent's pipeline on
 * them. Each import gets a models folder of its own holding only that embedder, so the engine has
 * no choice to make.
 */
const median = (xs: number[]) => pct(xs, 50)

async function only(modelDir: string, root: string): Promise<string> {
  const dir = path.join(root, 'models-' + path.basename(modelDir))
  await mkdir(path.join(dir, 'embedding'), { recursive: true })
  await symlink(modelDir, path.join(dir, 'embedding', path.basename(modelDir)))
  return dir
}

async function times(fn: () => Promise<unknown>): Promise<number> {
  await fn()
  const ts: number[] = []
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now()
    await fn()
    ts.push(performance.now() - t0)
  }
  return median(ts)
}

export async function benchQuant(opts: { models: string }): Promise<Record<string, unknown>> {
  const fp32 = path.join(opts.models, 'embedding', 'all-minilm-l6-v2')
  const int8 = path.join(opts.models, 'embedding', 'all-minilm-l6-v2-int8')
  const work = await tempDir('docent-bench-quant-')
  try {
    const imports: Record<string, unknown>[] = []
    let texts: string[] = []
    for (const m of [
      { label: 'fp32 (all-minilm-l6-v2)', dir: fp32 },
      { label: 'int8 (all-minilm-l6-v2-int8)', dir: int8 },
      { label: 'no model (keyword only)', dir: null },
    ]) {
      const t = await tempDir('docent-bench-quant-data-')
      const modelsDir = m.dir ? await only(m.dir, work.dir) : path.join(t.dir, 'none')
      const engine = await Engine.open({ dataDir: t.dir, modelsDir })
      const mem = peakMemory()
      const report = await engine.importFolder(mcpCorpus, { collection: 'mcp' })
      const peak = mem.stop()
      if (texts.length === 0) {
        const { rows } = await engine.db.query<{ text: string }>('SELECT text FROM chunks ORDER BY id LIMIT 64')
        texts = rows.map((r) => r.text)
      }
      await engine.close()
      await t.cleanup()
      const total = Object.values(report.timings).reduce((a, b) => a + b, 0) || 1
      imports.push({
        models: m.label,
        chunks: report.chunks_written,
        seconds: r1(report.ms / 1000),
        chunks_per_s: r1(report.chunks_written / (report.ms / 1000)),
        embed_s: r1(report.timings.embed / 1000),
        outside_embedder_share: r1((100 * (total - report.timings.embed)) / total),
        peak_rss_mb: peak,
      })
    }
    const keywordOnly = imports[2]!.seconds as number
    printTable(
      'Import of the MCP docs: fp32 and int8 weights of the same embedder, and keyword-only (same run)',
      ['models', 'chunks', 's', 'x keyword-only', 'chunks/s', 'embed s', 'outside embedder %', 'peak RSS MB'],
      imports.map((r) => [
        r.models as string,
        r.chunks as number,
        r.seconds as number,
        r1((r.seconds as number) / keywordOnly),
        r.chunks_per_s as number,
        r.embed_s as number,
        r.outside_embedder_share as number,
        r.peak_rss_mb as number,
      ]),
    )
    const throughput: Record<string, unknown>[] = []
    for (const [label, dir] of [
      ['fp32', fp32],
      ['int8', int8],
    ] as const) {
      const pipeline = await loadEmbedder(dir)
      const tokens = texts.reduce((s, t) => s + Math.min(pipeline.countTokens(t), pipeline.maxTokens), 0)
      const pipelineMs = await times(() => pipeline.embedDocuments(texts))
      await pipeline.dispose()
      const raw = await rawEncoder(dir)
      // The runtime at its best: inputs sorted by length, so a batch pads little (as the pipeline batches).
      const encoded = texts.map((t) => raw.encoder.encode(t)).sort((a, b) => a.ids.length - b.ids.length)
      const batches: ort.InferenceSession.FeedsType[] = []
      for (let i = 0; i < encoded.length; i += 16) batches.push(raw.feeds(encoded.slice(i, i + 16)))
      const rawMs = await times(async () => {
        for (const feeds of batches) await raw.session.run(feeds)
      })
      await raw.session.release()
      throughput.push({
        weights: label,
        texts: texts.length,
        tokens,
        pipeline_ms: r1(pipelineMs),
        raw_onnxruntime_ms: r1(rawMs),
        pipeline_tokens_per_s: Math.round(tokens / (pipelineMs / 1000)),
        raw_tokens_per_s: Math.round(tokens / (rawMs / 1000)),
      })
    }
    printTable(
      `Embedding ${texts.length} stored passages, median of 3: Docent's pipeline beside raw onnxruntime`,
      ['weights', 'tokens', 'pipeline ms', 'raw onnxruntime ms', 'pipeline tokens/s', 'raw tokens/s', 'pipeline / raw'],
      throughput.map((e) => [
        e.weights as string,
        e.tokens as number,
        e.pipeline_ms as number,
        e.raw_onnxruntime_ms as number,
        e.pipeline_tokens_per_s as number,
        e.raw_tokens_per_s as number,
        Math.round((100 * (e.pipeline_ms as number)) / (e.raw_onnxruntime_ms as number)) / 100,
      ]),
    )
    return { imports, throughput }
  } finally {
    await work.cleanup()
  }
}
