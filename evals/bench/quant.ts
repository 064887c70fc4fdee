import { existsSync } from 'node:fs'
import { mkdir, symlink } from 'node:fs/promises'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import { Engine } from '../../src/engine/engine'
import type { Embedder } from '../../src/engine/core/model-ports'
import { loadEmbedder } from '../../src/engine/models/runtime/embedder'
import { ONNX_SESSION_OPTIONS } from '../../src/engine/models/runtime/onnx-common'
import { mcpCorpus, tempDir } from '../../src/test-support/paths'
import { pct, peakMemory, printTable, r1 } from './machine'
import { rawEncoder } from './models'

/**
 * fp32 against int8 weights of the same embedder (`npm run bench -- quant --models DIR`, a models
 * folder where `npm run models:dev -- DIR --all-embedders` installed `all-minilm-l6-v2` (fp32),
 * `all-minilm-l6-v2-int8` (the fused graph quantised, the one models:dev names) and, when present,
 * `all-minilm-l6-v2-int8-unfused` (the standard-op graph quantised, models:dev's int8 before)):
 * the MCP docs imported with each, and keyword-only; then each model's throughput on the same
 * stored passages through Docent's pipeline and through raw onnxruntime, with onnxruntime's default
 * session options and with the ones Docent passes (ONNX_SESSION_OPTIONS). Every round runs every
 * model and way once, in turn, so a busy machine slows them alike; the table shows medians and the
 * ratio to fp32. Options: --rounds N (default 5), --passages N (default 64), --imports no.
 */
const median = (xs: number[]) => pct(xs, 50)

const MODELS = [
  { label: 'fp32', name: 'all-minilm-l6-v2', required: true },
  { label: 'int8 fused (models:dev)', name: 'all-minilm-l6-v2-int8', required: true },
  { label: 'int8 standard ops (before)', name: 'all-minilm-l6-v2-int8-unfused', required: false },
]

async function only(modelDir: string, root: string): Promise<string> {
  const dir = path.join(root, 'models-' + path.basename(modelDir))
  await mkdir(path.join(dir, 'embedding'), { recursive: true })
  await symlink(modelDir, path.join(dir, 'embedding', path.basename(modelDir)))
  return dir
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += (a[i] ?? 0) * (b[i] ?? 0)
  return dot // both are L2-normalised
}

