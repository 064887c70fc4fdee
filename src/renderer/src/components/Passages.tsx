import { Fragment } from 'react'
import type { PassagePreview } from '../lib/ask-types'
import { useViewer } from '../stores/viewer'
import { DocIcon } from './Icons'

/**
 * The passages the model is reading, shown as soon as the engine has chosen them: the sentences
 * that match the question are highlighted, so a person has something true to read while the
 * answer is written (and keeps it when they stop the model). Plain text only: nothing here is
 * parsed as HTML.
 */

/** Above this length a passage shows its matching sentences and their neighbours, not all of it... */
const SHOW_WHOLE_CHARS = 600
/** ...and at most this many sentences: the whole passage is one click away, in the source viewer. */
const MAX_SENTENCES = 6

type Piece = { text: string; match: boolean } | { gap: true }

export function visibleSentences(p: PassagePreview): Piece[] {
  const all = p.sentences
  const chars = all.reduce((n, s) => n + s.text.length, 0)
  if (chars <= SHOW_WHOLE_CHARS) return all
  const keep = new Set<number>()
  all.forEach((s, i) => {
    if (!s.match) return
    for (const j of [i - 1, i, i + 1]) if (j >= 0 && j < all.length) keep.add(j)
  })
  // Nothing matched word for word: the start of the passage says what it is about.
  if (keep.size === 0) for (let i = 0; i < Math.min(3, all.length); i++) keep.add(i)
  const shown = new Set([...keep].sort((a, b) => a - b).slice(0, MAX_SENTENCES))
  const out: Piece[] = []
  all.forEach((s, i) => {
    if (shown.has(i)) out.push(s)
    else if (out.length === 0 || !('gap' in out.at(-1)!)) out.push({ gap: true })
  })
  return out
}

/** Code fences and emphasis marks are Markdown, not words to read here. */
function plain(text: string): string {
  return text.replace(/```\w*/g, ' ').replace(/\*\*|__/g, '')
}

function breadcrumb(heading: string): string {
  return heading.split(' > ').filter(Boolean).join(' › ')
}

export function PassagePreviews({
  passages,
  label,
  title,
  note,
}: {
  passages: PassagePreview[]
  /** The region's accessible name. */
  label: string
  title: string
  note: string
}) {
  const openSource = useViewer((s) => s.openSource)
  return (
    <section className="passage-previews" aria-label={label}>
      <div className="previews-heading">
        <DocIcon size={14} /> {title}
      </div>
      <p className="previews-note muted small">{note}</p>
      <ol className="preview-list">
        {passages.map((p) => (
          <li key={p.chunk_id} className="preview">
            <button
              type="button"
              className="preview-head"
              onClick={() => void openSource(p.chunk_id, `Passage ${p.n}`)}
              aria-label={`Open passage ${p.n}: ${p.path}${p.heading ? `, ${p.heading}` : ''}`}
            >
              <span className="source-n">{p.n}</span>
              <span className="source-main">
                <span className="source-path">{p.path}</span>
                {p.heading && <span className="source-crumb">{breadcrumb(p.heading)}</span>}
              </span>
              <span className="source-tags">
                {p.kind && <span className="chip chip-muted">{p.kind}</span>}
                {p.version && <span className="chip">{p.version}</span>}
                {p.page != null && <span className="chip chip-muted">p. {p.page}</span>}
              </span>
            </button>
            <p className="preview-text">
              {visibleSentences(p).map((s, i) =>
                'gap' in s ? (
                  <span key={i} className="preview-gap" aria-label="text left out">
                    {' … '}
                  </span>
                ) : (
                  <Fragment key={i}>{s.match ? <mark className="preview-match">{plain(s.text)}</mark> : plain(s.text)} </Fragment>
                ),
              )}
            </p>
          </li>
        ))}
      </ol>
    </section>
  )
}
