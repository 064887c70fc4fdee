import type { StopReason } from '../../shared/trace'

/**
 * What the engine needs of each model role, declared once. The runtimes in models/runtime/
 * implement them (ONNX in a worker thread, GGUF through node-llama-cpp); tests and evals drive
 * import, search and answering with scripted ones, without loading a native runtime.
 */

export type { StopReason }

/** A model of one role as loaded: the model, or null with the reason in words. */
export interface Loaded<T> {
  model: T | null
  problem: string | null
}

/** Counts text in a tokenizer's tokens: chunks are sized in the embedding model's own. */
export interface TokenCounter {
  /** Identifies the tokenizer, so a different tokenizer re-chunks documents (ingest/chunker.ts chunkerSignature). */
  id: string
  count(text: string): number
  /**
   * Counts of two texts that meet at whitespace or punctuation add up to the count of the two
   * joined, as a word-piece tokenizer's do (it splits there before it splits words); the
   * chunker then adds counts instead of counting a growing text again.
   */
  additive?: boolean
}

/**
 * Used until an embedding model is installed. Approximates a WordPiece tokenizer (a token per
 * punctuation mark and per six letters of a word, plus 25% for sub-word splits). It errs high, so chunks stay inside the
 * model's window; documents are re-chunked with the real tokenizer once it is available.
 */
export const approximateTokenCounter: TokenCounter = {
  id: 'approx-wordpiece-v1',
  count(text: string): number {
    let n = 0
    for (const m of text.matchAll(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)) n += Math.max(1, Math.ceil(m[0].length / 6))
    return Math.ceil(n * 1.25)
  },
}

/** What a search needs of the embedding model: a question as a vector. */
export interface QueryEmbedder {
  /** `embedding/<folder name>@<12 hex of sha256(onnx/model.onnx)>`; changes when the model file changes. */
  id: string
  /** Applies the query instruction prefix, if configured, then embeds. */
  embedQuery(text: string): Promise<Float32Array>
}

/** The embedding model: passages and questions as vectors, its tokenizer, and the memory it holds. */
export interface Embedder extends QueryEmbedder {
  dims: number
  /** Longest input in tokens, special tokens included; longer inputs are truncated. */
  maxTokens: number
  /** Tokens of this model's tokenizer, without special tokens. Synchronous. */
  countTokens(text: string): number
  /** L2-normalised vectors, in input order; batched internally. */
  embedDocuments(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>
  dispose(): Promise<void>
}

/** A cross-encoder: how well each passage answers the query. */
export interface Reranker {
  /** `reranker/<folder name>@<12 hex of sha256(onnx/model.onnx)>`. */
  id: string
  /** Raw relevance logit per passage (higher = more relevant; not a probability), in input order. */
  score(query: string, passages: string[], signal?: AbortSignal): Promise<number[]>
}

export interface GenerateArgs {
  system: string
  user: string
  /** Upper bound on generated tokens (default 1024). */
  maxTokens?: number
  /** Sampling temperature; 0 (the default) is greedy and deterministic. */
  temperature?: number
  /** Sampling seed, used when temperature > 0. */
  seed?: number
  /** Called with each decoded text chunk as it is generated. */
  onToken?: (text: string) => void
  /** While the prompt is read: tokens evaluated so far of those to evaluate (after what the model's cache already held). */
  onPromptProgress?: (read: number, total: number) => void
  /** Aborting stops generation; the call then resolves with what was generated and stopReason 'abort'. */
  signal?: AbortSignal
}

/** A call whose reply is JSON: decoding is constrained to the schema (grammars do not enforce ranges, lengths or patterns). */
export interface GenerateJsonArgs extends GenerateArgs {
  /** JSON schema (the subset node-llama-cpp's GBNF converter supports). */
  schema: object
}

export interface GenerateResult {
  /** The generated text, verbatim. */
  raw: string
  /** `JSON.parse(raw)`, or undefined when it does not parse (or for plain text). */
  parsed: unknown
  /** Tokens of the whole prompt (system + user + chat template); absent when the model does not count them. */
  promptTokens?: number
  /** Prompt tokens evaluated by this call (the rest came from the model's cache). */
  tokensIn: number
  tokensOut: number
  stopReason: StopReason
}

/** What answering needs of a chat model. */
export interface ChatModel {
  id: string
  info: { gpu: string | false; contextSize: number; trainContextSize: number }
  /** The model's own token count, used to fit passages into its context (estimated when absent). */
  countTokens?(text: string): number
  generateJson(args: GenerateJsonArgs): Promise<GenerateResult>
  /** Reads a system prompt ahead of its first use; a model that keeps its evaluated prompt then reuses it for every call. */
  warm?(system: string): Promise<void>
}
