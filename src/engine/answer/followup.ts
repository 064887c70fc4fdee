import type { ModelRewrite } from '../../shared/trace'
import type { ChatModel } from '../core/model-ports'

/**
 * Follow-up questions ("when was it removed?") are rewritten into a standalone question before
 * retrieval, because retrieval sees only this turn's text. Two ways, both kept:
 *  - `rewriteFollowUpWithModel`: the chat model rewrites from recent turns under a JSON schema;
 *  - `rewriteFollowUpDeterministic`: no model needed; when the question is short and leans on a
 *    pronoun, the previous question's subject is put in front of it.
 * The rewritten question is only used to search; the answer still comes only from the passages
 * retrieved for this turn.
 */

export interface PriorTurn {
  /** The question as asked. */
  question: string
  /** The standalone form used for retrieval (equal to question when not rewritten). */
  standalone: string
  /** The answer given, if any (abstentions have none). */
  answer: string | null
}

const PRONOUN = /\b(it|its|it's|that|this|they|them|their|these|those|there|one|ones|he|she|which)\b/i
const CONTINUATION = /^\s*(and|but|also|what about|how about|and what|what if|then|so|or)\b/i
const MAX_FOLLOW_UP_WORDS = 10

/** A question that cannot stand on its own: short, and either refers back with a pronoun or continues the last one. */
export function looksLikeFollowUp(question: string): boolean {
  const words = question.trim().split(/\s+/).filter(Boolean)
  if (words.length === 0 || words.length > MAX_FOLLOW_UP_WORDS) return CONTINUATION.test(question)
  return PRONOUN.test(question) || CONTINUATION.test(question)
}

/**
 * The subject of a question: the question without its leading interrogative and auxiliary words
 * and its trailing punctuation ("What is the Mcp-Session-Id header?" -> "the Mcp-Session-Id header").
 */
export function questionSubject(question: string): string {
  let s = question.trim().replace(/[?!.\s]+$/, '')
  for (let i = 0; i < 3; i++) {
    const next = s.replace(
      /^(what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|should|would|will|may|might|must|has|have|had|tell me|explain|describe|about|in|on|for|with|the ways?|exactly|much|many|long|often|i|we|you|a client|a server)\b[\s,]*/i,
      '',
    )
    if (next === s) break
    s = next
  }
  return s.trim() || question.trim().replace(/[?!.\s]+$/, '')
}

/** Deterministic fallback: "When was it removed?" after "What is JSON-RPC batching?" -> "JSON-RPC batching: When was it removed?". */
export function rewriteFollowUpDeterministic(question: string, history: PriorTurn[]): string | null {
  const prev = history.at(-1)
  if (!prev || !looksLikeFollowUp(question)) return null
  const subject = questionSubject(prev.standalone || prev.question)
  if (!subject) return null
  return `${subject}: ${question.trim()}`
}

export const STANDALONE_SCHEMA = {
  type: 'object',
  properties: { standalone_question: { type: 'string' } },
  required: ['standalone_question'],
  additionalProperties: false,
} as const

const REWRITE_SYSTEM = [
  'You rewrite the last message of a conversation into one standalone question that can be understood without the conversation.',
  'Replace pronouns such as "it", "that" or "they" with what they refer to in earlier turns.',
  'Keep exact names, identifiers, error codes and version numbers unchanged. Do not answer the question. Do not add new topics.',
  'If the last message already stands on its own, return it unchanged.',
].join('\n')

export async function rewriteFollowUpWithModel(
  chat: ChatModel,
  question: string,
  history: PriorTurn[],
  signal?: AbortSignal,
): Promise<ModelRewrite> {
  const turns = history.slice(-3)
  const convo = turns
    .map((t) => `User: ${t.question}\nAssistant: ${t.answer ? t.answer.slice(0, 600) : '(no answer)'}`)
    .join('\n\n')
  const user = `<conversation>\n${convo}\n</conversation>\n\nLast message: ${question.trim()}\n\nReturn the standalone question.`
  const res = await chat.generateJson({
    system: REWRITE_SYSTEM,
    user,
    schema: STANDALONE_SCHEMA,
    maxTokens: 120,
    temperature: 0,
    ...(signal ? { signal } : {}),
  })
  const parsed = res.parsed as { standalone_question?: unknown } | null
  const text = typeof parsed?.standalone_question === 'string' ? parsed.standalone_question.replace(/\s+/g, ' ').trim() : ''
  // A rewrite that is empty or rambles is worse than the deterministic one.
  const problem = !text ? 'the model returned no standalone question' : text.length > 400 ? 'the rewrite was too long' : null
  return { standalone: problem ? null : text, raw: res.raw, tokensIn: res.tokensIn, tokensOut: res.tokensOut, problem }
}
