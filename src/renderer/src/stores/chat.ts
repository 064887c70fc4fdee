import { create, type StoreApi } from 'zustand'
import {
  askResultBase,
  type AskEvent,
  type AskResult,
  type AskStage,
  type PassagePreview,
  type Thread,
  type ThreadSummary,
} from '../../../shared/answer'
import type { Scope } from '../../../shared/search'
import { call, errorMessage } from '../docent'
import { useNav } from './nav'

/**
 * Threads and the turns of the open thread. A turn streams: stage messages, then draft tokens,
 * then the final verified result that replaces the draft. Events are routed by requestId; events
 * that arrive before `invoke('ask')` has returned its requestId are buffered, not dropped. The
 * engine host validates every event and reply against the contract, so they arrive typed.
 */

export type { ThreadSummary }

export interface Stage {
  stage: AskStage
  message: string
}

export interface Turn {
  id: string
  question: string
  scope: Scope
  searchOnly: boolean
  requestId: string | null
  status: 'sending' | 'streaming' | 'done' | 'stopped' | 'error'
  stages: Stage[]
  draft: string
  draftAttempt: number
  /** The passages the model is reading, shown while the answer is written (and kept if it is stopped). */
  passages: PassagePreview[]
  /** How far the model has got (prompt tokens read, tokens written, elapsed, estimate). */
  progress: Extract<AskEvent, { type: 'progress' }> | null
  /** When the question was sent and when the last progress event came (Date.now()), so the wait can tick locally. */
  sentAt: number
  progressAt: number | null
  /** When the person stopped it (null: not stopped by the person, e.g. a question restored without its answer). */
  stoppedAt: number | null
  result: AskResult | null
  error: string | null
}

interface ChatState {
  threadId: string | null
  threads: ThreadSummary[]
  turns: Turn[]
  scope: Scope
  loadingThread: boolean
  setScope(scope: Scope): void
  refreshThreads(): Promise<void>
  newThread(): void
  openThread(threadId: string): Promise<void>
  deleteThread(threadId: string): Promise<void>
  ask(question: string, opts?: { searchOnly?: boolean }): Promise<void>
  retry(turnId: string): Promise<void>
  stop(): Promise<void>
  receive(requestId: string, event: AskEvent | DoneMarker): void
  /** `ask.done`: every request ends with it; a turn still open then failed (or ended without a result). */
  finish(requestId: string, error: string | null): void
}

/** `ask.done` travels through the same buffer as the ask events, so ordering is kept. */
const DONE = Symbol('ask.done')
interface DoneMarker {
  [DONE]: true
  error: string | null
}
const isDone = (v: AskEvent | DoneMarker): v is DoneMarker => DONE in v

let nextTurn = 1

function newThreadId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  const b = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
}

const pending = new Map<string, (AskEvent | DoneMarker)[]>()

export function activeTurn(turns: Turn[]): Turn | null {
  const last = turns.at(-1)
  return last && (last.status === 'sending' || last.status === 'streaming') ? last : null
}

function applyEvent(turn: Turn, ev: AskEvent): Turn {
  switch (ev.type) {
    case 'stage':
      return { ...turn, status: 'streaming', stages: [...turn.stages, { stage: ev.stage, message: ev.message }] }
    case 'token':
      // A new attempt (the corrective retry after failed verification) starts a fresh draft.
      return ev.attempt !== turn.draftAttempt
        ? { ...turn, status: 'streaming', draft: ev.text, draftAttempt: ev.attempt }
        : { ...turn, status: 'streaming', draft: turn.draft + ev.text }
    case 'passages':
      return { ...turn, status: 'streaming', passages: ev.passages }
    case 'progress':
      return { ...turn, status: 'streaming', progress: ev, progressAt: Date.now() }
    case 'final':
      return { ...turn, status: 'done', result: ev.result, draft: '', progress: null, progressAt: null }
  }
}

type SetChat = StoreApi<ChatState>['setState']
type GetChat = StoreApi<ChatState>['getState']

function patchTurn(set: SetChat, turnId: string, patch: (t: Turn) => Turn): void {
  set((s) => ({ turns: s.turns.map((t) => (t.id === turnId ? patch(t) : t)) }))
}

