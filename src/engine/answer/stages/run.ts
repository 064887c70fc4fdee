import { randomUUID } from 'node:crypto'
import type { AskEvent, AskStage } from '../../../shared/answer'
import type { AskOutcome, AskTrace } from '../../../shared/trace'
import { AskRequest, AskResult, askResultBase, type AskRequestParsed, type AskResultBase } from '../../../shared/answer'
import { round } from '../../core/numbers'
import { DEFAULT_ASK_OPTIONS, type AskContext, type AskOptions, type ResolvedAskOptions } from '../context'
import { classifySmalltalk, type SmalltalkMatch } from '../route'

/** The trace while the question is answered: every section but the result, which `finish` adds last. */
export type AskTraceDraft = Omit<AskTrace, 'result'>

/**
 * One question being answered: its request and options, the trace the stages write, the result
 * fields they fill in, stage timing and events. Every outcome ends in `finish`, which stores the
 * trace and the turn and emits the final event.
 */
export class AskRun {
  /** The question retrieval uses: rewritten when it was a follow-up (see stages/rewrite.ts). */
  standalone: string
  private current: { name: AskStage; t0: number } | null = null

  private constructor(
    readonly ctx: AskContext,
    readonly req: AskRequestParsed,
    readonly opts: ResolvedAskOptions,
    readonly trace: AskTraceDraft,
    /** The fields every result of this question shares, filled in as the stages learn them. */
    readonly base: AskResultBase,
    /** Set when the question is small talk: answered without retrieval. */
    readonly smalltalk: SmalltalkMatch | null,
    private readonly started: number,
  ) {
    this.standalone = req.question
  }

  /** Validates the request, opens its thread and routes it (small talk or a question for the documents). */
  static async begin(ctx: AskContext, request: AskRequest, options: AskOptions): Promise<AskRun> {
    const req = AskRequest.parse(request)
    const opts: ResolvedAskOptions = { ...DEFAULT_ASK_OPTIONS, ...stripUndefined(options) }
    const started = performance.now()
    const stagesMs: AskTrace['stages_ms'] = {}
    const threadId = await ctx.store.ensureThread(req.threadId, req.question)
    const base = askResultBase({ trace_id: randomUUID(), thread_id: threadId })
    const smalltalk = classifySmalltalk(req.question)
    const trace: AskTraceDraft = {
      version: 1,
      question: req.question,
      scope_requested: req.scope,
      options: {
        passages: opts.passages,
        mode: opts.mode,
        rerank: opts.rerank,
        gate: opts.gate,
        gate_threshold: opts.gateThreshold ?? null,
        corrective_retry: opts.correctiveRetry,
        query_rewrite_retry: opts.queryRewriteRetry,
        use_cache: opts.useCache,
        search_only: !!req.searchOnly,
      },
      models: { llm: ctx.chat?.id ?? null, llm_problem: ctx.chatProblem },
      stages_ms: stagesMs,
      route: { smalltalk: smalltalk?.kind ?? null },
    }
    const run = new AskRun(ctx, req, opts, trace, base, smalltalk, started)
    run.stage('route', 'Reading your question')
    return run
  }

  emit(e: AskEvent): void {
    this.opts.onEvent?.(e)
  }

  /** Ends the running stage (adding its time) and announces the next one in words. */
  stage(name: AskStage, message: string): void {
    this.endStage()
    this.current = { name, t0: performance.now() }
    this.emit({ type: 'stage', stage: name, message })
  }

  private endStage(): void {
    if (!this.current) return
    const { name, t0 } = this.current
    this.trace.stages_ms[name] = round((this.trace.stages_ms[name] ?? 0) + performance.now() - t0, 2)
    this.current = null
  }

  checkAbort(): void {
    const signal = this.opts.signal
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('The question was cancelled.')
  }

  /** Validates the result, stores the trace and the turn, and emits the final event. */
  async finish(unordered: AskResult, outcome: AskOutcome): Promise<AskResult> {
    // Parsing validates the result and puts its keys in contract order (answer, abstained, reason, ...).
    const result = AskResult.parse(unordered)
    this.stage('done', result.abstained ? 'Done (no answer from the documents)' : 'Done')
    this.endStage()
    const ms = round(performance.now() - this.started, 2)
    const data: AskTrace = { ...this.trace, result }
    const { trace_id: id, thread_id } = this.base
    await this.ctx.store.saveTrace({ id, thread_id, question: this.req.question, outcome, ms, data })
    await this.ctx.store.appendTurn(thread_id, {
      question: this.req.question,
      standalone: this.standalone,
      result,
      collections: data.scope?.collections ?? [],
    })
    this.emit({ type: 'final', result })
    return result
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
