import { useEffect, useMemo, useRef, useState, type RefObject } from 'react'
import type { AnswerSentence, AskResult, Citation } from '../lib/ask-types'
import { renderAnswerHtml, markdownToSafeHtml } from '../lib/sanitize'
import { activeTurn, useChat, type Turn } from '../stores/chat'
import { useCollections } from '../stores/collections'
import { statusFor, useModels } from '../stores/models'
import { useNav } from '../stores/nav'
import { useViewer } from '../stores/viewer'
import { AlertIcon, CheckIcon, CopyIcon, InfoIcon, RetryIcon, SearchIcon, SendIcon, Spinner, StopIcon, TraceIcon } from './Icons'
import { ModelsNotice, saysModelMissing, useMissingModels } from './ModelsNotice'
import { Onboarding } from './Onboarding'
import { RichContent } from './RichContent'
import { ScopePicker } from './ScopePicker'
import { Abstention, HitList, SourcesList, type SectionRef } from './Sources'
import type { ScopeInfo } from '../../../shared/search'
import { formatElapsed } from '../lib/format'
import { unversionedLabel, withoutAllVersions } from '../lib/scope-words'
import { RemovedSentences, UnansweredParts } from './ClaimNotes'
import { PassagePreviews } from './Passages'
import { Waiting } from './Waiting'

export function ChatPane() {
  const turns = useChat((s) => s.turns)
  const threadId = useChat((s) => s.threadId)
  const threads = useChat((s) => s.threads)
  const loadingThread = useChat((s) => s.loadingThread)
  const stop = useChat((s) => s.stop)
  const logRef = useRef<HTMLDivElement>(null)
  const title = threads.find((t) => t.id === threadId)?.title ?? (turns[0]?.question || 'New conversation')

  // Escape stops a streaming answer from anywhere in the window (dialogs handle their own Escape).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented || useNav.getState().confirm) return
      if (activeTurn(useChat.getState().turns)) {
        e.preventDefault()
        void stop()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [stop])

  // Follow the stream while the person is near the bottom.
  const last = turns.at(-1)
  const followKey = `${turns.length}:${last?.stages.length ?? 0}:${last?.passages.length ?? 0}:${last?.draft.length ?? 0}:${last?.status ?? ''}`
  useEffect(() => {
    const el = logRef.current
    if (!el) return
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 240 || last?.status === 'sending') el.scrollTop = el.scrollHeight
  }, [followKey, last?.status])

  return (
    <section className="chat" aria-label="Chat">
      <header className="pane-header">
        <h1 className="pane-title" title={title}>
          {title}
        </h1>
        <ScopePicker />
      </header>
      {turns.length > 0 && <ModelsNotice />}
      <div
        className="transcript"
        ref={logRef}
        role="log"
        aria-label="Conversation"
        aria-live="polite"
        aria-busy={!!activeTurn(turns)}
      >
        {loadingThread ? (
          <div className="center-note">
            <Spinner label="Loading conversation" />
          </div>
        ) : turns.length === 0 ? (
          <Onboarding />
        ) : (
          <div className="turns">
            {turns.map((t) => (
              <TurnView key={t.id} turn={t} />
            ))}
          </div>
        )}
      </div>
      <Composer />
    </section>
  )
}

export function Composer() {
  const [text, setText] = useState('')
  const ask = useChat((s) => s.ask)
  const stop = useChat((s) => s.stop)
  const streaming = useChat((s) => !!activeTurn(s.turns))
  const hasCollections = useCollections((s) => s.collections.length > 0)
  const searchOnlySetting = useModels((s) => s.settings?.searchOnly ?? false)
  const llm = useModels((s) => statusFor(s.statuses, 'llm'))
  const modelsLoaded = useModels((s) => s.loaded)
  const ref = useRef<HTMLTextAreaElement>(null)
  const searchOnly = searchOnlySetting || (modelsLoaded && !llm?.installed)

  useGrowWithText(ref, text)

  const send = () => {
    const q = text.trim()
    if (!q || streaming) return
    setText('')
    void ask(q, { searchOnly: searchOnlySetting })
  }

  return (
    <div className="composer-wrap">
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault()
          send()
        }}
      >
        <label htmlFor="question" className="visually-hidden">
          Ask a question about your documents
        </label>
        <textarea
          id="question"
          ref={ref}
          rows={1}
          value={text}
          placeholder={hasCollections ? 'Ask a question about your documents…' : 'Add a folder first, then ask about it…'}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault()
              send()
            }
          }}
          aria-describedby="composer-hint"
        />
        {streaming ? (
          <button type="button" className="btn btn-stop" onClick={() => void stop()} aria-label="Stop answering (Escape)">
            <StopIcon size={15} /> Stop
          </button>
        ) : (
          <button type="submit" className="btn btn-primary btn-send" disabled={!text.trim()} aria-label="Send question">
            <SendIcon size={15} />
          </button>
        )}
      </form>
      <ComposerHint searchOnly={searchOnly} searchOnlySetting={searchOnlySetting} />
    </div>
  )
}

