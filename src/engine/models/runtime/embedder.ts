/**
 * Sentence embedder: an ONNX feature-extraction model (BERT-style, e.g. bge-small) run with
 * @huggingface/transformers on onnxruntime-node, CPU only, never touching the network.
 *
 * Folder layout (`<models>/embedding/<name>/`): config.json, tokenizer.json,
 * tokenizer_config.json, onnx/model.onnx, and optionally docent.json:
 *   { "pooling": "cls" | "mean", "queryPrefix": "...", "documentPrefix": "...", "maxTokens": 512 }
 * Without docent.json the pooling comes from a sentence-transformers `1_Pooling/config.json`
 * when present, else mean pooling; no prefixes.
 *
 * Event loop (measured, onnxruntime-node 1.30.0 via transformers.js 4.3.1, 2-core dev box):
 * `session.run` is NOT asynchronous work off the main thread. onnxruntime-node wraps a
 * synchronous native run in `new Promise(r => setImmediate(() => r(binding.run(...))))`, so the
 * whole inference blocks the event loop. Experiment: one run of 16 x 512 tokens on the fixture
 * took ~150 ms and a 1 ms setInterval fired 0 times during it. What this module does about it
 * (runBatched in onnx-common.ts): tokenise per batch instead of all texts up front (256 texts
 * x 512 tokens took ~260 ms of tokenisation in one go), cap each run at maxBatchTokens padded
 * tokens (default 4096), and yield to the event loop before every run. Result with a 10 ms
 * setInterval while embedding 128 texts x 512 tokens (16 runs): 1.0 s total, 16 ticks, median
 * gap 60 ms, worst 113 ms; with the machine heavily loaded by other processes 2.5 s, 16 ticks,
 * median 141 ms, worst 268 ms. So the loop gets a turn between runs, never during one: the
 * worst stall is one run, which for bge-small (384 dims, 12 layers) will be far longer than for
 * the fixture. So the engine loads it in a worker thread (embedder-thread.ts), and its own
 * event loop is never stalled by inference; this module runs inside that thread.
 */
import path from 'node:path'
import { stat } from 'node:fs/promises'
import { AutoModel } from '@huggingface/transformers'
import type { Tensor } from '@huggingface/transformers'
import { z } from 'zod'
import type { Embedder } from '../../core/model-ports'
import { tokenCounterFor } from './token-count'
import { errorMessage, ModelLoadError } from './errors'
import {
  checkModelFolder,
  configureOfflineEnv,
  loadOnnxModel,
  readJsonFile,
  runBatched,
  type TemplateEncoder,
} from './onnx-common'

export type Pooling = 'cls' | 'mean'

export interface EmbedderOptions {
  /** Prepended to queries (bge: "Represent this sentence for searching relevant passages: "). Overrides docent.json. */
  queryPrefix?: string
  /** Prepended to documents (e5: "passage: "). Overrides docent.json. */
  documentPrefix?: string
  /** Overrides docent.json. */
  pooling?: Pooling
  /** Most texts per ONNX run (default 16). */
  batchSize?: number
  /** Most padded tokens per ONNX run (default 4096, at least maxTokens): bounds how long one run blocks the thread. */
  maxBatchTokens?: number
}

const DocentJson = z.looseObject({
  pooling: z.enum(['cls', 'mean']).optional(),
  queryPrefix: z.string().optional(),
  documentPrefix: z.string().optional(),
  maxTokens: z.number().int().positive().optional(),
})

const DEFAULT_BATCH = 16
const DEFAULT_BATCH_TOKENS = 4096