/** A turn not yet answered; `status` and `sentAt` say whether it is being asked now or restored. */
function blankTurn(question: string, scope: Scope, fields: Pick<Turn, 'searchOnly' | 'status' | 'sentAt'>): Turn {
  return {
    id: `t${nextTurn++}`,
    question,
    scope,
    searchOnly: fields.searchOnly,
    requestId: null,
    status: fields.status,
    stages: [],
    draft: '',
    draftAttempt: 1,
    passages: [],
    progress: null,
    sentAt: fields.sentAt,
    progressAt: null,
    stoppedAt: null,
    result: null,
    error: null,
  }
}

function threadActions(
  set: SetChat,
  get: GetChat,
): Pick<ChatState, 'refreshThreads' | 'newThread' | 'openThread' | 'deleteThread'> {
  return {
    refreshThreads: async () => {
      try {
        const stored = await call('threads.list', {})
        // The conversation being answered is listed before the engine has stored it (or when it
        // never will: a read-only library), as long as its question is open.
        const { threadId, turns, threads } = get()
        const open = activeTurn(turns) ? threads.find((t) => t.id === threadId && !stored.some((x) => x.id === t.id)) : undefined
        const list = open ? [...stored, open] : [...stored]
        set({ threads: list.sort((a, b) => b.updated_at.localeCompare(a.updated_at)) })
      } catch {
        // The list is a convenience; chat keeps working without it.
      }
    },

    newThread: () => {
      if (activeTurn(get().turns)) void get().stop()
      set({ threadId: null, turns: [] })
    },

    openThread: async (threadId) => {
      if (activeTurn(get().turns)) void get().stop()
      set({ threadId, turns: [], loadingThread: true })
      try {
        const thread = await call('threads.get', { threadId })
        if (get().threadId !== threadId) return
        const turns = turnsFromThread(thread, get().scope)
        set({ turns })
        void restoreCitations(threadId, turns)
      } catch (err) {
        useNav.getState().notify(`Couldn't open the conversation: ${errorMessage(err)}`, 'error')
      } finally {
        set({ loadingThread: false })
      }
    },

    deleteThread: async (threadId) => {
      try {
        await call('threads.delete', { threadId })
        if (get().threadId === threadId) set({ threadId: null, turns: [] })
        set((s) => ({ threads: s.threads.filter((t) => t.id !== threadId) }))
      } catch (err) {
        useNav.getState().notify(`Couldn't delete the conversation: ${errorMessage(err)}`, 'error')
      }
    },
  }
}

async function askQuestion(set: SetChat, get: GetChat, question: string, opts: { searchOnly?: boolean }): Promise<void> {
  const text = question.trim()
  if (!text || activeTurn(get().turns)) return
  const scope = get().scope
  const turn = blankTurn(text, scope, { searchOnly: opts.searchOnly ?? false, status: 'sending', sentAt: Date.now() })
  // A new conversation gets its id here, not from its answer, so the sidebar lists it at once
  // (the engine creates a thread it is given: AskRequest.threadId).
  const threadId = get().threadId ?? newThreadId()
  set((s) => ({
    turns: [...s.turns, turn],
    threadId,
    threads: s.threads.some((t) => t.id === threadId)
      ? s.threads
      : [{ id: threadId, title: text, updated_at: new Date().toISOString() }, ...s.threads],
  }))
  try {
    const { requestId } = await call('ask', {
      question: text,
      scope,
      threadId,
      ...(opts.searchOnly ? { searchOnly: true } : {}),
    })
    patchTurn(set, turn.id, (t) => ({ ...t, requestId }))
    const early = pending.get(requestId)
    pending.delete(requestId)
    for (const ev of early ?? []) get().receive(requestId, ev)
  } catch (err) {
    patchTurn(set, turn.id, (t) => ({ ...t, status: 'error', error: errorMessage(err) }))
  }
}

/** The event beat invoke('ask') back: keep it until the requestId is known (bounded). */
function keepEarlyEvent(requestId: string, ev: AskEvent | DoneMarker): void {
  const list = pending.get(requestId) ?? []
  if (list.length < 5000) list.push(ev)
  pending.set(requestId, list)
  if (pending.size > 50) pending.delete(pending.keys().next().value!)
}

