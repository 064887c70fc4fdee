import type { AskEvent } from '../lib/ask-types'
import { formatElapsed, formatTimeLeft, plural } from '../lib/format'
import { useNow } from '../lib/useNow'
import type { Turn } from '../stores/chat'
import { ProgressBar } from './Common'
import { CheckIcon, Spinner } from './Icons'
import { PassagePreviews } from './Passages'

type Progress = Extract<AskEvent, { type: 'progress' }>

/**
 * What a person sees while an answer is written: the stages so far, how long it has taken (ticking
 * here every second, with or without events), how far the model has read its prompt and an
 * estimate from the rate the engine measured, and the passages it is reading.
 */
export function Waiting({ turn, stageText }: { turn: Turn; stageText: (message: string) => string }) {
  const now = useNow(true)
  const earlier = turn.stages.slice(0, -1)
  return (
    <div className="streaming">
      <ol className="stages" aria-label="Progress">
        {earlier.map((s, i) => (
          <li key={i} className="stage done">
            <CheckIcon size={13} /> {stageText(s.message)}
          </li>
        ))}
        <li className="stage current" aria-live="polite">
          <Spinner /> {currentText(turn, stageText)}
          {/* A timer, not news: the live log around it must not announce every second. */}
          <span className="stage-elapsed muted" role="timer" aria-live="off" aria-label="Time so far">
            {formatElapsed(now - turn.sentAt)}
          </span>
        </li>
      </ol>
      {turn.progress && <ModelProgress progress={turn.progress} at={turn.progressAt ?? now} now={now} />}
      {turn.passages.length > 0 && (
        <PassagePreviews
          passages={turn.passages}
          label="Passages being read"
          title={`While the answer is written: the ${plural(turn.passages.length, 'passage')} the model is reading`}
          note="Highlighted: the sentences that match your question. The answer that replaces them cites only what these passages say."
        />
      )}
      {turn.draft && (
        <div className="draft" aria-label="Draft answer, not yet checked">
          <div className="draft-label">Draft — citations not checked yet</div>
          <div className="draft-text">{turn.draft}</div>
        </div>
      )}
    </div>
  )
}

/**
 * The current stage in words. The engine names the model's stage "Writing the answer" from its
 * start; while the model is still reading its prompt, that is what the person is told.
 */
function currentText(turn: Turn, stageText: (message: string) => string): string {
  const current = turn.stages.at(-1)
  if (!current) return 'Sending your question…'
  if (current.stage === 'generate' && turn.progress?.phase === 'reading') return 'The model is reading the passages…'
  return stageText(current.message)
}

/** Time left from the engine's estimate, counted down since it arrived. */
function timeLeft(p: Progress, at: number, now: number): string {
  // While it writes the engine may not know the length of the answer: then it says nothing.
  if (p.eta_ms == null) return p.phase === 'reading' ? 'estimating the time left…' : ''
  return formatTimeLeft(p.eta_ms - Math.max(0, now - at))
}

export function ModelProgress({ progress: p, at, now }: { progress: Progress; at: number; now: number }) {
  let what: string
  if (p.phase === 'loading') what = 'Loading the chat model into memory (once per session)…'
  else if (p.phase === 'reading')
    what = `Read ${p.read.toLocaleString()} of ${p.total.toLocaleString()} tokens of context (a token is about ¾ of a word)`
  else what = `Writing: ${plural(p.written, 'token')} so far`
  return (
    <div className="model-progress" role="group" aria-label="Model progress" aria-live="off">
      {p.phase === 'reading' && p.total > 0 && <ProgressBar value={p.read} max={p.total} label="Context read by the model" />}
      <div className="model-progress-row small">
        <span>{what}</span>
        {p.phase !== 'loading' && <span className="muted">{timeLeft(p, at, now)}</span>}
      </div>
      <div className="model-progress-hint muted small">
        Your computer's processor does this work, here and offline:{' '}
        {p.phase === 'writing'
          ? 'it writes a few words a second, slower while other programs are busy.'
          : 'a long context takes a while to read.'}
      </div>
    </div>
  )
}
