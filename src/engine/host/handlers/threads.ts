import type { HostDeps } from '../context'
import { ErrorCode } from '../protocol'
import { HostError, type HandlerMap } from '../types'

export type ThreadsHandlers = HandlerMap<'threads.list' | 'threads.get' | 'threads.delete' | 'trace.get'>

export function threadsHandlers({ engine }: HostDeps): ThreadsHandlers {
  return {
    'threads.list': async () => engine.answers.listThreads(),
    'threads.get': async ({ threadId }) => {
      const thread = await engine.answers.getThread(threadId)
      if (!thread) throw new HostError('There is no conversation with that id (it may have been deleted).', ErrorCode.notFound)
      return thread
    },
    'threads.delete': async ({ threadId }) => ({ deleted: await engine.answers.deleteThread(threadId) }),
    'trace.get': async ({ traceId }) => {
      const trace = await engine.answers.trace(traceId)
      if (!trace) throw new HostError('There is no trace with that id (it may have been removed).', ErrorCode.notFound)
      return trace
    },
  }
}
