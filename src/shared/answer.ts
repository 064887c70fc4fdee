import { z } from 'zod'
import { HitScores, Scope } from './search'

/**
 * Asking a question: the request, the events streamed while it is answered, and the result.
 * Shared by the engine, the CLI, the MCP server and the renderer: plain data only, no Node,
 * Electron or DOM imports.
 */

export const AskRequest = z.object({
  question: z.string().trim().min(1).max(4000),
  /** Continue a conversation; omitted starts a new thread. */
  threadId: z.string().min(1).max(100).optional(),
  scope: Scope.default({ collections: [], version: 'all' }),
  /** Return the best passages without generating text, even when a language model is installed. */
  searchOnly: z.boolean().optional(),
})
export type AskRequest = z.input<typeof AskRequest>
export type AskRequestParsed = z.output<typeof AskRequest>

export const AbstainReason = z.enum(['no_relevant_sources', 'not_in_context', 'unverifiable_citations', 'off_topic', 'smalltalk'])
export type AbstainReason = z.infer<typeof AbstainReason>

export const AskMode = z.enum(['answer', 'search-only', 'smalltalk'])
export type AskMode = z.infer<typeof AskMode>

/** A passage the answer cites, rendered from stored metadata (never from model output). */
export const Citation = z.object({
  /** The passage number used by the inline [n] markers in the answer. */
  n: z.number().int().positive(),
  chunk_id: z.string(),
  path: z.string(),
  heading: z.string(),
  version: z.string().nullable(),
  page: z.number().int().nullable(),
  kind: z.string().nullable(),
  collection: z.string(),
})
export type Citation = z.infer<typeof Citation>

/** A nearby section listed when the answer abstains ("the closest sections were ..."). */
export const ClosestSection = z.object({
  chunk_id: z.string(),
  collection: z.string(),
  path: z.string(),
  heading: z.string(),
  version: z.string().nullable(),
  kind: z.string().nullable(),
  page: z.number().int().nullable(),
  /** The start of the passage, for a preview. */
  snippet: z.string(),
  scores: HitScores,
})
export type ClosestSection = z.infer<typeof ClosestSection>

export const AskResult = z.object({
  /** The verified answer with inline [n] markers; null when abstaining or in search-only mode. */
  answer: z.string().nullable(),
  abstained: z.boolean(),
  reason: AbstainReason.nullable(),
  /** Cited passages (search-only mode: every passage returned). */
  citations: z.array(Citation),
  /** Chunk ids of the passages given to the model, in prompt order (passage n is index n-1). */
  passages: z.array(z.string()),
  /** For abstentions: the sections that came closest, so the person can look themselves. */
  closest: z.array(ClosestSection),
  /** Parts of the question the passages did not answer (partial answers). */
  unanswered_parts: z.array(z.string()),
  /** Verification findings that did not block the answer, e.g. a number not found in the cited passages. */
  warnings: z.array(z.string()),
  /** Why a stage ran with less than it should have (no reranker, no embedding model), in plain words. */
  notices: z.array(z.string()),
  /** True when retrieval or the gate ran without a model it normally uses. */
  degraded: z.boolean(),
  mode: AskMode,
  /** Served from the answer cache (the index has not changed since it was verified). */
  cached: z.boolean(),
  trace_id: z.string(),
  thread_id: z.string(),
  /** The standalone question used for retrieval when a follow-up was rewritten; else null. */
  rewritten_question: z.string().nullable(),
  /** What was searched, in words: "the 2025-03-26 docs". */
  scope_label: z.string(),
})
export type AskResult = z.infer<typeof AskResult>

export const AskStage = z.enum(['route', 'rewrite', 'cache', 'search', 'gate', 'read', 'generate', 'verify', 'retry', 'done'])
export type AskStage = z.infer<typeof AskStage>

export const AskEvent = z.discriminatedUnion('type', [
  /** A stage started, described in words a person understands ("Searching the 2025-03-26 docs"). */
  z.object({ type: z.literal('stage'), stage: AskStage, message: z.string() }),
  /**
   * Answer text as the model writes it. It is a draft: it is shown before verification, and the
   * final event's result replaces it (it may be an abstention). `attempt` starts a new draft.
   */
  z.object({ type: z.literal('token'), text: z.string(), attempt: z.number().int().positive() }),
  z.object({ type: z.literal('final'), result: AskResult }),
])
export type AskEvent = z.infer<typeof AskEvent>

/** One stored turn of a conversation thread, for the chat pane. */
export const ThreadMessage = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string().nullable(),
  trace_id: z.string().nullable(),
  created_at: z.string(),
})
export type ThreadMessage = z.infer<typeof ThreadMessage>
