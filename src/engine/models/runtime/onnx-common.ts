/**
 * Shared plumbing for the ONNX models (embedder and cross-encoder reranker) run through
 * @huggingface/transformers on onnxruntime-node (CPU): offline environment setup, folder
 * checks, model ids, and tokenisation with truncation that keeps the special tokens.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { AutoTokenizer, env, Tensor } from '@huggingface/transformers'
import type { PreTrainedModel, PreTrainedTokenizer } from '@huggingface/transformers'
import { errorMessage, ModelLoadError } from './errors'

let envConfigured = false

/**
 * Puts transformers.js in offline mode: no hub, no browser cache, no file-system cache writes.
 * Models are always given as absolute folder paths, which transformers.js reads directly.
 */
export function configureOfflineEnv(): void {
  if (envConfigured) return
  env.allowRemoteModels = false
  env.allowLocalModels = true
  env.useBrowserCache = false
  env.useFSCache = false
  envConfigured = true
}

export const ONNX_FILE = path.join('onnx', 'model.onnx')
const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', ONNX_FILE] as const

/**
 * Checks that `dir` is a model folder with everything transformers.js needs, and returns its
 * absolute path. Throws ModelLoadError naming the folder and the missing files.
 */
export async function checkModelFolder(dir: string, kind: string): Promise<string> {
  const abs = path.resolve(dir)
  let isDir: boolean
  try {
    isDir = (await stat(abs)).isDirectory()
  } catch {
    throw new ModelLoadError(abs, `${kind} model folder not found: ${abs}`, { missing: ['.'] })
  }
  if (!isDir) throw new ModelLoadError(abs, `${kind} model path is not a folder: ${abs}`, { missing: ['.'] })
  const missing: string[] = []
  for (const f of REQUIRED_FILES) {
    try {
      const s = await stat(path.join(abs, f))
      if (!s.isFile() || s.size === 0) missing.push(f)
    } catch {
      missing.push(f)
    }
  }
  if (missing.length > 0) {
    throw new ModelLoadError(abs, `${kind} model folder ${abs} is missing ${missing.join(', ')}`, { missing })
  }
  return abs
}

export async function readJsonFile(file: string, modelDir: string): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new ModelLoadError(modelDir, `cannot read ${file}: ${errorMessage(err)}`, { cause: err })
  }
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object')
    return value as Record<string, unknown>
  } catch (err) {
    throw new ModelLoadError(modelDir, `${file} is not valid JSON: ${errorMessage(err)}`, { cause: err })
  }
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** `<kind>/<folder name>@<first 12 hex of sha256(onnx/model.onnx)>`: a changed model file gives a new id. */
export async function modelId(kind: 'embedding' | 'reranker', absDir: string): Promise<string> {
  const digest = await sha256File(path.join(absDir, ONNX_FILE))
  return `${kind}/${path.basename(absDir)}@${digest.slice(0, 12)}`
}

/** The largest sequence length the model accepts: min(max_position_embeddings, tokenizer model_max_length). */
export function modelMaxTokens(config: Record<string, unknown>, tokenizer: PreTrainedTokenizer): number {
  const candidates: number[] = []
  const pos = config['max_position_embeddings']
  if (typeof pos === 'number' && pos > 0) {
    // RoBERTa-family models reserve padding_idx + 1 positions (514 -> 512 usable).
    const pad = config['model_type'] === 'xlm-roberta' || config['model_type'] === 'roberta' ? 2 : 0
    candidates.push(pos - pad)
  }
  const tokMax: unknown = tokenizer.model_max_length
  if (typeof tokMax === 'number' && tokMax > 0 && tokMax < 1_000_000) candidates.push(tokMax)
  return candidates.length > 0 ? Math.min(...candidates) : 512
}

interface Tok {
  id: number
  type: number
}

interface Encoded {
  ids: number[]
  types: number[]
}

/**
 * Encodes texts with the model's special-token template (e.g. `[CLS] a [SEP]` and
 * `[CLS] a [SEP] b [SEP]` for BERT) while truncating only the content, so the closing special
 * token survives truncation. transformers.js's own truncation simply cuts the array, dropping
 * the final [SEP].
 */
export class TemplateEncoder {
  readonly maxTokens: number
  readonly padId: number
  private readonly single: { prefix: Tok[]; suffix: Tok[] }
  private readonly pair: { prefix: Tok[]; middle: Tok[]; suffix: Tok[]; typeA: number; typeB: number }

