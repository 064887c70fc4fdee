import { randomUUID } from 'node:crypto'
import type { AskEvent, AskStage } from '../../../shared/answer'
import type { AskOutcome, AskTrace } from '../../../shared/trace'
import { AskRequest, AskResult, type AskRequestParsed } from '../../../shared/answer'
import { round } from '../../core/numbers'
import { DEFAULT_ASK_OPTIONS, type AskContext, type AskOptions, type ResolvedAskOptions } from '../context'
import { classifySmalltalk, type SmalltalkMatch } from '../route'

/** The trace sections a question's stages find, in the order they are found: the pipeline assembles them. */
export type AskSections = Omit<AskTrace, TraceHeaderKey | 'result'>

/** The trace fields known before any stage runs (and the time per stage, which the run keeps). */
type TraceHeaderKey = 'version' | 'question' | 'scope_requested' | 'options' | 'models' | 'stages_ms' | 'route'

/**
 * What every stage is given besides its own inputs: the injected dependencies, the question's
 * options, and the run's progress events, stage timing and cancellation. A stage returns what it
 * found; it never writes the trace or the result.
 */
export interface StageEnv {
  readonly ctx: AskContext
  readonly opts: ResolvedAskOptions
  /** Ends the running stage (adding its time) and announces the next one in words. */
  stage(name: AskStage, message: string): void
  emit(e: AskEvent): void
  /** Throws when the question was cancelled. */
  checkAbort(): void
}

/**
 * One question being answered: what is cross-cutting to its stages (events, stage timing,
 * cancellation) and its end. Every outcome ends in `finish`, which stores the trace the pipeline
 * assembled and the turn, and emits the final event.
 */
export class AskRun implements StageEnv {
  private current: { name: AskStage; t0: number } | null = null
  private readonly stagesMs: AskTrace['stages_ms'] = {}

  private constructor(
    readonly ctx: AskContext,
    readonly req: AskRequestParsed,
    readonly opts: ResolvedAskOptions,
    readonly ids: { trace_id: string; thread_id: string },
    /** Set when the question is small talk: answered without retrieval. */
    readonly smalltalk: SmalltalkMatch | null,
    private readonly started: number,
  ) {}

  /** Validates the request, opens its thread and routes it (small talk or a question for the documents). */
  static async begin(ctx: AskContext, request: AskRequest, options: AskOptions): Promise<AskRun> {
    const req = AskRequest.parse(request)
    const opts: ResolvedAskOptions = { ...DEFAULT_ASK_OPTIONS, ...stripUndefined(options) }
    const started = performance.now()
    const threadId = await ctx.store.ensureThread(req.threadId, req.question)
    const ids = { trace_id: randomUUID(), thread_id: threadId }
    const run = new AskRun(ctx, req, opts, ids, classifySmalltalk(req.question), started)
    run.stage('route', 'Reading your question')
    return run
  }

  emit(e: AskEvent): void {
    this.opts.onEvent?.(e)
  }

  stage(name: AskStage, message: string): void {
    this.endStage()
    this.current = { name, t0: performance.now() }
    this.emit({ type: 'stage', stage: name, message })
  }

  private endStage(): void {
    if (!this.current) return
    const { name, t0 } = this.current
    this.stagesMs[name] = round((this.stagesMs[name] ?? 0) + performance.now() - t0, 2)
    this.current = null
  }

  checkAbort(): void {
    const signal = this.opts.signal
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('The question was cancelled.')
  }

  /**
   * Validates the result, stores the trace (its header, the sections the pipeline assembled, the
   * result) and the turn, and emits the final event. `standalone` is the question retrieval used.
   */
  async finish(sections: AskSections, unordered: AskResult, outcome: AskOutcome, standalone: string): Promise<AskResult> {
    // Parsing validates the result and puts its keys in contract order (answer, abstained, reason, ...).
    const result = AskResult.parse(unordered)
    this.stage('done', result.abstained ? 'Done (no answer from the documents)' : 'Done')
    this.endStage()
    const ms = round(performance.now() - this.started, 2)
    const data: AskTrace = { ...this.traceHeader(), ...sections, result }
    const { trace_id: id, thread_id } = this.ids
    await this.ctx.store.saveTrace({ id, thread_id, question: this.req.question, outcome, ms, data })
    await this.ctx.store.appendTurn(thread_id, {
      question: this.req.question,
      standalone,
      result,
      collections: data.scope?.collections ?? [],
    })
    this.emit({ type: 'final', result })
    return result
  }

  /** The question, its options and models, the time per stage and the route: what every trace begins with. */
  private traceHeader(): Pick<AskTrace, TraceHeaderKey> {
    const { ctx, req, opts } = this
    return {
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
      stages_ms: this.stagesMs,
      route: { smalltalk: this.smalltalk?.kind ?? null },
    }
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
