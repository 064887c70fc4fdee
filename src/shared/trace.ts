import { z } from 'zod'
import { AbstainReason, AskResult, AskStage, SupportFailure } from './answer'
import { PassageRef } from './passage'
import { Scope, ScopeSource, SearchMode } from './search'

/*
 * The trace: everything recorded about one answer, stored as JSON and read back by `trace.get`.
 * Sections after `route` are present only when their stage ran (small talk stops after `route`,
 * a cache hit after `cache`, the gate may refuse before any model call).
 */

export const KeywordRank = z.object({ chunk_id: z.string(), rank: z.number().int(), bm25: z.number() })
export const VectorRank = z.object({ chunk_id: z.string(), rank: z.number().int(), cosine: z.number() })
/** A candidate after reciprocal rank fusion, with its rank in each retriever that found it. */
export const FusedRank = z.object({ chunk_id: z.string(), rrf: z.number(), ranks: z.record(z.string(), z.number()) })
export const RerankedScore = z.object({ chunk_id: z.string(), reranker: z.number() })

/** Everything the trace needs about one retrieval, beyond the final hits (null: that retriever did not run). */
export const RetrievalTrace = z.object({
  keyword: z.array(KeywordRank).nullable(),
  vector: z.array(VectorRank).nullable(),
  fused: z.array(FusedRank),
  reranked: z.array(RerankedScore).nullable(),
  /** Words of the question that no passage holds, searched by keyword as the section-title word nearest to them. */
  bridged: z.array(z.object({ word: z.string(), term: z.string(), cosine: z.number() })).optional(),
})
export type RetrievalTrace = z.infer<typeof RetrievalTrace>

/** One retrieval as the answer trace keeps it: the search's own report, the models that ran, and result ids. */
export const RetrievalRecord = RetrievalTrace.extend({
  mode: SearchMode,
  rerank: z.boolean(),
  degraded: z.boolean(),
  notices: z.array(z.string()),
  timings_ms: z.record(z.string(), z.number()),
  /** Models that actually ran (null when the stage did not run). */
  reranker: z.string().nullable(),
  embedder: z.string().nullable(),
  results: z.array(z.string()),
})
export type RetrievalRecord = z.infer<typeof RetrievalRecord>

/** How much of the query the keyword index recognises, IDF-weighted (rare words count most). */
export const KeywordEvidence = z.object({
  /** Passages in the searched collections (the N of IDF). */
  n: z.number(),
  terms: z.array(z.object({ lexeme: z.string(), df: z.number(), idf: z.number(), in_top: z.boolean() })),
  /** Share of the query's IDF weight whose terms occur anywhere in the collections. */
  known_share: z.number(),
  /** Share of the query's IDF weight whose terms occur in the top keyword hit. */
  top_coverage: z.number(),
  /** Query terms present in the collections with a meaningful IDF (in at most about half the passages). */
  meaningful: z.array(z.string()),
})
export type KeywordEvidence = z.infer<typeof KeywordEvidence>

export const GateDecision = z.object({
  pass: z.boolean(),
  basis: z.enum(['reranker', 'fallback']),
  /** Reranker threshold used (basis reranker), else null. */
  threshold: z.number().nullable(),
  best_reranker: z.number().nullable(),
  /** Cosine floor and best cosine used by the fallback. */
  cosine_floor: z.number().nullable(),
  best_cosine: z.number().nullable(),
  keyword_top_coverage: z.number().nullable(),
  keyword_known_share: z.number().nullable(),
  /** When refusing: is the question unrelated to the collection (off_topic), or just unanswered here? */
  refusal: z.enum(['off_topic', 'no_relevant_sources']).nullable(),
  calibrated: z.boolean(),
  explanation: z.string(),
})
export type GateDecision = z.infer<typeof GateDecision>

export const GateTrace = z.object({ decision: GateDecision, keyword: KeywordEvidence.nullable() })
export type GateTrace = z.infer<typeof GateTrace>

export const SmalltalkKind = z.enum(['greeting', 'thanks', 'farewell', 'wellbeing', 'presence', 'identity', 'acknowledgement'])
export type SmalltalkKind = z.infer<typeof SmalltalkKind>

/** The answer model's rewrite of a follow-up into a standalone question. */
export const ModelRewrite = z.object({
  standalone: z.string().nullable(),
  raw: z.string(),
  tokensIn: z.number(),
  tokensOut: z.number(),
  problem: z.string().nullable(),
})
export type ModelRewrite = z.infer<typeof ModelRewrite>

export const RewriteTrace = z.object({
  /** Standalone questions of the earlier turns, oldest first. */
  history: z.array(z.string()),
  deterministic: z.string().nullable(),
  model: ModelRewrite.nullable(),
  used: z.enum(['model', 'deterministic', 'none']),
})
export type RewriteTrace = z.infer<typeof RewriteTrace>