function receiveEvent(set: SetChat, get: GetChat, requestId: string, ev: AskEvent | DoneMarker): void {
  const turn = get().turns.find((t) => t.requestId === requestId)
  if (!turn) return keepEarlyEvent(requestId, ev)
  if (turn.status === 'stopped' || turn.status === 'error' || turn.status === 'done') return
  if (isDone(ev)) {
    const error = ev.error ?? 'The answer ended without a result. Try again.'
    patchTurn(set, turn.id, (t) => ({ ...t, status: 'error', error }))
    void get().refreshThreads()
    return
  }
  const first = turn.stages.length === 0 && turn.passages.length === 0 && !turn.progress
  patchTurn(set, turn.id, (t) => applyEvent(t, ev))
  // By its first event the engine has stored the thread: list it with its stored title and time.
  if (first && ev.type !== 'final') void get().refreshThreads()
  if (ev.type === 'final') {
    if (ev.result.thread_id && get().threadId !== ev.result.thread_id) set({ threadId: ev.result.thread_id })
    void get().refreshThreads()
  }
}

function askActions(set: SetChat, get: GetChat): Pick<ChatState, 'ask' | 'retry' | 'stop' | 'receive' | 'finish'> {
  return {
    ask: (question, opts = {}) => askQuestion(set, get, question, opts),

    retry: async (turnId) => {
      const turn = get().turns.find((t) => t.id === turnId)
      if (!turn || activeTurn(get().turns)) return
      const before = get().scope
      set({ scope: turn.scope })
      await get().ask(turn.question, { searchOnly: turn.searchOnly })
      set({ scope: before })
    },

    stop: async () => {
      const turn = activeTurn(get().turns)
      if (!turn) return
      patchTurn(set, turn.id, (t) => ({ ...t, status: 'stopped', stoppedAt: Date.now() }))
      if (turn.requestId) {
        try {
          await call('ask.cancel', { requestId: turn.requestId })
        } catch {
          // Already finished or gone: the turn is stopped either way.
        }
      }
      void get().refreshThreads()
    },

    receive: (requestId, ev) => receiveEvent(set, get, requestId, ev),

    finish: (requestId, error) => get().receive(requestId, { [DONE]: true, error } satisfies DoneMarker),
  }
}

export const useChat = create<ChatState>()((set, get) => ({
  threadId: null,
  threads: [],
  turns: [],
  // 'auto': no version chosen, so a version the question names is searched (else every version).
  scope: { collections: [], version: 'auto' },
  loadingThread: false,
  setScope: (scope) => set({ scope }),
  ...threadActions(set, get),
  ...askActions(set, get),
}))

function emptyResult(answer: string | null, traceId: string | null, threadId: string): AskResult {
  return {
    ...askResultBase({ trace_id: traceId ?? '', thread_id: threadId }),
    answer,
    abstained: answer === null,
    reason: null,
    mode: 'answer',
  }
}

/**
 * Rebuilds turns from `threads.get`. An assistant message that carries its full `result` is shown
 * as it was; otherwise its text is shown and `restoreCitations` fills the rest in from its trace.
 */
export function turnsFromThread(thread: Thread, scope: Scope): Turn[] {
  const turns: Turn[] = []
  for (const m of thread.messages) {
    if (m.role === 'user') {
      turns.push(
        blankTurn(m.content ?? '', scope, { searchOnly: false, status: 'stopped', sentAt: Date.parse(m.created_at) || 0 }),
      )
      continue
    }
    const last = turns.at(-1)
    if (!last || last.result) continue
    turns[turns.length - 1] = { ...last, status: 'done', result: m.result ?? emptyResult(m.content, m.trace_id, thread.id) }
  }
  return turns
}

/** Fills in citations (and abstention details) of restored answers from their traces, which keep the full result. */
async function restoreCitations(threadId: string, turns: Turn[]): Promise<void> {
  for (const t of turns) {
    const r = t.result
    if (!r || !r.trace_id || r.citations.length > 0 || (r.answer === null && r.closest.length > 0)) continue
    try {
      const full = (await call('trace.get', { traceId: r.trace_id })).data.result
      if (useChat.getState().threadId !== threadId) continue
      useChat.setState((s) => ({
        turns: s.turns.map((x) => (x.id === t.id ? { ...x, result: { ...full, trace_id: r.trace_id } } : x)),
      }))
    } catch {
      // The text is already shown; citations are a bonus when the trace is still there.
    }
  }
}
