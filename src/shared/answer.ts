import { z } from 'zod'
import { PassageRef, SamePlace } from './passage'
import { HitScores, Scope, ScopeInfo } from './search'

/**
 * Asking a question: the request, the events streamed while it is answered, and the result.
 * Shared by the engine, the CLI, the MCP server and the renderer: plain data only, no Node,
 * Electron or DOM imports.
 */

export const AskRequest = z.object({
  question: z.string().trim().min(1).max(4000),
  /** Continue a conversation; omitted starts a new thread. */
  threadId: z.string().min(1).max(100).optional(),
  scope: Scope.default({ collections: [], version: 'auto' }),
  /** Return the best passages without generating text, even when a language model is installed. */
  searchOnly: z.boolean().optional(),
})
export type AskRequest = z.input<typeof AskRequest>
export type AskRequestParsed = z.output<typeof AskRequest>

export const AbstainReason = z.enum(['no_relevant_sources', 'not_in_context', 'unverifiable_citations', 'off_topic', 'smalltalk'])
export type AbstainReason = z.infer<typeof AbstainReason>

export const AskMode = z.enum(['answer', 'search-only', 'smalltalk'])
export type AskMode = z.infer<typeof AskMode>

/** A citation's place: PassageRef's fields in the order `ask --json` has always printed them (results are parsed into contract order). */
const CitedPlace = PassageRef.pick({
  chunk_id: true,
  path: true,
  heading: true,
  version: true,
  page: true,
  kind: true,
  collection: true,
})

/** A passage the answer cites, rendered from stored metadata (never from model output). */
export const Citation = z.object({
  /** The passage number used by the inline [n] markers in the answer. */
  n: z.number().int().positive(),
  ...CitedPlace.shape,
  /** Where the same section stands word for word too (search.ts SearchHit.same_in); absent when nowhere. */
  same_in: z.array(SamePlace).max(200).optional(),
})
export type Citation = z.infer<typeof Citation>

/** A nearby section listed when the answer abstains ("the closest sections were ..."). */
export const ClosestSection = PassageRef.extend({
  /** The start of the passage, for a preview. */
  snippet: z.string(),
  scores: HitScores,
})
export type ClosestSection = z.infer<typeof ClosestSection>

/**
 * One sentence of a verified answer (claim-level citations): its text without markers, and the
 * numbers (Citation.n) of the passages it rests on. Every sentence shown passed the support check
 * against exactly those passages (answer/support.ts).
 */
export const AnswerSentence = z.object({
  text: z.string(),
  citations: z.array(z.number().int().positive()),
  /** The release its passages come from, when the answer's sources span releases (no version was chosen). */
  version: z.string().nullable().optional(),
  /**
   * Added by the engine, not written by the model, copied from its source: the rest of a procedure
   * the answer stopped in, the items of a list the answer introduced and did not give, or the
   * sentence that answers when the model's only restated the question or left out what it asks for.
   */
  added: z.enum(['procedure', 'list', 'quote']).optional(),
})
export type AnswerSentence = z.infer<typeof AnswerSentence>

/** Why a sentence failed the support check against the passages it cites. */
export const SupportFailure = z.enum([
  'no_citation',
  'unsupported_number',
  'unsupported_name',
  'unsupported_quote',
  'words_not_covered',
  'misattached',
  'not_similar',
  'points_only',
  /** A name or feature word of the sentence that the scoped release never mentions, or mentions only in guides (release rules). */
  'not_in_release',
  /** The question names an identifier that neither the sentence nor its passages mention: it answers something else (answer/off-target.ts). */
  'off_target',
  /** The sentence copies a passage sentence with "not" (or "never", "no longer"…) dropped or added: it says the opposite. */
  'opposite',
])
export type SupportFailure = z.infer<typeof SupportFailure>

/** A sentence the model wrote that the support check removed: shown as removed, never as verified. */
export const RemovedSentence = z.object({
  text: z.string(),
  /** Passage numbers as the model cited them (prompt order). */
  cited: z.array(z.number().int()),
  code: SupportFailure,
  /** In plain words: "the cited passages give .020 for long bowden extruders, not for direct drive". */
  reason: z.string(),
})
export type RemovedSentence = z.infer<typeof RemovedSentence>