/** The question box grows with its text, up to 200 px, then scrolls. */
function useGrowWithText(ref: RefObject<HTMLTextAreaElement | null>, text: string): void {
  useEffect(() => {
    const el = ref.current
    if (!el) return
    el.style.height = 'auto'
    el.style.height = `${Math.min(el.scrollHeight, 200)}px`
  }, [ref, text])
}

/** Says whether answers are written or only passages found (by the setting, or for want of a chat model). */
function ComposerHint({ searchOnly, searchOnlySetting }: { searchOnly: boolean; searchOnlySetting: boolean }) {
  return (
    <div id="composer-hint" className="composer-hint">
      {searchOnly ? (
        <span
          className="pill"
          title={searchOnlySetting ? 'Search-only mode is on in Models & Settings' : 'The chat model is not installed'}
        >
          <SearchIcon size={12} /> Search only: you'll get matching passages, not written answers
        </span>
      ) : (
        <span className="pill pill-quiet">
          <CheckIcon size={12} /> Answers cite their sources; citations are checked
        </span>
      )}
      <span className="muted">Enter to send · Shift+Enter for a new line · Esc to stop</span>
    </div>
  )
}

function TurnView({ turn }: { turn: Turn }) {
  const retry = useChat((s) => s.retry)
  const busy = useChat((s) => !!activeTurn(s.turns))
  const library = useCollections((s) => s.collections)
  const unversioned = unversionedLabel(library, turn.scope.collections)
  const stageText = (message: string) => withoutAllVersions(message, unversioned)
  return (
    <article className="turn" aria-label={`Question: ${turn.question}`}>
      <div className="question-row">
        <div className="question-bubble">{turn.question}</div>
      </div>
      <div className="response">
        {(turn.status === 'sending' || turn.status === 'streaming') && <Waiting turn={turn} stageText={stageText} />}
        {turn.status === 'stopped' && (
          <div className="notice notice-muted" role="status">
            <InfoIcon size={15} />
            <span>
              {turn.stoppedAt != null
                ? `Stopped after ${formatElapsed(turn.stoppedAt - turn.sentAt)}, before the answer.`
                : 'Stopped before the answer.'}{' '}
              Nothing was checked, so no answer is shown.
            </span>
            <button type="button" className="btn btn-small" disabled={busy} onClick={() => void retry(turn.id)}>
              <RetryIcon size={13} /> Ask again
            </button>
          </div>
        )}
        {turn.status === 'error' && (
          <div className="notice notice-error" role="alert">
            <AlertIcon size={15} />
            <span>{turn.error ?? 'Something went wrong.'}</span>
            <button type="button" className="btn btn-small" disabled={busy} onClick={() => void retry(turn.id)}>
              <RetryIcon size={13} /> Retry
            </button>
          </div>
        )}
        {(turn.status === 'stopped' || turn.status === 'error') && turn.passages.length > 0 && (
          <PassagePreviews
            passages={turn.passages}
            label="Passages read before the answer stopped"
            title={`Stopped before the answer: the ${turn.passages.length === 1 ? 'passage' : `${turn.passages.length} passages`} the model was reading`}
            note="Highlighted: the sentences that match your question. These are the documents' own words; no answer was written from them."
          />
        )}
        {turn.status === 'done' && turn.result && <ResultView turn={turn} result={turn.result} unversioned={unversioned} />}
      </div>
    </article>
  )
}

function ResultView({ turn, result, unversioned }: { turn: Turn; result: AskResult; unversioned: string | null }) {
  const openSource = useViewer((s) => s.openSource)

  const openCitation = (n: number) => {
    const c = result.citations.find((x) => x.n === n)
    if (c) void openSource(c.chunk_id, `Source ${n}`)
  }

  // The words retrieval searched for, marked in each passage's excerpt.
  const query = result.rewritten_question ?? turn.question

  return (
    <div className="result">
      <ResultNotes result={result} />
      {result.rewritten_question && result.rewritten_question !== turn.question && (
        <div className="rewritten muted small">Searched for: “{result.rewritten_question}”</div>
      )}
      {result.mode !== 'smalltalk' && result.scope && (
        <div className="scope-line muted small" title={scopeTitle(result.scope, unversioned)}>
          Searching {withoutAllVersions(result.scope.label, unversioned)}
        </div>
      )}

      {result.mode === 'smalltalk' ? (
        <RichContent className="markdown answer" html={markdownToSafeHtml(result.answer ?? '')} />
      ) : result.abstained || (result.mode === 'answer' && !result.answer) ? (
        <Abstention
          result={result}
          query={query}
          scopeLabel={withoutAllVersions(result.scope_label, unversioned)}
          onOpen={(h, i) => void openSource(h.chunk_id, `Closest section ${i + 1}`)}
        />
      ) : result.mode === 'search-only' ? (
        <div className="search-only">
          <div className="result-heading">
            <SearchIcon size={15} /> Matching passages
          </div>
          <p className="muted small">
            Search only: these passages matched{' '}
            {result.scope_label ? `in ${withoutAllVersions(result.scope_label, unversioned)}` : 'your question'}. No answer was
            written.
          </p>
          <HitList
            hits={searchOnlyHits(result)}
            query={query}
            onOpen={(h, i) => void openSource(h.chunk_id, `Passage ${i + 1}`)}
          />
        </div>
      ) : (
        <>
          <AnswerBody
            answer={result.answer ?? ''}
            citations={result.citations}
            unverified={result.unverified_claims}
            sentences={result.sentences}
            onCite={openCitation}
          />
          <RemovedSentences removed={result.removed ?? []} />
          <UnansweredParts parts={result.unanswered_parts} />
          <SourcesList citations={result.citations} onOpen={openCitation} />
          {result.cached && (
            <div className="muted small">Answered earlier from the same documents; nothing has changed since.</div>
          )}
        </>
      )}

      <ResultActions turn={turn} result={result} />
    </div>
  )
}