  constructor(
    private readonly tokenizer: PreTrainedTokenizer,
    maxTokens: number,
    modelDir: string,
  ) {
    this.maxTokens = maxTokens
    const pad = tokenizer.pad_token_id
    this.padId = typeof pad === 'number' ? pad : 0
    const a = this.content('hello')
    const b = this.content('world')
    const single = this.rawEncode('hello', null)
    const pair = this.rawEncode('hello', 'world')
    const i = indexOfSeq(single.ids, a)
    const j = indexOfSeq(pair.ids, a)
    const k = j < 0 ? -1 : indexOfSeq(pair.ids, b, j + a.length)
    if (a.length === 0 || b.length === 0 || i < 0 || j < 0 || k < 0) {
      throw new ModelLoadError(modelDir, `cannot work out the special-token template of the tokenizer in ${modelDir}`)
    }
    const toks = (e: Encoded, from: number, to: number): Tok[] =>
      e.ids.slice(from, to).map((id, n) => ({ id, type: e.types[from + n] ?? 0 }))
    this.single = { prefix: toks(single, 0, i), suffix: toks(single, i + a.length, single.ids.length) }
    this.pair = {
      prefix: toks(pair, 0, j),
      middle: toks(pair, j + a.length, k),
      suffix: toks(pair, k + b.length, pair.ids.length),
      typeA: pair.types[j] ?? 0,
      typeB: pair.types[k] ?? 0,
    }
  }

  /** Content token ids of `text` (no special tokens). */
  content(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false })
  }

  /** One sequence with special tokens, content truncated so the total is at most maxTokens. */
  encode(text: string): Encoded {
    const { prefix, suffix } = this.single
    const room = Math.max(1, this.maxTokens - prefix.length - suffix.length)
    const body = this.content(text).slice(0, room)
    return assemble([prefix, body.map((id) => ({ id, type: 0 })), suffix])
  }

  /**
   * A (query, passage) pair with special tokens. The query keeps at most half the budget
   * (queries are short); the passage is truncated to what is left.
   */
  encodePair(query: string, passage: string): Encoded {
    const { prefix, middle, suffix, typeA, typeB } = this.pair
    const room = Math.max(2, this.maxTokens - prefix.length - middle.length - suffix.length)
    const q = this.content(query).slice(0, Math.max(1, Math.floor(room / 2)))
    const p = this.content(passage).slice(0, Math.max(1, room - q.length))
    return assemble([prefix, q.map((id) => ({ id, type: typeA })), middle, p.map((id) => ({ id, type: typeB })), suffix])
  }

  /** Right-pads a batch into int64 tensors. */
  toTensors(batch: Encoded[], inputNames: readonly string[] | null): Record<string, Tensor> {
    const rows = batch.length
    const cols = Math.max(...batch.map((e) => e.ids.length))
    const ids = new BigInt64Array(rows * cols).fill(BigInt(this.padId))
    const mask = new BigInt64Array(rows * cols)
    const types = new BigInt64Array(rows * cols)
    batch.forEach((e, r) => {
      for (let c = 0; c < e.ids.length; c++) {
        ids[r * cols + c] = BigInt(e.ids[c] ?? this.padId)
        mask[r * cols + c] = 1n
        types[r * cols + c] = BigInt(e.types[c] ?? 0)
      }
    })
    const all: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, [rows, cols]),
      attention_mask: new Tensor('int64', mask, [rows, cols]),
      token_type_ids: new Tensor('int64', types, [rows, cols]),
    }
    if (!inputNames) return all
    const picked: Record<string, Tensor> = {}
    for (const name of inputNames) {
      const t = all[name]
      if (t) picked[name] = t
    }
    return picked
  }

  private rawEncode(text: string, pair: string | null): Encoded {
    const out = this.tokenizer(text, { text_pair: pair, add_special_tokens: true, return_tensor: false }) as unknown as {
      input_ids: number[]
      token_type_ids?: number[]
    }
    return { ids: out.input_ids, types: out.token_type_ids ?? out.input_ids.map(() => 0) }
  }
}

function assemble(parts: (readonly Tok[])[]): Encoded {
  const ids: number[] = []
  const types: number[] = []
  for (const part of parts) {
    for (const t of part) {
      ids.push(t.id)
      types.push(t.type)
    }
  }
  return { ids, types }
}

function indexOfSeq(hay: readonly number[], needle: readonly number[], from = 0): number {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer
    return i
  }
  return -1
}

/** Input names of the model's main ONNX session, when transformers.js exposes them. */
export function sessionInputNames(model: unknown): readonly string[] | null {
  const sessions = (model as { sessions?: Record<string, { inputNames?: unknown }> }).sessions
  const names = sessions?.['model']?.inputNames
  return Array.isArray(names) && names.every((n) => typeof n === 'string') ? (names as string[]) : null
}

export interface BatchOptions {
  /** Most sequences per ONNX run. */
  batchSize: number
  /** Most padded tokens (rows x longest row) per ONNX run; bounds how long one run blocks. */
  maxBatchTokens: number
}

