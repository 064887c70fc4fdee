import type { StopReason } from '../../shared/trace'

/**
 * What the answer pipeline needs from a chat model: the subset of models/llm.ts's ChatModel it
 * calls. Declared here, structurally, so the pipeline can be driven by a scripted model in tests
 * and by the real GGUF model in the app without importing node-llama-cpp.
 */

export interface GenerateArgs {
  system: string
  user: string
  maxTokens?: number
  temperature?: number
  onToken?: (text: string) => void
  /** While the prompt is read: tokens evaluated so far of those to evaluate (after what the model's cache already held). */
  onPromptProgress?: (read: number, total: number) => void
  signal?: AbortSignal
}

export interface GenerateJsonResult {
  raw: string
  parsed: unknown
  /** Tokens of the whole prompt; absent when the model does not count them. */
  promptTokens?: number
  /** Prompt tokens evaluated by this call (the rest came from the model's cache). */
  tokensIn: number
  tokensOut: number
  stopReason: StopReason
}

export interface ChatModelLike {
  id: string
  info: { gpu: string | false; contextSize: number; trainContextSize: number }
  /** The model's own token count, used to fit passages into its context (estimated when absent). */
  countTokens?(text: string): number
  generateJson(args: GenerateArgs & { schema: object }): Promise<GenerateJsonResult>
  /** Reads a system prompt ahead of its first use; a model that keeps its evaluated prompt then reuses it for every call. */
  warm?(system: string): Promise<void>
}

/** Fixture models have random weights: they prove the plumbing, never quality. */
export function isFixtureModel(id: string | null | undefined): boolean {
  return !!id && /tiny-random/i.test(id)
}
