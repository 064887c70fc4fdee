import { randomUUID } from 'node:crypto'
import { errorMessage } from '../../../shared/errors'
import type { HostDeps } from '../context'
import type { HandlerMap } from '../types'

export type AskHandlers = HandlerMap<'ask' | 'ask.cancel'>

export function askHandlers({ engine, modelUse, asks, emit }: HostDeps): AskHandlers {
  return {
    ask: async ({ question, threadId, scope, searchOnly }) => {
      const requestId = `ask_${randomUUID()}`
      const controller = new AbortController()
      asks.set(requestId, controller)
      const { signal } = controller
      // Answers stream as ask.event (stages, draft tokens, the verified final result); ask.done closes every request.
      void (async () => {
        let error: string | null = null
        try {
          await modelUse.using(() =>
            engine.ask(
              { question, scope, threadId, searchOnly },
              { signal, onEvent: (event) => emit('ask.event', { requestId, event }) },
            ),
          )
        } catch (err) {
          error = signal.aborted ? 'The question was cancelled.' : errorMessage(err)
        } finally {
          asks.delete(requestId)
          emit('ask.done', { requestId, error })
        }
      })()
      return { requestId }
    },

    'ask.cancel': async ({ requestId }) => {
      const controller = asks.get(requestId)
      if (!controller) return { cancelled: false }
      controller.abort()
      return { cancelled: true }
    },
  }
}
