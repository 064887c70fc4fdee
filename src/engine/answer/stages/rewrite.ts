import type { ModelRewrite } from '../../../shared/trace'
import { looksLikeFollowUp, rewriteFollowUpDeterministic, rewriteFollowUpWithModel } from '../followup'
import { errorText, type AskRun } from './run'

/**
 * Follow-ups ("and what about v2?") are rewritten into a standalone question from the recent
 * turns of the thread, for retrieval only: the answer model still sees what the person asked.
 */
export async function rewriteFollowUp(run: AskRun, question: string): Promise<void> {
  const { ctx, req, opts, trace, base } = run
  const history = await ctx.store.history(base.thread_id)
  run.standalone = question
  if (history.length > 0 && looksLikeFollowUp(question)) {
    run.stage('rewrite', 'Working out what your follow-up refers to')
    const deterministic = rewriteFollowUpDeterministic(question, history)
    let model: ModelRewrite | null = null
    if (ctx.chat && !req.searchOnly) {
      try {
        model = await rewriteFollowUpWithModel(ctx.chat, question, history, opts.signal)
      } catch (err) {
        run.checkAbort()
        model = { standalone: null, raw: '', tokensIn: 0, tokensOut: 0, problem: errorText(err) }
      }
    }
    run.standalone = model?.standalone ?? deterministic ?? question
    trace.rewrite = {
      history: history.map((h) => h.standalone),
      deterministic,
      model,
      used: model?.standalone ? 'model' : deterministic ? 'deterministic' : 'none',
    }
    if (run.standalone !== question) base.rewritten_question = run.standalone
  }
  trace.standalone_question = run.standalone
}