export const ScopeTrace = z.object({
  label: z.string(),
  collections: z.array(z.string()),
  /** Versions actually searched, per collection. */
  versions: z.record(z.string(), z.union([z.array(z.string()), z.literal('all')])),
  /** Where the versions came from: the person's choice, the question's words, or the default. Absent in older traces. */
  source: ScopeSource.optional(),
  /** The words of the question that named the versions ("the 2024-11-05 spec"). */
  named: z.array(z.string()).optional(),
  /** The question asks what changed or when: change-log sections were ranked first. */
  change_log_first: z.boolean().optional(),
})
export type ScopeTrace = z.infer<typeof ScopeTrace>

export const CacheTrace = z.object({
  key: z.string(),
  index_state: z.record(z.string(), z.string()),
  dropped_stale: z.number().int(),
  hit: z.boolean(),
  /** The trace of the answer served from the cache. */
  from_trace: z.string().nullable(),
})
export type CacheTrace = z.infer<typeof CacheTrace>

export const SearchRewriteTrace = z.object({ query: z.string().nullable(), raw: z.string(), problem: z.string().nullable() })
export type SearchRewriteTrace = z.infer<typeof SearchRewriteTrace>

export const PassagesFit = z.object({
  given: z.number().int(),
  dropped: z.number().int(),
  truncated: z.boolean(),
  prompt_tokens: z.number(),
  context_size: z.number(),
  tokenizer: z.enum(['model', 'estimate']),
})
export type PassagesFit = z.infer<typeof PassagesFit>

export const ProblemCode = z.enum([
  'invalid_reply',
  'empty_answer',
  'no_citations',
  'citation_out_of_range',
  'answer_repeats_question',
  /** Every sentence failed the support check against the passages it cites. */
  'no_supported_sentence',
  // The two below are no longer raised (a mismatch between markers and "citations" is repaired,
  // see RepairCode); they stay so that traces stored before still parse.
  'marker_not_declared',
  'citation_not_used',
])
export type ProblemCode = z.infer<typeof ProblemCode>
export const WarningCode = z.enum(['unsupported_number', 'unsupported_quote', 'unsupported_term'])
export type WarningCode = z.infer<typeof WarningCode>
export const VerificationProblem = z.object({ code: ProblemCode, message: z.string() })
export type VerificationProblem = z.infer<typeof VerificationProblem>
export const VerificationWarning = z.object({ code: WarningCode, message: z.string() })
export type VerificationWarning = z.infer<typeof VerificationWarning>
/**
 * What the verifier changed in a reply before checking it: the inline [n] markers are the
 * citations the person sees, so a reply that lists citations without any marker gets them placed
 * at the end of its answer, and a listed citation that no marker uses is dropped. An answer about
 * a name the question asks for (a header, a method) that no passage given contains is turned into
 * "the documents don't say".
 */
export const RepairCode = z.enum([
  'markers_added',
  'citation_dropped',
  'subject_not_in_passages',
  /** A sentence that cited nothing was given the one passage that supports it. */
  'citation_filled',
  /** A sentence whose cited passages do not say it was cited to the one given passage that does. */
  'citation_moved',
  /** Steps of a procedure the answer stopped before were copied from its source. */
  'procedure_completed',
  /** Items of a list the answer introduced ("…the following codes:") and did not give were copied from its source. */
  'list_completed',
  /** The answer restated the question or left out what it asks for (a name, a number, a version); the passage sentence that answers was added. */
  'quote_added',
  /** Sentences of the best-ranked passages that bear on the question and the answer left out were added (answer/key-sentences.ts). */
  'key_sentences_added',
  /** A sentence cited to a guide that the scoped release's specification also says was cited to it too (stages/authoritative.ts). */
  'authoritative_cited',
  /** A sentence the answer already said (the model repeating itself, or a copied line it had written) was shown once (answer/repeats.ts). */
  'repeat_dropped',
  /** A sentence's citations of passages lacking a name or number it states were dropped, where other cited passages hold them all (answer/tighten.ts). */
  'citations_tightened',
  /** Table rows were shown under their table's header from the cited passage, or a header row given alone was left out (answer/readable.ts). */
  'table_shown_whole',
  /** The answer is the scoped release's own sentence saying that what was asked about is not part of it (answer/release-absent.ts). */
  'absence_quoted',
  /** A sentence the reply's JSON cut short at a quotation mark was completed to the passage sentence it copies (answer/mend.ts). */
  'sentence_mended',
  /** The model gave no answer that stands; the best passages' own sentences that hold most of the question are the answer (answer/key-sentences.ts quotedAnswer). */
  'quoted_answer',
])
export type RepairCode = z.infer<typeof RepairCode>
export const VerificationRepair = z.object({ code: RepairCode, message: z.string() })
export type VerificationRepair = z.infer<typeof VerificationRepair>

