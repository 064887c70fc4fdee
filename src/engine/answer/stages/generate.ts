import type { AttemptTrace } from '../../../shared/trace'
import type { SearchHit } from '../../../shared/search'
import type { ResolvedScope } from '../../retrieve/scope'
import { round } from '../../core/numbers'
import {
  ANSWER_SCHEMA,
  ANSWER_SYSTEM_PROMPT,
  AnswerDraftExtractor,
  buildAnswerUserPrompt,
  buildCorrectionPrompt,
  CORRECTION_RESERVE_TOKENS,
  estimateTokens,
  fitPassages,
  type PromptPassage,
} from '../prompt'
import { budgetAt, questionWeights, trimPassage } from '../trim'
import type { ChatModel, GenerateResult } from '../../core/model-ports'
import { verifyReply, type Verification } from '../verify'
import { toPreview, toPromptPassage } from './passages'
import { errorText, type AskRun } from './run'

/** The passages that fit the model's context, in prompt order, each cut down to what bears on the question. */
export function choosePassages(run: AskRun, chat: ChatModel, hits: SearchHit[], scope: ResolvedScope): PromptPassage[] {
  const { opts, trace, base } = run
  const count = chat.countTokens?.bind(chat) ?? estimateTokens
  const top = hits.slice(0, opts.passages)
  const terms = questionWeights(
    run.standalone,
    top.map((h) => h.text),
  )
  const trimmed = top.map((h, i) => ({
    hit: h,
    cut: trimPassage(h.text, run.standalone, { budget: budgetAt(opts.passageTokens, i), countTokens: count, terms }),
  }))
  trace.trim = {
    budget_tokens: opts.passageTokens,
    passages: trimmed.map(({ hit, cut }) => ({
      chunk_id: hit.chunk_id,
      tokens_before: cut.tokensBefore,
      tokens_after: cut.tokensAfter,
    })),
  }
  const fitted = fitPassages(
    trimmed.map(({ hit, cut }, i) => ({ ...toPromptPassage(hit, i), text: cut.text })),
    {
      contextSize: chat.info.contextSize,
      replyTokens: opts.maxAnswerTokens,
      reserveTokens: opts.correctiveRetry ? CORRECTION_RESERVE_TOKENS : 0,
      countTokens: chat.countTokens?.bind(chat),
      question: run.standalone,
      scopeLabel: scope.label,
    },
  )
  const passages = fitted.passages
  trace.passages = passages.map((p) => p.chunk_id)
  trace.passages_fit = {
    given: passages.length,
    dropped: fitted.dropped,
    truncated: fitted.truncated,
    prompt_tokens: fitted.prompt_tokens,
    context_size: chat.info.contextSize,
    tokenizer: chat.countTokens ? 'model' : 'estimate',
  }
  if (fitted.dropped > 0)
    base.notices.push(
      `The language model's context holds ${passages.length} of ${top.length} passages; the lowest-ranked were left out.`,
    )
  base.passages = passages.map((p) => p.chunk_id)
  // Something to read at once, while the model reads the same passages.
  run.emit({
    type: 'passages',
    scope_label: scope.label,
    passages: passages.map((p, i) => toPreview(trimmed[i]!.hit, p.n, trimmed[i]!.cut.units)),
  })
  return passages
}

/** A reply of the model with its verification. */
export interface Attempt {
  res: GenerateResult
  v: Verification
}

/** Why the first model call failed (out of memory, a broken file): the passages are still worth showing. */
export interface ModelFailure {
  failed: string
}

/**
 * The model answers from numbered, delimited, labelled passages; its citations are verified, and
 * a reply that fails gets one corrective retry.
 */
export async function generateAnswer(
  run: AskRun,
  chat: ChatModel,
  question: string,
  passages: PromptPassage[],
  whole: PromptPassage[],
  scope: ResolvedScope,
): Promise<Attempt | ModelFailure> {
  const { opts, trace } = run
  run.stage('read', `Reading ${passages.length} passage${passages.length === 1 ? '' : 's'}`)
  const standalone = run.standalone
  const userPrompt = buildAnswerUserPrompt(
    question === standalone ? question : `${standalone}\n(The person asked: "${question}")`,
    passages,
    scope.label,
  )
  const attempts: AttemptTrace[] = []
  trace.attempts = attempts

  let outcome: Attempt
  try {
    outcome = await attempt(run, chat, whole, attempts, 1, userPrompt, 'answer')
  } catch (err) {
    run.checkAbort()
    trace.model_error = errorText(err)
    return { failed: trace.model_error }
  }
  if (!outcome.v.ok && opts.correctiveRetry) {
    // Claims the cited passages do not back go into the same retry: they would otherwise be shown marked unverified.
    const problems = outcome.v.problems.map((p) => p.message)
    if (outcome.res.stopReason === 'maxTokens')
      problems.push('The reply was cut off because it was too long: answer more briefly.')
    try {
      const correction = correctionPrompt(chat, userPrompt, outcome.res.raw, problems, passages.length, opts.maxAnswerTokens)
      outcome = await attempt(run, chat, whole, attempts, 2, correction, 'correction')
    } catch (err) {
      run.checkAbort()
      // The first reply already failed verification; without a corrected one there is nothing to show.
      trace.model_error = errorText(err)
    }
  }
  trace.tokens = { in: attempts.reduce((s, a) => s + a.tokens_in, 0), out: attempts.reduce((s, a) => s + a.tokens_out, 0) }
  return outcome
}