export const AskResult = z.object({
  /** The verified answer with inline [n] markers; null when abstaining or in search-only mode. */
  answer: z.string().nullable(),
  abstained: z.boolean(),
  reason: AbstainReason.nullable(),
  /**
   * Cited passages, numbered 1..n in the order the answer first uses them; a passage no sentence
   * uses is not listed (search-only mode: every passage returned, in rank order).
   */
  citations: z.array(Citation),
  /** Chunk ids of the passages given to the model, in prompt order. */
  passages: z.array(z.string()),
  /** The answer sentence by sentence, each with its citations; absent on abstentions and on results stored before it existed. */
  sentences: z.array(AnswerSentence).optional(),
  /** Sentences the support check removed, with the reason: the UI and the CLI show them as removed. */
  removed: z.array(RemovedSentence).optional(),
  /**
   * Why there is no answer, in plain words, when the engine can say more than the reason code:
   * "The 2024-11-05 docs never mention audio; it first appears in 2025-03-26."
   */
  explanation: z.string().nullable().optional(),
  /** For abstentions: the sections that came closest, so the person can look themselves. */
  closest: z.array(ClosestSection),
  /** Parts of the question the passages did not answer (partial answers). */
  unanswered_parts: z.array(z.string()),
  /** Verification findings that did not block the answer, e.g. a number not found in the cited passages. */
  warnings: z.array(z.string()),
  /**
   * Numbers and quoted text in the answer, as it writes them, that none of its cited passages
   * contains: shown marked as not verified, never as verified. Absent on results stored before it existed.
   */
  unverified_claims: z.array(z.string()).optional(),
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
  /** What was searched, in words: "the 2025-03-26 docs", "2024-11-05, named in your question". */
  scope_label: z.string(),
  /** What was searched and why (chosen, named in the question, or the default); absent on results stored before it existed. */
  scope: ScopeInfo.optional(),
})
export type AskResult = z.infer<typeof AskResult>

/** Every field of a result but its outcome (answer, abstained, reason, mode), which only the end of a question decides. */
export type AskResultBase = Omit<AskResult, 'answer' | 'abstained' | 'reason' | 'mode'>

/**
 * A result's fields before anything is found: no passages, nothing to warn about, not cached or
 * degraded, nothing searched yet. The one place these defaults are written: the engine starts every
 * question from them, and the renderer fills out a stored reply that has no result with them.
 */
export function askResultBase(ids: Pick<AskResult, 'trace_id' | 'thread_id'>): AskResultBase {
  return {
    trace_id: ids.trace_id,
    thread_id: ids.thread_id,
    cached: false,
    citations: [],
    passages: [],
    closest: [],
    unanswered_parts: [],
    warnings: [],
    notices: [],
    degraded: false,
    rewritten_question: null,
    scope_label: '',
  }
}

export const AskStage = z.enum([
  'route',
  'rewrite',
  'cache',
  'search',
  'gate',
  'release',
  'read',
  'generate',
  'verify',
  'retry',
  'done',
])
export type AskStage = z.infer<typeof AskStage>

/** A passage as shown while the model reads it: where it is, and its text split into sentences, those that match the question marked. */
export const PassagePreview = z.object({
  n: z.number().int().positive(),
  ...PassageRef.shape,
  sentences: z.array(z.object({ text: z.string(), match: z.boolean() })),
})
export type PassagePreview = z.infer<typeof PassagePreview>

export const AskEvent = z.discriminatedUnion('type', [
  /** A stage started, described in words a person understands ("Searching the 2025-03-26 docs"). */
  z.object({ type: z.literal('stage'), stage: AskStage, message: z.string() }),
  /**
   * Answer text as the model writes it. It is a draft: it is shown before verification, and the
   * final event's result replaces it (it may be an abstention). `attempt` starts a new draft.
   */
  z.object({ type: z.literal('token'), text: z.string(), attempt: z.number().int().positive() }),
  /**
   * The passages the model is about to read, with the sentences that match the question marked:
   * shown at once, so a person waiting for the answer has something to read (and keeps them if
   * they stop the model). Sent once, before the model starts.
   */
  z.object({ type: z.literal('passages'), scope_label: z.string(), passages: z.array(PassagePreview) }),
  /**
   * How far the model has got: `read` of `total` prompt tokens evaluated (after what was already
   * in its cache), then tokens written. `eta_ms` comes from the rate measured so far on this machine.
   */
  z.object({
    type: z.literal('progress'),
    phase: z.enum(['loading', 'reading', 'writing']),
    read: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
    written: z.number().int().nonnegative(),
    elapsed_ms: z.number().nonnegative(),
    eta_ms: z.number().nonnegative().nullable(),
  }),
  z.object({ type: z.literal('final'), result: AskResult }),
])
export type AskEvent = z.infer<typeof AskEvent>

/** A conversation thread as the thread list shows it. */
export const ThreadSummary = z.object({ id: z.string(), title: z.string(), updated_at: z.string() })
export type ThreadSummary = z.infer<typeof ThreadSummary>

/** One stored turn of a conversation thread, for the chat pane. */
export const ThreadMessage = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string().nullable(),
  trace_id: z.string().nullable(),
  created_at: z.string(),
  /** The full verified result of an assistant message; null for the question, or when it no longer reads as one. */
  result: AskResult.nullable(),
})
export type ThreadMessage = z.infer<typeof ThreadMessage>

/** A thread with its messages in order (`threads.get`). */
export const Thread = z.object({ id: z.string(), title: z.string(), messages: z.array(ThreadMessage) })
export type Thread = z.infer<typeof Thread>
