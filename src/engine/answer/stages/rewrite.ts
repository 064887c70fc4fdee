import type { ModelRewrite, RewriteTrace } from '../../../shared/trace'
import type { ChatModel } from '../../core/model-ports'
import { looksLikeFollowUp, rewriteFollowUpDeterministic, rewriteFollowUpWithModel } from '../followup'
import { errorText, type StageEnv } from './run'

/** The question retrieval uses, and how a follow-up was rewritten into it (null: not a follow-up). */
export interface Rewritten {
  standalone: string
  trace: RewriteTrace | null
}

/**
 * Follow-ups ("and what about v2?") are rewritten into a standalone question from the recent
 * turns of the thread, for retrieval only: the answer model still sees what the person asked.
 */
export async function rewriteFollowUp(
  env: StageEnv,
  /** The model that rewrites; null: search-only, or none is loaded. */
  chat: ChatModel | null,
  question: string,
  threadId: string,
): Promise<Rewritten> {
  const { ctx, opts } = env
  const history = await ctx.store.history(threadId)
  if (history.length === 0 || !looksLikeFollowUp(question)) return { standalone: question, trace: null }
  env.stage('rewrite', 'Working out what your follow-up refers to')
  const deterministic = rewriteFollowUpDeterministic(question, history)
  let model: ModelRewrite | null = null
  if (chat) {
    try {
      model = await rewriteFollowUpWithModel(chat, question, history, opts.signal)
    } catch (err) {
      env.checkAbort()
      model = { standalone: null, raw: '', tokensIn: 0, tokensOut: 0, problem: errorText(err) }
    }
  }
  const trace: RewriteTrace = {
    history: history.map((h) => h.standalone),
    deterministic,
    model,
    used: model?.standalone ? 'model' : deterministic ? 'deterministic' : 'none',
  }
  return { standalone: model?.standalone ?? deterministic ?? question, trace }
}