/** One model call: streams the draft answer, then checks every sentence against the (whole) passages it cites. */
async function attempt(
  run: AskRun,
  chat: ChatModel,
  passages: PromptPassage[],
  attempts: AttemptTrace[],
  n: number,
  user: string,
  purpose: AttemptTrace['purpose'],
): Promise<Attempt> {
  // The first attempt is still reading (stage 'read') until it writes its first token.
  if (n > 1) run.stage('retry', 'No sentence checked out; asking the model to correct them')
  const draft = new AnswerDraftExtractor()
  const t0 = performance.now()
  let written = 0
  let firstToken: number | null = null
  const progress = new ProgressClock(run, t0)
  const res = await chat.generateJson({
    system: ANSWER_SYSTEM_PROMPT,
    user,
    schema: ANSWER_SCHEMA,
    maxTokens: run.opts.maxAnswerTokens,
    temperature: 0,
    onPromptProgress: (read, total) => progress.reading(read, total),
    onToken: (text) => {
      if (firstToken === null && n === 1) run.stage('generate', 'Writing the answer')
      firstToken ??= performance.now() - t0
      written++
      progress.writing(written)
      const t = draft.push(text)
      if (t) run.emit({ type: 'token', text: t, attempt: n })
    },
    signal: run.opts.signal,
  })
  const ms = round(performance.now() - t0, 2)
  run.checkAbort()
  run.stage('verify', 'Checking every sentence against the passages it cites')
  const v = await verifyReply(res.parsed, passages, {
    question: run.standalone,
    similarity: run.ctx.similarity,
    similarityFloor: run.ctx.similarityFloor,
  })
  attempts.push({
    attempt: n,
    purpose,
    raw: res.raw,
    ...(res.promptTokens !== undefined ? { prompt_tokens: res.promptTokens } : {}),
    tokens_in: res.tokensIn,
    tokens_out: res.tokensOut,
    stop_reason: res.stopReason,
    ms,
    ...(firstToken !== null ? { first_token_ms: round(firstToken, 1) } : {}),
    verification: {
      ok: v.ok,
      answerable: v.reply?.answerable ?? null,
      problems: v.problems,
      warnings: v.warnings,
      repairs: v.repairs,
      markers: v.markers,
      unsupported_numbers: v.unsupported_numbers,
      unsupported_quotes: v.unsupported_quotes,
      unsupported_terms: v.unsupported_terms,
    },
  })
  return { res, v }
}

/** The correction prompt, with the quoted previous reply shortened until it fits the context. */
function correctionPrompt(
  chat: ChatModel,
  user: string,
  raw: string,
  problems: string[],
  passageCount: number,
  replyTokens: number,
): string {
  let quote = raw
  let prompt = buildCorrectionPrompt(user, quote, problems, passageCount)
  if (!chat.countTokens) return prompt
  const limit = chat.info.contextSize - replyTokens - 96 - chat.countTokens(ANSWER_SYSTEM_PROMPT)
  while (quote.length > 0 && chat.countTokens(prompt) > limit) {
    quote = quote.slice(0, Math.floor(quote.length / 2))
    prompt = buildCorrectionPrompt(user, quote, problems, passageCount)
  }
  return prompt
}

/**
 * Progress of one model call as events, at most a few a second: prompt tokens read of total while
 * the model reads (prefill), then tokens written, each with the time so far and an estimate from
 * the rate measured in this call.
 */
class ProgressClock {
  private last = 0
  private read = 0
  private total = 0
  private readDone: number | null = null

  constructor(
    private readonly run: AskRun,
    private readonly t0: number,
  ) {}

  reading(read: number, total: number): void {
    this.read = read
    this.total = total
    const now = performance.now()
    const elapsed = now - this.t0
    const rate = read > 0 ? read / elapsed : 0
    const eta = rate > 0 ? (total - read) / rate : null
    if (read >= total) this.readDone = now
    this.send('reading', 0, elapsed, eta, read >= total)
  }

  writing(written: number): void {
    const now = performance.now()
    this.readDone ??= now
    this.send('writing', written, now - this.t0, null, false)
  }

  private send(phase: 'reading' | 'writing', written: number, elapsed: number, eta: number | null, force: boolean): void {
    const now = performance.now()
    if (!force && now - this.last < 250) return
    this.last = now
    this.run.emit({
      type: 'progress',
      phase,
      read: this.read,
      total: this.total,
      written,
      elapsed_ms: round(elapsed, 0),
      eta_ms: eta === null ? null : round(eta, 0),
    })
  }
}