export async function loadEmbedder(dir: string, opts: EmbedderOptions = {}): Promise<Embedder> {
  configureOfflineEnv()
  const abs = await checkModelFolder(dir, 'embedding')
  const config = await readJsonFile(path.join(abs, 'config.json'), abs)
  const docent = await readDocentJson(abs)
  const pooling: Pooling = opts.pooling ?? docent.pooling ?? (await poolingFromSentenceTransformers(abs)) ?? 'mean'
  const queryPrefix = opts.queryPrefix ?? docent.queryPrefix ?? ''
  const documentPrefix = opts.documentPrefix ?? docent.documentPrefix ?? ''
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? DEFAULT_BATCH))

  const { tokenizer, model, encoder, inputNames, id, maxTokens } = await loadOnnxModel(
    abs,
    'embedding',
    AutoModel,
    config,
    docent.maxTokens ?? Infinity,
  )
  let disposed = false

  const runBatch = async (batch: ReturnType<TemplateEncoder['encode']>[]): Promise<Float32Array[]> => {
    if (disposed) throw new Error(`embedder ${id} has been disposed`)
    const inputs = encoder.toTensors(batch, inputNames)
    const out = (await model(inputs)) as Record<string, Tensor>
    const hidden = out['last_hidden_state'] ?? out['token_embeddings'] ?? out['sentence_embedding'] ?? Object.values(out)[0]
    if (!hidden) throw new Error(`embedder ${id}: the model returned no output`)
    return pool(hidden, inputs['attention_mask'] ?? null, pooling)
  }

  const batching = { batchSize, maxBatchTokens: Math.max(maxTokens, opts.maxBatchTokens ?? DEFAULT_BATCH_TOKENS) }
  const embed = async (texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> => {
    if (texts.length === 0) return []
    return runBatched(
      texts,
      (t) => t.length,
      (t) => encoder.encode(t),
      batching,
      runBatch,
      signal,
    )
  }

  // Warm-up run: proves the graph executes and gives the true output width.
  let dims: number
  try {
    const probe = await embed(['warm up'])
    dims = probe[0]?.length ?? 0
    if (dims === 0) throw new Error('empty embedding')
  } catch (err) {
    await model.dispose().catch(() => undefined)
    throw new ModelLoadError(abs, `the ONNX model in ${abs} does not run: ${errorMessage(err)}`, { cause: err })
  }

  const countTokens = await tokenCounterFor(abs, (text) => tokenizer.encode(text, { add_special_tokens: false }).length)
  return {
    id,
    dims,
    maxTokens,
    countTokens,
    embedDocuments: (texts, signal) => embed(documentPrefix ? texts.map((t) => documentPrefix + t) : texts, signal),
    embedQuery: async (text) => {
      const [v] = await embed([queryPrefix + text])
      if (!v) throw new Error(`embedder ${id}: no vector for the query`)
      return v
    },
    dispose: async () => {
      if (disposed) return
      disposed = true
      await model.dispose()
    },
  }
}

async function readDocentJson(abs: string): Promise<z.infer<typeof DocentJson>> {
  const file = path.join(abs, 'docent.json')
  try {
    await stat(file)
  } catch {
    return {}
  }
  const parsed = DocentJson.safeParse(await readJsonFile(file, abs))
  if (!parsed.success) {
    throw new ModelLoadError(
      abs,
      `${file} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    )
  }
  return parsed.data
}

/** Reads the pooling mode of a sentence-transformers export (`1_Pooling/config.json`), if any. */
async function poolingFromSentenceTransformers(abs: string): Promise<Pooling | undefined> {
  const file = path.join(abs, '1_Pooling', 'config.json')
  try {
    await stat(file)
  } catch {
    return undefined
  }
  const cfg = await readJsonFile(file, abs)
  if (cfg['pooling_mode_cls_token'] === true) return 'cls'
  if (cfg['pooling_mode_mean_tokens'] === true) return 'mean'
  return undefined
}

/** CLS or masked-mean pooling over [batch, seq, dims] (or pass-through of [batch, dims]), then L2 normalisation. */
function pool(hidden: Tensor, mask: Tensor | null, pooling: Pooling): Float32Array[] {
  const dimsOf = hidden.dims
  const data = hidden.data as Float32Array
  const out: Float32Array[] = []
  if (dimsOf.length === 2) {
    const [rows = 0, width = 0] = dimsOf
    for (let r = 0; r < rows; r++) out.push(l2normalise(data.slice(r * width, (r + 1) * width)))
    return out
  }
  const [rows = 0, seq = 0, width = 0] = dimsOf
  const maskData = mask ? (mask.data as BigInt64Array) : null
  for (let r = 0; r < rows; r++) {
    const v = new Float32Array(width)
    if (pooling === 'cls') {
      v.set(data.subarray(r * seq * width, r * seq * width + width))
    } else {
      let n = 0
      for (let s = 0; s < seq; s++) {
        if (maskData && maskData[r * seq + s] === 0n) continue
        const base = (r * seq + s) * width
        for (let d = 0; d < width; d++) v[d] = (v[d] ?? 0) + (data[base + d] ?? 0)
        n++
      }
      if (n > 0) for (let d = 0; d < width; d++) v[d] = (v[d] ?? 0) / n
    }
    out.push(l2normalise(v))
  }
  return out
}

function l2normalise(v: Float32Array): Float32Array {
  let sum = 0
  for (const x of v) sum += x * x
  const norm = Math.sqrt(sum)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / norm
  return v
}
