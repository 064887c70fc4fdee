import { useMemo } from 'react'
import { describeAbstention, type AskResult, type Citation } from '../lib/ask-types'
import { markTerms, queryTerms } from '../../../shared/excerpt'
import { sameTextLabel, type PassageRef, type SamePlace } from '../../../shared/passage'
import { RemovedSentences } from './ClaimNotes'
import { DocIcon, InfoIcon } from './Icons'

/** The lists under an answer: its sources, the passages of a search-only reply, and an abstention's closest sections. */

function breadcrumb(heading: string): string {
  return heading.split(' > ').filter(Boolean).join(' › ')
}

/** Where a source stands word for word too ("also word for word in 2024-11-05 and 2025-03-26"); nothing when nowhere. */
function SameText({ same }: { same?: SamePlace[] }) {
  const label = sameTextLabel(same)
  return label ? <span className="source-same">{label}</span> : null
}

export function SourcesList({ citations, onOpen }: { citations: Citation[]; onOpen: (n: number) => void }) {
  if (citations.length === 0) return null
  return (
    <section className="sources" aria-label="Sources">
      <h3 className="sources-heading">Sources</h3>
      <ol className="source-list">
        {citations.map((c) => (
          <li key={c.n}>
            <button
              type="button"
              className="source-item"
              onClick={() => onOpen(c.n)}
              aria-label={`Open source ${c.n}: ${c.path}`}
            >
              <span className="source-n">{c.n}</span>
              <span className="source-main">
                <span className="source-path">{c.path}</span>
                {c.heading && <span className="source-crumb">{breadcrumb(c.heading)}</span>}
                <SameText same={c.same_in} />
              </span>
              <span className="source-tags">
                {c.version && <span className="chip">{c.version}</span>}
                {c.page != null && <span className="chip chip-muted">p. {c.page}</span>}
              </span>
            </button>
          </li>
        ))}
      </ol>
    </section>
  )
}

/** A section to list and open: a closest section, or a search-only passage. */
export type SectionRef = PassageRef & { snippet?: string; same_in?: SamePlace[] }

export function Abstention({
  result,
  query,
  scopeLabel = result.scope_label,
  onOpen,
}: {
  result: AskResult
  query: string
  /** What was searched, in the words to show (lib/scope-words.ts); the result's own label by default. */
  scopeLabel?: string
  onOpen: (h: SectionRef, i: number) => void
}) {
  return (
    <div className="abstention" role="note" aria-label="No answer">
      <div className="abstention-title">
        <InfoIcon size={16} /> The documents don't say
      </div>
      {result.explanation ? (
        <p className="abstention-explanation">{result.explanation}</p>
      ) : (
        <p className="abstention-reason">{describeAbstention(result.reason)}</p>
      )}
      <RemovedSentences removed={result.removed ?? []} />
      {result.unanswered_parts.length > 0 && (
        <ul className="abstention-parts">
          {result.unanswered_parts.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {result.closest.length > 0 ? (
        <>
          <div className="abstention-sub">The closest sections{scopeLabel ? ` in ${scopeLabel}` : ''}, in case they help:</div>
          <HitList hits={result.closest} query={query} onOpen={onOpen} />
        </>
      ) : (
        <div className="abstention-sub muted">
          Nothing in {scopeLabel || 'the selected scope'} came close. Try another version or collection.
        </div>
      )}
    </div>
  )
}

export function HitList({
  hits,
  query = '',
  onOpen,
}: {
  hits: SectionRef[]
  query?: string
  onOpen: (h: SectionRef, i: number) => void
}) {
  const terms = useMemo(() => queryTerms(query), [query])
  return (
    <ol className="hit-list">
      {hits.map((h, i) => (
        <li key={h.chunk_id}>
          <button
            type="button"
            className="hit-item"
            onClick={() => onOpen(h, i)}
            aria-label={`Open ${h.path}${h.heading ? `, ${h.heading}` : ''}`}
          >
            <DocIcon size={15} />
            <span className="hit-main">
              <span className="hit-path">{h.path}</span>
              {h.heading && <span className="source-crumb">{breadcrumb(h.heading)}</span>}
              <SameText same={h.same_in} />
              {h.snippet && (
                <span className="hit-text">
                  {markTerms(
                    h.snippet
                      .replace(/```\w*/g, ' ')
                      .replace(/\s+/g, ' ')
                      .trim(),
                    terms,
                  ).map((s, j) => (s.hit ? <mark key={j}>{s.text}</mark> : s.text))}
                </span>
              )}
            </span>
            <span className="source-tags">
              {h.kind && <span className="chip chip-muted">{h.kind}</span>}
              {h.version && <span className="chip">{h.version}</span>}
              {h.page != null && <span className="chip chip-muted">p. {h.page}</span>}
            </span>
          </button>
        </li>
      ))}
    </ol>
  )
}
