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
import { errorText, type AskSections, type StageEnv } from './run'

/** The passages the model reads, how they were cut and fitted, and the notice when some did not fit. */
export interface Chosen {
  passages: PromptPassage[]
  trace: Required<Pick<AskSections, 'trim' | 'passages' | 'passages_fit'>>
  notice: string | null
}

/** The passages that fit the model's context, in prompt order, each cut down to what bears on the question. */
export function choosePassages(
  env: StageEnv,
  chat: ChatModel,
  standalone: string,
  hits: SearchHit[],
  scope: ResolvedScope,
): Chosen {
  const { opts } = env
  const count = chat.countTokens?.bind(chat) ?? estimateTokens
  const top = hits.slice(0, opts.passages)
  const terms = questionWeights(
    standalone,
    top.map((h) => h.text),
  )
  const trimmed = top.map((h, i) => ({
    hit: h,
    cut: trimPassage(h.text, standalone, { budget: budgetAt(opts.passageTokens, i), countTokens: count, terms }),
  }))
  const trim = {
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
      question: standalone,
      scopeLabel: scope.label,
    },
  )
  const passages = fitted.passages
  const passagesFit = {
    given: passages.length,
    dropped: fitted.dropped,
    truncated: fitted.truncated,
    prompt_tokens: fitted.prompt_tokens,
    context_size: chat.info.contextSize,
    tokenizer: chat.countTokens ? ('model' as const) : ('estimate' as const),
  }
  const notice =
    fitted.dropped > 0
      ? `The language model's context holds ${passages.length} of ${top.length} passages; the lowest-ranked were left out.`
      : null
  // Something to read at once, while the model reads the same passages.
  env.emit({
    type: 'passages',
    scope_label: scope.label,
    passages: passages.map((p, i) => toPreview(trimmed[i]!.hit, p.n, trimmed[i]!.cut.units)),
  })
  const trace = { trim, passages: passages.map((p) => p.chunk_id), passages_fit: passagesFit }
  return { passages, trace, notice }
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

/** What the model replied (or why it failed), and the trace of its calls. */
export interface Generated {
  outcome: Attempt | ModelFailure
  trace: Pick<AskSections, 'attempts' | 'model_error' | 'tokens'>
}

/**
 * The model answers from numbered, delimited, labelled passages; its citations are verified, and
 * a reply that fails gets one corrective retry.
 */
export async function generateAnswer(
  env: StageEnv,
  chat: ChatModel,
  asked: { question: string; standalone: string },
  passages: PromptPassage[],
  whole: PromptPassage[],
  scope: ResolvedScope,
): Promise<Generated> {
  const { opts } = env
  const { question, standalone } = asked
  env.stage('read', `Reading ${passages.length} passage${passages.length === 1 ? '' : 's'}`)
  const userPrompt = buildAnswerUserPrompt(
    question === standalone ? question : `${standalone}\n(The person asked: "${question}")`,
    passages,
    scope.label,
  )
  const attempts: AttemptTrace[] = []
  const call = (n: number, user: string, purpose: AttemptTrace['purpose']) =>
    attempt(env, chat, { standalone, passages: whole, attempts }, n, user, purpose)

  let outcome: Attempt
  try {
    outcome = await call(1, userPrompt, 'answer')
  } catch (err) {
    env.checkAbort()
    const failed = errorText(err)
    return { outcome: { failed }, trace: { attempts, model_error: failed } }
  }
  let modelError: string | null = null
  if (!outcome.v.ok && opts.correctiveRetry) {
    // Claims the cited passages do not back go into the same retry: they would otherwise be shown marked unverified.
    const problems = outcome.v.problems.map((p) => p.message)
    if (outcome.res.stopReason === 'maxTokens')
      problems.push('The reply was cut off because it was too long: answer more briefly.')
    try {
      const correction = correctionPrompt(chat, userPrompt, outcome.res.raw, problems, passages.length, opts.maxAnswerTokens)
      outcome = await call(2, correction, 'correction')
    } catch (err) {
      env.checkAbort()
      // The first reply already failed verification; without a corrected one there is nothing to show.
      modelError = errorText(err)
    }
  }
  const tokens = { in: attempts.reduce((s, a) => s + a.tokens_in, 0), out: attempts.reduce((s, a) => s + a.tokens_out, 0) }
  return { outcome, trace: { attempts, ...(modelError !== null ? { model_error: modelError } : {}), tokens } }
}

/** One model call: streams the draft answer, then checks every sentence against the (whole) passages it cites. */
async function attempt(
  env: StageEnv,
  chat: ChatModel,
  /** The question retrieval used, the passages to check against, and the calls so far (this one is added). */
  against: { standalone: string; passages: PromptPassage[]; attempts: AttemptTrace[] },
  n: number,
  user: string,
  purpose: AttemptTrace['purpose'],
): Promise<Attempt> {
  // The first attempt is still reading (stage 'read') until it writes its first token.
  if (n > 1) env.stage('retry', 'No sentence checked out; asking the model to correct them')
  const draft = new AnswerDraftExtractor()
  const t0 = performance.now()
  let written = 0
  let firstToken: number | null = null
  const progress = new ProgressClock(env, t0)
  const res = await chat.generateJson({
    system: ANSWER_SYSTEM_PROMPT,
    user,
    schema: ANSWER_SCHEMA,
    maxTokens: env.opts.maxAnswerTokens,
    temperature: 0,
    onPromptProgress: (read, total) => progress.reading(read, total),
    onToken: (text) => {
      if (firstToken === null && n === 1) env.stage('generate', 'Writing the answer')
      firstToken ??= performance.now() - t0
      written++
      progress.writing(written)
      const t = draft.push(text)
      if (t) env.emit({ type: 'token', text: t, attempt: n })
    },
    signal: env.opts.signal,
  })
  const ms = round(performance.now() - t0, 2)
  env.checkAbort()
  env.stage('verify', 'Checking every sentence against the passages it cites')
  const v = await verifyReply(res.parsed, against.passages, {
    question: against.standalone,
    similarity: env.ctx.similarity,
    similarityFloor: env.ctx.similarityFloor,
  })
  against.attempts.push({
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
    private readonly env: StageEnv,
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
    this.env.emit({
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
