import type { RemovedSentence } from '../lib/ask-types'
import { AlertIcon, InfoIcon } from './Icons'

/**
 * What the support check took out of an answer, and what the documents did not answer. Removed
 * sentences are struck through, with the reason in plain words, and never styled as verified.
 */

export function removedSummary(n: number): string {
  return n === 1
    ? '1 sentence was removed: the cited passages do not say it'
    : `${n.toLocaleString()} sentences were removed: the cited passages do not say them`
}

export function RemovedSentences({ removed }: { removed: RemovedSentence[] }) {
  if (removed.length === 0) return null
  return (
    <details className="removed-claims" role="note" aria-label="Removed sentences">
      <summary>
        <AlertIcon size={14} /> <span>{removedSummary(removed.length)}</span>
      </summary>
      <ul className="removed-list">
        {removed.map((r, i) => (
          <li key={i}>
            <del className="removed-text">{r.text}</del>
            <span className="visually-hidden"> (removed, not verified)</span>
            <span className="removed-reason">{r.reason}</span>
          </li>
        ))}
      </ul>
    </details>
  )
}

export function UnansweredParts({ parts }: { parts: string[] }) {
  if (parts.length === 0) return null
  return (
    <div className="notice notice-muted unanswered" role="note" aria-label="Not answered">
      <InfoIcon size={15} />
      <div>
        <strong>Not answered by the documents:</strong>
        <ul>
          {parts.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      </div>
    </div>
  )
}
