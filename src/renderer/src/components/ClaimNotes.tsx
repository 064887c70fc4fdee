import type { RemovedSentence } from '../lib/ask-types'
import { AlertIcon, InfoIcon } from './Icons'

/**
 * What the support check took out of an answer, and what the documents did not answer. Removed
 * sentences are struck through, with the reason in plain words, and never styled as verified.
 */

export function removedSummary(removed: RemovedSentence[]): string {
  const n = removed.length
  const head = n === 1 ? '1 sentence was removed' : `${n.toLocaleString()} sentences were removed`
  const release = removed.filter((r) => r.code === 'not_in_release').length
  const offTarget = removed.filter((r) => r.code === 'off_target').length
  // Each line gives its own reason; the summary names the kind when all are of one.
  if (offTarget === n) return `${head}: ${n === 1 ? 'it answers' : 'they answer'} something other than what was asked`
  if (removed.every((r) => r.code === 'opposite')) return `${head}: the cited passages say the opposite`
  if (release === 0 && offTarget === 0) return `${head}: the cited passages do not say ${n === 1 ? 'it' : 'them'}`
  // The release rules removed it (engine answer/release-after.ts): each line gives the release's own reason.
  if (release === n) return `${head}: ${n === 1 ? 'it is' : 'they are'} about something this release does not have`
  return head
}

export function RemovedSentences({ removed }: { removed: RemovedSentence[] }) {
  if (removed.length === 0) return null
  return (
    <details className="removed-claims" role="note" aria-label="Removed sentences">
      <summary>
        <AlertIcon size={14} /> <span>{removedSummary(removed)}</span>
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