/** Lets timers, I/O and messages run before the next (blocking) ONNX run. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * Encodes and runs `items` through `fn` in batches, and returns the results in input order.
 *
 * onnxruntime-node's `session.run` returns a Promise but does the inference synchronously on
 * the calling thread (it is queued with setImmediate, then runs to completion), so each run
 * blocks the event loop for its whole duration. To keep the process responsive (timers, IPC,
 * cancellation), items are tokenised one group at a time rather than all up front, each run
 * is bounded by `maxBatchTokens`, and the event loop gets a turn before every run. `signal` is
 * checked between runs.
 *
 * Items are processed shortest first (by `sizeHint`, e.g. character length) so batches carry
 * little padding.
 */
export async function runBatched<I, E extends { ids: readonly number[] }, O>(
  items: readonly I[],
  sizeHint: (item: I) => number,
  encode: (item: I) => E,
  opts: BatchOptions,
  fn: (batch: E[]) => Promise<O[]>,
  signal?: AbortSignal,
): Promise<O[]> {
  const order = items.map((item, i) => ({ i, size: sizeHint(item) })).sort((x, y) => x.size - y.size || x.i - y.i)
  const out = new Array<O>(items.length)
  for (let start = 0; start < order.length; start += opts.batchSize) {
    signal?.throwIfAborted()
    const group = order.slice(start, start + opts.batchSize).map((o) => ({ i: o.i, e: encode(items[o.i] as I) }))
    group.sort((x, y) => x.e.ids.length - y.e.ids.length || x.i - y.i)
    let k = 0
    while (k < group.length) {
      // Grow the run while rows x longest row stays within the token budget (at least one row).
      let end = k + 1
      while (end < group.length && (end + 1 - k) * (group[end]?.e.ids.length ?? 0) <= opts.maxBatchTokens) end++
      const run = group.slice(k, end)
      await yieldToEventLoop()
      signal?.throwIfAborted()
      const results = await fn(run.map((g) => g.e))
      run.forEach((g, n) => {
        out[g.i] = results[n] as O
      })
      k = end
    }
  }
  return out
}

/**
 * Passed to onnxruntime-node for every ONNX model. onnxruntime fuses a residual Add followed by
 * LayerNormalization into its SkipLayerNormalization op, whose CPU kernel took 4x as long as the
 * two ops it replaces (onnxruntime 1.30, [16, 150, 384] float input, one thread: 5.0 ms against
 * 1.3 ms), and a BERT layer has two. Turning that one fusion off made either int8 embedder 1.1-1.2x
 * as fast (docs/benchmarks.md, `bench -- quant`); fp32 does not change, as onnxruntime does not
 * fuse its graph so. The results are the same.
 */
export const ONNX_SESSION_OPTIONS = {
  extra: { optimization: { disable_specified_optimizers: 'SkipLayerNormFusion' } },
}

/** What both ONNX models need once loaded: tokenizer, session, template encoder, input names and id. */
export interface LoadedOnnx {
  tokenizer: PreTrainedTokenizer
  model: PreTrainedModel
  encoder: TemplateEncoder
  inputNames: readonly string[] | null
  id: string
  maxTokens: number
}

/**
 * Loads the tokenizer and the ONNX session of a model folder with one of transformers.js' model
 * classes (AutoModel for embeddings, AutoModelForSequenceClassification for the cross-encoder),
 * turning every failure into a ModelLoadError that names the folder.
 */
export async function loadOnnxModel(
  abs: string,
  kind: 'embedding' | 'reranker',
  modelClass: { from_pretrained(dir: string, opts: Record<string, unknown>): Promise<PreTrainedModel> },
  config: Record<string, unknown>,
  maxTokensCap = Infinity,
): Promise<LoadedOnnx> {
  let tokenizer: PreTrainedTokenizer
  let model: PreTrainedModel
  try {
    tokenizer = await AutoTokenizer.from_pretrained(abs, { local_files_only: true })
  } catch (err) {
    throw new ModelLoadError(abs, `cannot load the tokenizer in ${abs}: ${errorMessage(err)}`, { cause: err })
  }
  try {
    model = await modelClass.from_pretrained(abs, {
      local_files_only: true,
      dtype: 'fp32',
      device: 'cpu',
      session_options: ONNX_SESSION_OPTIONS,
    })
  } catch (err) {
    throw new ModelLoadError(abs, `cannot load the ONNX model in ${abs}: ${errorMessage(err)}`, { cause: err })
  }
  const maxTokens = Math.min(maxTokensCap, modelMaxTokens(config, tokenizer))
  let encoder: TemplateEncoder
  try {
    encoder = new TemplateEncoder(tokenizer, maxTokens, abs)
  } catch (err) {
    await model.dispose().catch(() => undefined)
    throw err
  }
  return { tokenizer, model, encoder, inputNames: sessionInputNames(model), id: await modelId(kind, abs), maxTokens }
}
