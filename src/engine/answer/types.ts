import type { StopReason } from '../../shared/answer'

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
  signal?: AbortSignal
}

export interface GenerateJsonResult {
  raw: string
  parsed: unknown
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
}

/** Fixture models have random weights: they prove the plumbing, never quality. */
export function isFixtureModel(id: string | null | undefined): boolean {
  return !!id && /tiny-random/i.test(id)
}