/** The engine's notices and warnings about a result, less those said elsewhere on the screen. */
function ResultNotes({ result }: { result: AskResult }) {
  // Notices that only say a model is missing are said once, by ModelsNotice above the conversation.
  const missingModels = useMissingModels()
  const allNotes = [...result.notices, ...result.warnings]
  // The engine's "1 sentence was removed…" is for clients without the removed list; here the list says it.
  const removedShown = (result.removed ?? []).length > 0
  const notes = allNotes.filter((n) => !saysModelMissing(n, missingModels) && !(removedShown && REMOVAL_NOTICE.test(n)))
  if (notes.length === 0 && !(result.degraded && allNotes.length === 0)) return null
  return (
    <div className="notice notice-warn" role="note">
      <AlertIcon size={15} />
      <div>
        {notes.length
          ? notes.map((w) => <div key={w}>{w}</div>)
          : 'Some search stages were unavailable, so results may be weaker.'}
      </div>
    </div>
  )
}

function ResultActions({ turn, result }: { turn: Turn; result: AskResult }) {
  const openTrace = useViewer((s) => s.openTrace)
  const retry = useChat((s) => s.retry)
  const busy = useChat((s) => !!activeTurn(s.turns))
  const notify = useNav((s) => s.notify)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(answerAsText(result))
      notify('Answer copied with its sources.')
    } catch {
      notify("Couldn't copy to the clipboard.", 'error')
    }
  }
  return (
    <div className="result-actions">
      {result.answer && result.mode !== 'search-only' && !result.abstained && (
        <button type="button" className="btn btn-small btn-quiet" onClick={() => void copy()}>
          <CopyIcon size={13} /> Copy
        </button>
      )}
      <button type="button" className="btn btn-small btn-quiet" disabled={busy} onClick={() => void retry(turn.id)}>
        <RetryIcon size={13} /> Retry
      </button>
      {result.trace_id && (
        <button type="button" className="btn btn-small btn-quiet" onClick={() => void openTrace(result.trace_id!, turn.question)}>
          <TraceIcon size={13} /> {result.mode === 'answer' && !result.abstained ? 'Why this answer?' : 'How was this found?'}
        </button>
      )}
    </div>
  )
}

/**
 * The answer with citation chips, each sentence with its own marker (its chips, its release when
 * sources span releases, whether Docent copied it from the source); numbers and quotes its sources
 * do not contain are marked as not verified.
 */
function AnswerBody({
  answer,
  citations,
  unverified,
  sentences,
  onCite,
}: {
  answer: string
  citations: Citation[]
  unverified?: string[]
  sentences?: AnswerSentence[]
  onCite: (n: number) => void
}) {
  const html = useMemo(
    () => renderAnswerHtml(answer, citations, unverified, sentences),
    [answer, citations, unverified, sentences],
  )
  return <RichContent className="markdown answer" html={html} onCite={onCite} label="Answer" />
}

const REMOVAL_NOTICE = /^\d[\d,]* sentences? (was|were) removed: /

/** Why the versions searched were searched, for the scope line's tooltip. */
function scopeTitle(scope: ScopeInfo, unversioned: string | null): string {
  if (scope.source === 'named_in_question')
    return `Your question names ${scope.named.join(', ')}; choose a version in the picker to search another.`
  if (unversioned) return 'These documents have no versions: all of them were searched.'
  if (scope.source === 'default') return 'No version was chosen or named in the question, so every version was searched.'
  return 'The version chosen in the picker.'
}

/** Search-only results list every passage as a citation; snippets come from `closest` where the engine sent them. */
function searchOnlyHits(result: AskResult): SectionRef[] {
  const snippets = new Map(result.closest.map((c) => [c.chunk_id, c.snippet]))
  if (result.citations.length === 0) return result.closest
  return result.citations.map((c) => ({ ...c, snippet: snippets.get(c.chunk_id) }))
}

function answerAsText(result: AskResult): string {
  const lines = [result.answer ?? '']
  if (result.citations.length) {
    lines.push('', 'Sources:')
    for (const c of result.citations) {
      lines.push(
        `[${c.n}] ${c.path}${c.heading ? ` — ${c.heading}` : ''}${c.version ? ` (${c.version})` : ''}${c.page != null ? `, p. ${c.page}` : ''}`,
      )
    }
  }
  return lines.join('\n')
}