export const StopReason = z.enum(['eos', 'maxTokens', 'abort'])
export type StopReason = z.infer<typeof StopReason>

/** One language-model call as the trace keeps it. */
export const AttemptTrace = z.object({
  attempt: z.number().int().positive(),
  purpose: z.enum(['answer', 'correction']),
  raw: z.string(),
  /** Tokens of the whole prompt (system, passages, question, chat template). Absent in older traces. */
  prompt_tokens: z.number().optional(),
  /** Prompt tokens actually evaluated: what the model's cache did not already hold from the previous call. */
  tokens_in: z.number(),
  tokens_out: z.number(),
  stop_reason: StopReason,
  ms: z.number(),
  /** From the start of the call to the first token written (prompt reading included). Absent in older traces. */
  first_token_ms: z.number().optional(),
  verification: z.object({
    ok: z.boolean(),
    /** What the reply said about answerability; null when it was not a valid reply. */
    answerable: z.boolean().nullable(),
    problems: z.array(VerificationProblem),
    warnings: z.array(VerificationWarning),
    /** Absent in traces stored before repairs existed. */
    repairs: z.array(VerificationRepair).default([]),
    markers: z.array(z.number()),
    unsupported_numbers: z.array(z.string()),
    unsupported_quotes: z.array(z.string()),
    /** Absent in traces stored before the term check existed. */
    unsupported_terms: z.array(z.string()).default([]),
  }),
})
export type AttemptTrace = z.infer<typeof AttemptTrace>

/** The support check of one sentence of the reply (answer/support.ts). */
export const ClaimTrace = z.object({
  text: z.string(),
  /** Passage numbers it cites, in prompt order. */
  cited: z.array(z.number().int()),
  ok: z.boolean(),
  failure: SupportFailure.nullable(),
  reason: z.string().nullable(),
  /** Share of its content words found in the cited passages. */
  coverage: z.number(),
  /** Best cosine similarity to a sentence of a cited passage (null without an embedding model). */
  best_cosine: z.number().nullable(),
  /** What the checker changed: a missing citation filled in from the passage that supports it. */
  repaired: z.string().nullable(),
})
export type ClaimTrace = z.infer<typeof ClaimTrace>

/** A term the question asks about, and where the collection mentions it (release.ts). */
export const KeyTermTrace = z.object({
  term: z.string(),
  /**
   * `phrase`: two adjacent content words that name a feature together ("URL mode", "form mode");
   * `title`: a section title of another release whose words the question holds ("Tools in
   * Sampling"), counted where its words stand close together.
   */
  form: z.enum(['identifier', 'quoted', 'word', 'phrase', 'title']),
  /** Passages of the scoped releases (and unversioned ones) that contain it, authoritative kinds apart. */
  in_scope_authoritative: z.number().int(),
  in_scope_other: z.number().int(),
  /** Passages of the collection's other releases that contain it. */
  elsewhere: z.number().int(),
  elsewhere_authoritative: z.number().int(),
  /**
   * The earliest release that mentions it, outside the scope: the earliest whose authoritative
   * sources do when any does (a guide copied into every release's folder is no such evidence).
   */
  first_version: z.string().nullable(),
  /** A title word that stands for a word of the question no passage holds (that word), weighed only for "never mentioned". */
  bridged_from: z.string().optional(),
})
export type KeyTermTrace = z.infer<typeof KeyTermTrace>

/** The release rules, enforced in code before and after the model (answer/release.ts). */
export const ReleaseTrace = z.object({
  /** The releases the question is scoped to (chosen, or named in its words); null when not scoped to one. */
  releases: z.array(z.string()).nullable(),
  authoritative_kinds: z.array(z.string()),
  /** The scoped releases have passages of an authoritative kind (e.g. Specification). */
  has_authoritative: z.boolean(),
  terms: z.array(KeyTermTrace),
  /**
   * `incidental`: the release's specification mentions the term only in passing (never in a
   * section about it, a change log or a sentence that says it is absent), while another release
   * has a section on it. `paraphrase`: a word of the question that the release never uses is,
   * in the other releases, a word of a feature's sections that the release lacks. `absent_field`:
   * other releases' specifications write a word of the question as a key of a feature it names
   * ("title" of a tool), and the scoped release's specification has the feature but never that key.
   */
  verdict: z.enum([
    'not_scoped',
    'no_key_terms',
    'mentioned',
    'never_mentioned',
    'guides_only',
    'incidental',
    'paraphrase',
    'absent_field',
  ]),
  /** The term the verdict is about (absent before these verdicts existed). */
  verdict_term: z.string().nullable().optional(),
  /** After generation: an authoritative passage of the release containing a key term had to be cited. */
  must_cite_authoritative: z.boolean(),
  cited_authoritative: z.boolean().nullable(),
  /**
   * Before generation: no passage the model would read was such a source, so the best one of a
   * deeper search was put first (answer/stages/release-source.ts); absent before this existed.
   */
  authoritative_added: z.string().nullable().optional(),
  /**
   * After generation: the question would have ended without an answer, and a passage of the scoped
   * release says outright that what was asked about is not part of it; its chunk, whose sentence is
   * the answer (answer/release-absent.ts). Absent before this existed.
   */
  absence_quoted: z.string().nullable().optional(),
  /**
   * After generation: sentences removed because a term of theirs is one the release never mentions
   * or mentions only in guides (absent before this check existed).
   */
  removed_sentences: z
    .array(z.object({ text: z.string(), term: z.string(), verdict: z.enum(['never_mentioned', 'guides_only']) }))
    .optional(),
})
export type ReleaseTrace = z.infer<typeof ReleaseTrace>

