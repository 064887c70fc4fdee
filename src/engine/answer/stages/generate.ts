import type { AttemptTrace } from '../../../shared/answer'
import type { SearchHit } from '../../../shared/search'
import type { ResolvedScope } from '../../retrieve/scope'
import { round } from '../../util/numbers'
import {
  ANSWER_SCHEMA,
  ANSWER_SYSTEM_PROMPT,
  AnswerDraftExtractor,
  buildAnswerUserPrompt,
  buildCorrectionPrompt,
  CORRECTION_RESERVE_TOKENS,
  fitPassages,
  type PromptPassage,
} from '../prompt'
import type { ChatModelLike, GenerateJsonResult } from '../types'
import { verifyCitations, type Verification } from '../verify'
import { toPromptPassage } from './passages'
import { errorText, type AskRun } from './run'

/** The passages that fit the model's context, in prompt order. */
export function choosePassages(run: AskRun, chat: ChatModelLike, hits: SearchHit[], scope: ResolvedScope): PromptPassage[] {
  const { opts, trace, base } = run
  const fitted = fitPassages(hits.map(toPromptPassage), {
    contextSize: chat.info.contextSize,
    replyTokens: opts.maxAnswerTokens,
    reserveTokens: opts.correctiveRetry ? CORRECTION_RESERVE_TOKENS : 0,
    countTokens: chat.countTokens?.bind(chat),
    question: run.standalone,
    scopeLabel: scope.label,
  })
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
      `The language model's context holds ${passages.length} of ${hits.length} passages; the lowest-ranked were left out.`,
    )
  base.passages = passages.map((p) => p.chunk_id)
  return passages
}

/** A reply of the model with its verification. */
export interface Attempt {
  res: GenerateJsonResult
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
  chat: ChatModelLike,
  question: string,
  passages: PromptPassage[],
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
    outcome = await attempt(run, chat, passages, attempts, 1, userPrompt, 'answer')
  } catch (err) {
    run.checkAbort()
    trace.model_error = errorText(err)
    return { failed: trace.model_error }
  }
  if (!outcome.v.ok && opts.correctiveRetry) {
    // Claims the cited passages do not back go into the same retry: they would otherwise be shown marked unverified.
    const problems = [
      ...outcome.v.problems.map((p) => p.message),
      ...outcome.v.warnings.map((w) => `${w.message} Copy it exactly from a cited passage, or leave it out.`),
    ]
    if (outcome.res.stopReason === 'maxTokens')
      problems.push('The reply was cut off because it was too long: answer more briefly.')
    try {
      const correction = correctionPrompt(chat, userPrompt, outcome.res.raw, problems, passages.length, opts.maxAnswerTokens)
      outcome = await attempt(run, chat, passages, attempts, 2, correction, 'correction')
    } catch (err) {
      run.checkAbort()
      // The first reply already failed verification; without a corrected one there is nothing to show.
      trace.model_error = errorText(err)
    }
  }
  trace.tokens = { in: attempts.reduce((s, a) => s + a.tokens_in, 0), out: attempts.reduce((s, a) => s + a.tokens_out, 0) }
  return outcome
}

/** One model call: streams the draft answer, then verifies the reply's citations against the passages. */
async function attempt(
  run: AskRun,
  chat: ChatModelLike,
  passages: PromptPassage[],
  attempts: AttemptTrace[],
  n: number,
  user: string,
  purpose: AttemptTrace['purpose'],
): Promise<Attempt> {
  run.stage(
    n === 1 ? 'generate' : 'retry',
    n === 1 ? 'Writing the answer' : 'The citations did not check out; asking the model to correct them',
  )
  const draft = new AnswerDraftExtractor()
  const t0 = performance.now()
  const res = await chat.generateJson({
    system: ANSWER_SYSTEM_PROMPT,
    user,
    schema: ANSWER_SCHEMA,
    maxTokens: run.opts.maxAnswerTokens,
    temperature: 0,
    onToken: (text) => {
      const t = draft.push(text)
      if (t) run.emit({ type: 'token', text: t, attempt: n })
    },
    signal: run.opts.signal,
  })
  const ms = round(performance.now() - t0, 2)
  run.checkAbort()
  run.stage('verify', 'Checking citations')
  const v = verifyCitations(res.parsed, passages, run.standalone)
  attempts.push({
    attempt: n,
    purpose,
    raw: res.raw,
    tokens_in: res.tokensIn,
    tokens_out: res.tokensOut,
    stop_reason: res.stopReason,
    ms,
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
  chat: ChatModelLike,
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
