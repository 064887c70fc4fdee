/**
 * Load checks in the app's own runtimes, run on the staged files before anything is moved into
 * the models folder: the engine's embedder loader (transformers.js on onnxruntime-node) and its
 * chat-model loader (node-llama-cpp), with the answer prompt and schema the engine uses.
 */
import { ANSWER_SCHEMA, ANSWER_SYSTEM_PROMPT, buildAnswerUserPrompt } from '../../src/engine/answer/prompt'
import { loadEmbedder } from '../../src/engine/models/runtime/embedder'
import { loadChatModel } from '../../src/engine/models/runtime/llm'
import { StepError } from './python'

/** Validation sentences: [0] and [1] are a query and its paraphrase, [2] is unrelated. */
export const SENTENCES = [
  'How do I cancel a request?',
  'Cancelling in-progress requests',
  'The weather in Paris is sunny today.',
  'Servers MUST respond to every JSON-RPC request with a result or an error, and clients SHOULD time out.',
]

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    dot += x * y
    na += x * x
    nb += y * y
  }
  return dot / Math.sqrt(na * nb)
}

/** Lowest cosine allowed between the engine's vector and the Python reference for one sentence. */
const MIN_AGREEMENT = 0.9999
/**
 * The same for int8 weights, compared with the fp32 reference: sentence-transformers reports int8
 * ONNX at 99.7% of fp32's quality; a vector this close ranks passages as fp32's does.
 */
export const QUANTIZED_MIN_AGREEMENT = 0.98
/** How much closer the paraphrase must be than the unrelated sentence. */
const MIN_MARGIN = 0.3

export async function verifyEmbedder(
  dir: string,
  referenceVectors: number[][],
  minAgreement = MIN_AGREEMENT,
): Promise<Record<string, unknown>> {
  const step = 'load check (loadEmbedder, @huggingface/transformers)'
  let embedder
  try {
    embedder = await loadEmbedder(dir)
  } catch (err) {
    throw new StepError(step, err instanceof Error ? err.message : String(err))
  }
  try {
    const vectors = await embedder.embedDocuments(SENTENCES)
    const agreement = Math.min(...vectors.map((v, i) => cosine(v, referenceVectors[i] ?? [])))
    if (!(agreement >= minAgreement)) {
      throw new StepError(step, `engine vectors disagree with the numpy reference (min cosine ${agreement.toFixed(6)})`)
    }
    const [q, related, unrelated] = vectors
    const related_ = cosine(q!, related!)
    const unrelated_ = cosine(q!, unrelated!)
    if (!(related_ - unrelated_ >= MIN_MARGIN)) {
      throw new StepError(
        step,
        `no semantic signal: cos(related) ${related_.toFixed(3)} vs cos(unrelated) ${unrelated_.toFixed(3)}`,
      )
    }
    return {
      runtime: 'loadEmbedder (src/engine/models/runtime/embedder.ts) on @huggingface/transformers + onnxruntime-node',
      id: embedder.id,
      dims: embedder.dims,
      maxTokens: embedder.maxTokens,
      minCosineVsNumpyReference: Number(agreement.toFixed(7)),
      cosineQueryRelated: Number(related_.toFixed(4)),
      cosineQueryUnrelated: Number(unrelated_.toFixed(4)),
      sentences: SENTENCES.slice(0, 3),
    }
  } finally {
    await embedder.dispose()
  }
}

const QA_PASSAGES = [
  {
    n: 1,
    chunk_id: 'c1',
    path: 'docs/cancellation.md',
    heading: 'Cancellation',
    kind: 'Specification',
    version: '2025-06-18',
    page: null,
    text: 'Either side can cancel an in-progress request by sending a notifications/cancelled notification that carries the requestId of the request to cancel and an optional reason string.',
  },
  {
    n: 2,
    chunk_id: 'c2',
    path: 'docs/ping.md',
    heading: 'Ping',
    kind: 'Specification',
    version: '2025-06-18',
    page: null,
    text: 'A ping request has no parameters; the receiver must respond promptly with an empty result.',
  },
]
export const QA_QUESTION = 'How do I cancel a request that is still running?'

export function qaPrompt(): { system: string; user: string; schema: object } {
  return {
    system: ANSWER_SYSTEM_PROMPT,
    user: buildAnswerUserPrompt(QA_QUESTION, QA_PASSAGES, 'the MCP specification'),
    schema: ANSWER_SCHEMA,
  }
}

/** Whether a reply is a schema-shaped, grounded answer: answerable, non-empty, citing passage 1. */
export function judgeAnswer(parsed: unknown): { validJson: boolean; useful: boolean } {
  if (typeof parsed !== 'object' || parsed === null) return { validJson: false, useful: false }
  const r = parsed as Record<string, unknown>
  const validJson =
    typeof r['answerable'] === 'boolean' &&
    typeof r['answer'] === 'string' &&
    Array.isArray(r['citations']) &&
    Array.isArray(r['unanswered_parts'])
  const answer = typeof r['answer'] === 'string' ? r['answer'] : ''
  const useful = validJson && r['answerable'] === true && /cancel/i.test(answer) && (r['citations'] as unknown[]).includes(1)
  return { validJson, useful }
}

export async function verifyLlm(file: string): Promise<Record<string, unknown>> {
  const step = 'load check (loadChatModel, node-llama-cpp)'
  const t0 = performance.now()
  let model
  try {
    model = await loadChatModel(file, { gpu: false, contextSize: 2048 })
  } catch (err) {
    throw new StepError(step, err instanceof Error ? err.message : String(err))
  }
  const loadMs = performance.now() - t0
  try {
    const { system, user, schema } = qaPrompt()
    const t1 = performance.now()
    const res = await model.generateJson({ system, user, schema, maxTokens: 200 })
    const genMs = performance.now() - t1
    if (res.tokensOut === 0 || res.raw.trim() === '') throw new StepError(step, 'the model generated nothing')
    return {
      runtime: 'loadChatModel (src/engine/models/runtime/llm.ts) on node-llama-cpp, CPU',
      id: model.id,
      chatFormat: model.chatFormat,
      contextSize: model.info.contextSize,
      threads: model.info.threads,
      loadSeconds: Number((loadMs / 1000).toFixed(2)),
      answerSeconds: Number((genMs / 1000).toFixed(2)),
      tokensIn: res.tokensIn,
      tokensOut: res.tokensOut,
      stopReason: res.stopReason,
      question: QA_QUESTION,
      reply: res.raw.slice(0, 400),
      ...judgeAnswer(res.parsed),
    }
  } finally {
    await model.dispose()
  }
}