/** How the passages were cut down to what bears on the question before the model read them. */
export const TrimTrace = z.object({
  passages: z.array(z.object({ chunk_id: z.string(), tokens_before: z.number(), tokens_after: z.number() })),
  budget_tokens: z.number(),
})
export type TrimTrace = z.infer<typeof TrimTrace>

/** How the last reply fared in verification. */
export const VerificationTrace = z.discriminatedUnion('result', [
  z.object({ result: z.literal('ok'), warnings: z.array(VerificationWarning) }),
  z.object({ result: z.literal('not_in_context') }),
  z.object({ result: z.literal('unverifiable_citations'), problems: z.array(VerificationProblem) }),
])
export type VerificationTrace = z.infer<typeof VerificationTrace>

export const AskTrace = z.object({
  version: z.literal(1),
  question: z.string(),
  scope_requested: Scope,
  options: z.object({
    passages: z.number().int(),
    mode: SearchMode,
    rerank: z.boolean(),
    gate: z.boolean(),
    gate_threshold: z.number().nullable(),
    corrective_retry: z.boolean(),
    query_rewrite_retry: z.boolean(),
    use_cache: z.boolean(),
    search_only: z.boolean(),
  }),
  models: z.object({ llm: z.string().nullable(), llm_problem: z.string().nullable() }),
  /** Time spent in each stage; a stage entered twice (search after a query rewrite) adds up. */
  stages_ms: z.partialRecord(AskStage, z.number()),
  route: z.object({ smalltalk: SmalltalkKind.nullable() }),
  rewrite: RewriteTrace.optional(),
  /** The question retrieval used: the follow-up rewritten, or the question without a greeting. */
  standalone_question: z.string().optional(),
  scope: ScopeTrace.optional(),
  cache: CacheTrace.optional(),
  retrieval: RetrievalRecord.optional(),
  gate: GateTrace.optional(),
  /** The optional query-rewrite retry after the gate refused, and what its search found. */
  query_rewrite: SearchRewriteTrace.optional(),
  query_rewrite_retrieval: RetrievalRecord.extend({ gate: GateTrace }).optional(),
  /** Chunk ids given to the model (search-only: returned), in prompt order. */
  passages: z.array(z.string()).optional(),
  passages_fit: PassagesFit.optional(),
  attempts: z.array(AttemptTrace).optional(),
  /** Why the language model failed, when it did. */
  model_error: z.string().optional(),
  tokens: z.object({ in: z.number(), out: z.number() }).optional(),
  verification: VerificationTrace.optional(),
  /** The release rules: before the model (a release that never mentions the key term) and after it. */
  release: ReleaseTrace.optional(),
  /** Passages cut down to what bears on the question. */
  trim: TrimTrace.optional(),
  /** The support check of every sentence of the accepted reply. */
  claims: z.array(ClaimTrace).optional(),
  result: AskResult,
})
export type AskTrace = z.infer<typeof AskTrace>

/** What ended a question: an abstention reason, or how it was answered. */
export const AskOutcome = z.enum([...AbstainReason.options, 'answer', 'search-only', 'cached'])
export type AskOutcome = z.infer<typeof AskOutcome>

/** A trace as stored (`trace.get`). */
export const StoredTrace = z.object({
  id: z.string(),
  thread_id: z.string().nullable(),
  question: z.string(),
  outcome: AskOutcome,
  ms: z.number(),
  created_at: z.string(),
  data: AskTrace,
  /**
   * Where each passage the trace names is, looked up when the trace is read (the trace itself keeps
   * only chunk ids and scores). A passage removed since then is absent.
   */
  places: z.array(PassageRef.pick({ chunk_id: true, path: true, heading: true, version: true })).optional(),
})
export type StoredTrace = z.infer<typeof StoredTrace>