async function importEach(
  models: { label: string; dir: string | null }[],
  work: string,
  passages: number,
): Promise<{ imports: Record<string, unknown>[]; texts: string[] }> {
  const imports: Record<string, unknown>[] = []
  let texts: string[] = []
  for (const m of models) {
    const t = await tempDir('docent-bench-quant-data-')
    const modelsDir = m.dir ? await only(m.dir, work) : path.join(t.dir, 'none')
    const engine = await Engine.open({ dataDir: t.dir, modelsDir })
    const mem = peakMemory()
    const report = await engine.importFolder(mcpCorpus, { collection: 'mcp' })
    const peak = mem.stop()
    if (texts.length === 0) {
      const { rows } = await engine.db.query<{ text: string }>(`SELECT text FROM chunks ORDER BY id LIMIT ${passages}`)
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
  return { imports, texts }
}

interface Runner {
  label: string
  pipeline: Embedder
  raw: { defaults: ort.InferenceSession; docent: ort.InferenceSession; batches: ort.InferenceSession.FeedsType[] }
  tokens: number
  ms: { pipeline: number[]; rawDefaults: number[]; rawDocent: number[] }
  vectors: Float32Array[]
}

async function runner(label: string, dir: string, texts: string[]): Promise<Runner> {
  const pipeline = await loadEmbedder(dir)
  const defaults = await rawEncoder(dir)
  const docent = await rawEncoder(dir, ONNX_SESSION_OPTIONS as ort.InferenceSession.SessionOptions)
  // The runtime at its best: inputs sorted by length, 16 a run, so a batch pads little (as the pipeline batches).
  const encoded = texts.map((t) => defaults.encoder.encode(t)).sort((a, b) => a.ids.length - b.ids.length)
  const batches: ort.InferenceSession.FeedsType[] = []
  for (let i = 0; i < encoded.length; i += 16) batches.push(defaults.feeds(encoded.slice(i, i + 16)))
  const tokens = texts.reduce((s, t) => s + Math.min(pipeline.countTokens(t), pipeline.maxTokens), 0)
  const vectors = await pipeline.embedDocuments(texts) // also the warm-up
  for (const s of [defaults.session, docent.session]) for (const feeds of batches) await s.run(feeds)
  return {
    label,
    pipeline,
    raw: { defaults: defaults.session, docent: docent.session, batches },
    tokens,
    ms: { pipeline: [], rawDefaults: [], rawDocent: [] },
    vectors,
  }
}

export async function benchQuant(opts: {
  models: string
  rounds?: number
  passages?: number
  imports?: boolean
}): Promise<Record<string, unknown>> {
  const rounds = opts.rounds ?? 5
  const present = MODELS.map((m) => ({ ...m, dir: path.join(opts.models, 'embedding', m.name) })).filter((m) => {
    if (existsSync(m.dir)) return true
    if (m.required) throw new Error(`${m.dir} is missing: npm run models:dev -- ${opts.models} --only embedding --all-embedders`)
    return false
  })
  const work = await tempDir('docent-bench-quant-')
  try {
    // Without imports, the passages come from a keyword-only import (the same files, chunked alike).
    const toImport = [...(opts.imports === false ? [] : present), { label: 'no model (keyword only)', dir: null }]
    const { imports, texts } = await importEach(toImport, work.dir, opts.passages ?? 64)
    if (opts.imports !== false) printImports(imports)

    const runners: Runner[] = []
    for (const m of present) runners.push(await runner(m.label, m.dir, texts))
    for (let r = 0; r < rounds; r++) {
      for (const x of runners) {
        x.ms.pipeline.push(await timed(() => x.pipeline.embedDocuments(texts)))
        x.ms.rawDefaults.push(await timed(async () => void (await runAll(x.raw.defaults, x.raw.batches))))
        x.ms.rawDocent.push(await timed(async () => void (await runAll(x.raw.docent, x.raw.batches))))
      }
    }
    const fp32 = runners[0]!
    const base = { p: median(fp32.ms.pipeline), d: median(fp32.ms.rawDefaults), o: median(fp32.ms.rawDocent) }
    // On a busy machine the load changes between rounds more than within one: the median of each
    // round's own ratio (fp32's time over this model's, run moments apart) is the steadier figure.
    const perRound = (mine: number[], theirs: number[]) =>
      Math.round(100 * median(mine.map((ms, r) => (theirs[r] ?? 0) / ms))) / 100
    const throughput = runners.map((x) => {
      const p = median(x.ms.pipeline)
      const d = median(x.ms.rawDefaults)
      const o = median(x.ms.rawDocent)
      const cos = x.vectors.map((v, i) => cosine(v, fp32.vectors[i]!))
      return {
        weights: x.label,
        texts: texts.length,
        tokens: x.tokens,
        rounds,
        pipeline_ms: r1(p),
        raw_defaults_ms: r1(d),
        raw_docent_options_ms: r1(o),
        pipeline_tokens_per_s: Math.round(x.tokens / (p / 1000)),
        pipeline_x_fp32: Math.round((100 * base.p) / p) / 100,
        pipeline_x_fp32_per_round: perRound(x.ms.pipeline, fp32.ms.pipeline),
        raw_docent_options_x_fp32_per_round: perRound(x.ms.rawDocent, fp32.ms.rawDocent),
        raw_defaults_x_fp32: Math.round((100 * base.d) / d) / 100,
        raw_docent_options_x_fp32: Math.round((100 * base.o) / o) / 100,
        min_cosine_vs_fp32: Math.round(Math.min(...cos) * 10000) / 10000,
        all_ms: x.ms,
      }
    })
    for (const x of runners) {
      await x.pipeline.dispose()
      await x.raw.defaults.release()
      await x.raw.docent.release()
    }
    printTable(
      `Embedding ${texts.length} stored passages (${fp32.tokens} tokens), ${rounds} interleaved rounds, medians: Docent's pipeline and raw onnxruntime`,
      [
        'weights',
        'pipeline ms',
        'x fp32',
        'raw ms (ort defaults)',
        'x fp32',
        "raw ms (Docent's options)",
        'x fp32',
        'pipeline tokens/s',
        'x fp32 per round: pipeline',
        "raw (Docent's options)",
        'min cosine vs fp32',
      ],
      throughput.map((e) => [
        e.weights,
        e.pipeline_ms,
        e.pipeline_x_fp32,
        e.raw_defaults_ms,
        e.raw_defaults_x_fp32,
        e.raw_docent_options_ms,
        e.raw_docent_options_x_fp32,
        e.pipeline_tokens_per_s,
        e.pipeline_x_fp32_per_round,
        e.raw_docent_options_x_fp32_per_round,
        e.min_cosine_vs_fp32,
      ]),
    )
    return { imports, throughput }
  } finally {
    await work.cleanup()
  }
}

async function runAll(session: ort.InferenceSession, batches: ort.InferenceSession.FeedsType[]): Promise<void> {
  for (const feeds of batches) await session.run(feeds)
}

function printImports(imports: Record<string, unknown>[]): void {
  const keywordOnly = imports.at(-1)!.seconds as number
  printTable(
    'Import of the MCP docs: fp32 and int8 weights of the same embedder, and keyword-only (same run, one after the other)',
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
}
