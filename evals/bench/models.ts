import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import * as ort from 'onnxruntime-node'
import { AutoTokenizer } from '@huggingface/transformers'
import { loadEmbedder } from '../../src/engine/models/runtime/embedder'
import { loadReranker } from '../../src/engine/models/runtime/reranker'
import { readJsonFile, TemplateEncoder, modelMaxTokens, configureOfflineEnv } from '../../src/engine/models/runtime/onnx-common'
import { defaultModelsDir } from '../../src/engine/paths'
import { fixtureModels } from '../../src/test-support/paths'
import { pct, printTable, r1, r3 } from './machine'
import { rng, sentence, vocabulary, zipfSampler } from './synthetic'

/**
 * Model throughput: embedding tokens/s and reranking latency for 20 and 50 candidates, each
 * measured through Docent's pipeline (tokenise with the model template, batch, run, pool,
 * normalise) and as the raw onnxruntime call on the same pre-built inputs, so the overhead ratio
 * says what the pipeline adds. Fixture models here; real models too when installed in the app's
 * models folder (quality is not measured: the fixture weights are random).
 */
const REPS = 5

function modelsFor(role: 'embedding' | 'reranker'): { label: string; dir: string }[] {
  const out = [
    {
      label: 'fixture',
      dir: path.join(fixtureModels, role, role === 'embedding' ? 'tiny-random-bert' : 'tiny-random-cross-encoder'),
    },
  ]
  const real = path.join(defaultModelsDir(), role)
  if (existsSync(real))
    for (const name of readdirSync(real)) if (!name.startsWith('.')) out.push({ label: name, dir: path.join(real, name) })
  return out
}

function passages(n: number, words: number): string[] {
  const r = rng(5)
  const vocab = vocabulary(5000, 5)
  const sample = zipfSampler(vocab.length, r)
  return Array.from({ length: n }, () =>
    Array.from({ length: Math.ceil(words / 12) }, () => sentence(vocab, sample, 12)).join(' '),
  )
}

export async function rawEncoder(dir: string, sessionOptions: ort.InferenceSession.SessionOptions = {}) {
  configureOfflineEnv()
  const tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true })
  const config = await readJsonFile(path.join(dir, 'config.json'), dir)
  const encoder = new TemplateEncoder(tokenizer, modelMaxTokens(config, tokenizer), dir)
  const session = await ort.InferenceSession.create(path.join(dir, 'onnx', 'model.onnx'), {
    executionProviders: ['cpu'],
    ...sessionOptions,
  })
  const feeds = (batch: ReturnType<TemplateEncoder['encode']>[]) => {
    const t = encoder.toTensors(batch, session.inputNames)
    return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, new ort.Tensor('int64', v.data as BigInt64Array, v.dims)]))
  }
  return { encoder, session, feeds }
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn()
  const times: number[] = []
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now()
    await fn()
    times.push(performance.now() - t0)
  }
  return pct(times, 50)
}

export async function benchModels(): Promise<Record<string, unknown>> {
  const embedRows: (string | number)[][] = []
  const rerankRows: (string | number)[][] = []
  const results: Record<string, unknown>[] = []

  for (const m of modelsFor('embedding')) {
    const texts = passages(64, 100)
    const embedder = await loadEmbedder(m.dir)
    const tokens = texts.reduce((s, t) => s + Math.min(embedder.countTokens(t), embedder.maxTokens), 0)
    const pipelineMs = await median(() => embedder.embedDocuments(texts))
    const raw = await rawEncoder(m.dir)
    const batches: ort.InferenceSession.FeedsType[] = []
    for (let i = 0; i < texts.length; i += 16) batches.push(raw.feeds(texts.slice(i, i + 16).map((t) => raw.encoder.encode(t))))
    const rawMs = await median(async () => {
      for (const feeds of batches) await raw.session.run(feeds)
    })
    await embedder.dispose()
    await raw.session.release()
    const row = {
      model: `${m.label} (${embedder.dims} dims)`,
      texts: texts.length,
      tokens,
      pipeline_ms: r1(pipelineMs),
      raw_ms: r1(rawMs),
      tokens_per_s: Math.round(tokens / (pipelineMs / 1000)),
      overhead: r3(pipelineMs / rawMs),
    }
    results.push({ kind: 'embedding', ...row })
    embedRows.push([row.model, row.texts, row.tokens, row.pipeline_ms, row.raw_ms, row.tokens_per_s, row.overhead])
  }

  for (const m of modelsFor('reranker')) {
    const reranker = await loadReranker(m.dir)
    const raw = await rawEncoder(m.dir)
    for (const n of [20, 50]) {
      const query = 'how does a server report that its list of tools changed'
      const cands = passages(n, 200)
      const pipelineMs = await median(() => reranker.score(query, cands))
      const batches: ort.InferenceSession.FeedsType[] = []
      for (let i = 0; i < cands.length; i += 16)
        batches.push(raw.feeds(cands.slice(i, i + 16).map((p) => raw.encoder.encodePair(query, p))))
      const rawMs = await median(async () => {
        for (const feeds of batches) await raw.session.run(feeds)
      })
      const row = {
        model: m.label,
        candidates: n,
        pipeline_ms: r1(pipelineMs),
        raw_ms: r1(rawMs),
        overhead: r3(pipelineMs / rawMs),
      }
      results.push({ kind: 'reranker', ...row })
      rerankRows.push([row.model, row.candidates, row.pipeline_ms, row.raw_ms, row.overhead])
    }
    await reranker.dispose()
    await raw.session.release()
  }

  printTable(
    `Embedding throughput (${REPS} runs, median; pipeline = tokenise + batch + run + pool + normalise; raw = onnxruntime run on the same pre-built tensors)`,
    ['model', 'texts', 'tokens', 'pipeline ms', 'raw ms', 'tokens/s', 'pipeline / raw'],
    embedRows,
  )
  printTable(
    'Reranking latency (median; same comparison)',
    ['model', 'candidates', 'pipeline ms', 'raw ms', 'pipeline / raw'],
    rerankRows,
  )
  return { models: results }
}
