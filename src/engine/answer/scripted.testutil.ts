import type { ChatModel, GenerateJsonArgs, GenerateResult, Reranker } from '../core/model-ports'
import { splitLegacyAnswer } from './verify'

/**
 * Test doubles for the answer pipeline. A scripted chat model replies with the given texts in
 * order (streaming them through onToken like a real model) and records every call; a reply may be
 * a function of the call, to answer from what the prompt actually contained.
 */

export type ScriptedReply = string | object | ((args: GenerateJsonArgs) => string | object)

export interface RecordedCall {
  system: string
  user: string
  schema: object
}

export class ScriptedChat implements ChatModel {
  readonly calls: RecordedCall[] = []
  readonly info = { gpu: false as const, contextSize: 8192, trainContextSize: 8192 }

  constructor(
    private readonly replies: ScriptedReply[],
    readonly id = 'scripted-chat',
  ) {}

  /** More replies for later calls. */
  push(...replies: ScriptedReply[]): void {
    this.replies.push(...replies)
  }

  async generateJson(args: GenerateJsonArgs): Promise<GenerateResult> {
    this.calls.push({ system: args.system, user: args.user, schema: args.schema })
    const next = this.replies.shift()
    if (next === undefined) throw new Error(`ScriptedChat: no reply scripted for call ${this.calls.length}`)
    const value = typeof next === 'function' ? next(args) : next
    const raw = typeof value === 'string' ? value : JSON.stringify(value)
    for (let i = 0; i < raw.length; i += 7) args.onToken?.(raw.slice(i, i + 7))
    return {
      raw,
      parsed: parseOrNull(raw),
      tokensIn: Math.ceil(args.user.length / 4),
      tokensOut: Math.ceil(raw.length / 4),
      stopReason: 'eos',
    }
  }
}

function parseOrNull(raw: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    return null
  }
}

/**
 * A reply in the answer schema, written as one string the way a person reads it: each sentence
 * cites its own [n] markers (or, without any marker, every sentence cites `citations`).
 */
export function reply(
  answer: string,
  citations: number[],
  extra: { answerable?: boolean; unanswered_parts?: string[] } = {},
): object {
  const sentences = splitLegacyAnswer(answer, citations).map((s) => ({ text: s.text, cites: s.cites }))
  return { answerable: extra.answerable ?? true, sentences, unanswered_parts: extra.unanswered_parts ?? [] }
}

export const NOT_IN_CONTEXT = { answerable: false, sentences: [], unanswered_parts: [] }

const STOP = new Set([
  'what',
  'when',
  'where',
  'which',
  'does',
  'with',
  'that',
  'this',
  'from',
  'have',
  'should',
  'there',
  'about',
  'into',
  'your',
  'they',
  'their',
  'good',
  'make',
])

function contentWords(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[a-z0-9][a-z0-9-]{3,}/g) ?? [])].filter((w) => !STOP.has(w))
}

/**
 * A stand-in cross-encoder: the share of the query's content words found in the passage, mapped
 * onto a logit-like range [-8, 2]. Unrelated passages score -8, far below a gate at 0.
 */
export class OverlapReranker implements Reranker {
  readonly id = 'scripted-overlap-reranker'
  calls = 0

  async score(query: string, passages: string[]): Promise<number[]> {
    this.calls++
    const words = contentWords(query)
    return passages.map((p) => {
      const text = p.toLowerCase()
      const share = words.length ? words.filter((w) => text.includes(w)).length / words.length : 0
      return Math.round((10 * share - 8) * 1000) / 1000
    })
  }
}
