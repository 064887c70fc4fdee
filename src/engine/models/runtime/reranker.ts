/**
 * Cross-encoder reranker: an ONNX BertForSequenceClassification-style model with a single
 * logit (e.g. bge-reranker, ms-marco-MiniLM cross-encoders), run on CPU with
 * @huggingface/transformers + onnxruntime-node, offline.
 *
 * Folder layout (`<models>/reranker/<name>/`): config.json, tokenizer.json,
 * tokenizer_config.json, onnx/model.onnx.
 */
import path from 'node:path'
import { AutoModelForSequenceClassification } from '@huggingface/transformers'
import type { Tensor } from '@huggingface/transformers'
import type { Reranker } from '../../core/model-ports'
import { errorMessage, ModelLoadError } from './errors'
import {
  checkModelFolder,
  configureOfflineEnv,
  loadOnnxModel,
  readJsonFile,
  runBatched,
  type TemplateEncoder,
} from './onnx-common'

/** The reranker as this runtime loads it: the engine's Reranker, with its window and the memory it holds. */
export interface OnnxReranker extends Reranker {
  /** Longest (query, passage) input in tokens, special tokens included; longer pairs are truncated (passage first). */
  maxTokens: number
  dispose(): Promise<void>
}

export interface RerankerOptions {
  /** Most pairs per ONNX run (default 16). */
  batchSize?: number
  /** Most padded tokens per ONNX run (default 4096, at least maxTokens): bounds how long one run blocks the thread. */
  maxBatchTokens?: number
}

const DEFAULT_BATCH = 16
const DEFAULT_BATCH_TOKENS = 4096

export async function loadReranker(dir: string, opts: RerankerOptions = {}): Promise<OnnxReranker> {
  configureOfflineEnv()
  const abs = await checkModelFolder(dir, 'reranker')
  const config = await readJsonFile(path.join(abs, 'config.json'), abs)
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? DEFAULT_BATCH))

  const { model, encoder, inputNames, id, maxTokens } = await loadOnnxModel(
    abs,
    'reranker',
    AutoModelForSequenceClassification,
    config,
  )
  let disposed = false

  const runBatch = async (batch: ReturnType<TemplateEncoder['encodePair']>[]): Promise<number[]> => {
    if (disposed) throw new Error(`reranker ${id} has been disposed`)
    const out = (await model(encoder.toTensors(batch, inputNames))) as Record<string, Tensor>
    const logits = out['logits'] ?? Object.values(out)[0]
    if (!logits) throw new Error(`reranker ${id}: the model returned no logits`)
    const [rows = 0, labels = 1] = logits.dims
    if (rows !== batch.length) throw new Error(`reranker ${id}: expected ${batch.length} rows of logits, got ${rows}`)
    const data = logits.data as Float32Array
    // One logit per pair; with several labels, take the first (documented single-logit models only).
    return Array.from({ length: rows }, (_, r) => data[r * labels] ?? Number.NaN)
  }

  const batching = { batchSize, maxBatchTokens: Math.max(maxTokens, opts.maxBatchTokens ?? DEFAULT_BATCH_TOKENS) }
  const score = async (query: string, passages: string[], signal?: AbortSignal): Promise<number[]> => {
    if (passages.length === 0) return []
    return runBatched(
      passages,
      (p) => p.length,
      (p) => encoder.encodePair(query, p),
      batching,
      runBatch,
      signal,
    )
  }

  try {
    const probe = await score('warm up', ['warm up'])
    if (probe.length !== 1 || !Number.isFinite(probe[0])) throw new Error('no finite logit')
  } catch (err) {
    await model.dispose().catch(() => undefined)
    throw new ModelLoadError(abs, `the ONNX model in ${abs} does not run: ${errorMessage(err)}`, { cause: err })
  }

  return {
    id,
    maxTokens,
    score,
    dispose: async () => {
      if (disposed) return
      disposed = true
      await model.dispose()
    },
  }
}
