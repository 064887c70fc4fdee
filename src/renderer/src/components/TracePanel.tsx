import { useMemo, type ReactNode } from 'react'
import { formatMs, formatScore } from '../lib/format'
import { useViewer } from '../stores/viewer'
import { AlertIcon, Spinner } from './Icons'

/**
 * The trace of one answer, for people who want to see why. `trace.get` is typed `unknown` at the
 * boundary, so this reads what it recognises (question, rewrite, scope, per-retriever ranks, RRF
 * and reranker scores, the gate, verification, timings) wherever it sits, and shows the rest raw.
 */

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/** Breadth-first search for the first value under any of `keys`, a few levels deep. */
export function findKey(root: unknown, keys: string[], depth = 4): unknown {
  let level: unknown[] = [root]
  for (let d = 0; d <= depth && level.length; d++) {
    const next: unknown[] = []
    for (const node of level) {
      if (!isObj(node)) continue
      for (const k of keys) if (node[k] !== undefined && node[k] !== null) return node[k]
      for (const v of Object.values(node)) if (isObj(v)) next.push(v)
    }
    level = next
  }
  return undefined
}

export interface TraceRow {
  chunk_id: string
  path: string | null
  heading: string | null
  version: string | null
  keyword_rank: number | null
  bm25: number | null
  vector_rank: number | null
  cosine: number | null
  rrf: number | null
  reranker: number | null
  given: boolean
}

export function traceRows(trace: unknown): TraceRow[] {
  const rows = new Map<string, TraceRow>()
  const row = (id: string): TraceRow => {
    let r = rows.get(id)
    if (!r) {
      r = {
        chunk_id: id,
        path: null,
        heading: null,
        version: null,
        keyword_rank: null,
        bm25: null,
        vector_rank: null,
        cosine: null,
        rrf: null,
        reranker: null,
        given: false,
      }
      rows.set(id, r)
    }
    return r
  }
  // Retrieval lists live under `retrieval` in the engine's trace; other keys of the same name (the
  // gate's evidence, say) must not shadow them, and stored JSON does not keep key order.
  const retrieval = findKey(trace, ['retrieval'])
  const list = (keys: string[]): Obj[] => {
    const v = (isObj(retrieval) ? findKey(retrieval, keys, 0) : undefined) ?? findKey(trace, keys)
    return Array.isArray(v) ? v.filter(isObj).filter((x) => typeof x.chunk_id === 'string') : []
  }
  for (const f of list(['fused'])) {
    const r = row(f.chunk_id as string)
    r.rrf = num(f.rrf)
    const ranks = isObj(f.ranks) ? f.ranks : {}
    r.keyword_rank ??= num(ranks.keyword)
    r.vector_rank ??= num(ranks.vector)
  }
  for (const k of list(['keyword'])) {
    const r = row(k.chunk_id as string)
    r.keyword_rank = num(k.rank) ?? r.keyword_rank
    r.bm25 = num(k.bm25)
  }
  for (const v of list(['vector'])) {
    const r = row(v.chunk_id as string)
    r.vector_rank = num(v.rank) ?? r.vector_rank
    r.cosine = num(v.cosine)
  }
  for (const x of list(['reranked'])) row(x.chunk_id as string).reranker = num(x.reranker)
  // Paths and headings live wherever the trace keeps hits (citations, closest sections, results).
  for (const h of objectsWithChunkIds(trace)) {
    const r = rows.get(h.chunk_id as string)
    if (!r) continue
    if (typeof h.path === 'string') r.path ??= h.path
    if (typeof h.heading === 'string') r.heading ??= h.heading
    if (typeof h.version === 'string') r.version ??= h.version
    const s = isObj(h.scores) ? h.scores : {}
    r.keyword_rank ??= num(s.keyword_rank)
    r.vector_rank ??= num(s.vector_rank)
    r.bm25 ??= num(s.bm25)
    r.cosine ??= num(s.cosine)
    r.rrf ??= num(s.rrf)
    r.reranker ??= num(s.reranker)
  }
  const passages = findKey(trace, ['passages', 'given', 'context_ids'])
  if (Array.isArray(passages)) {
    for (const p of passages) {
      const id = typeof p === 'string' ? p : isObj(p) && typeof p.chunk_id === 'string' ? p.chunk_id : null
      if (!id) continue
      const r = row(id)
      r.given = true
      if (isObj(p)) {
        r.path ??= typeof p.path === 'string' ? p.path : null
        r.heading ??= typeof p.heading === 'string' ? p.heading : null
        r.version ??= typeof p.version === 'string' ? p.version : null
      }
    }
  }
  const all = [...rows.values()]
  const anyRerank = all.some((r) => r.reranker != null)
  return all.sort((a, b) =>
    anyRerank
      ? (b.reranker ?? -Infinity) - (a.reranker ?? -Infinity) || (b.rrf ?? 0) - (a.rrf ?? 0)
      : (b.rrf ?? 0) - (a.rrf ?? 0),
  )
}

function objectsWithChunkIds(root: unknown, depth = 6): Obj[] {
  const out: Obj[] = []
  const walk = (v: unknown, d: number) => {
    if (d > depth) return
    if (Array.isArray(v)) for (const x of v) walk(x, d + 1)
    else if (isObj(v)) {
      if (typeof v.chunk_id === 'string' && typeof v.path === 'string') out.push(v)
      for (const x of Object.values(v)) walk(x, d + 1)
    }
  }
  walk(root, 0)
  return out
}

function text(v: unknown): string {
  if (v == null) return '—'
  if (typeof v === 'string') return v
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : formatScore(v)
  if (typeof v === 'boolean') return v ? 'yes' : 'no'
  if (Array.isArray(v)) return v.map(text).join(', ')
  return JSON.stringify(v)
}

function KeyValues({ value }: { value: unknown }) {
  if (!isObj(value)) return <span>{text(value)}</span>
  return (
    <dl className="kv">
      {Object.entries(value).map(([k, v]) => (
        <div key={k} className="kv-row">
          <dt>{k.replace(/_/g, ' ')}</dt>
          <dd>{isObj(v) ? <KeyValues value={v} /> : text(v)}</dd>
        </div>
      ))}
    </dl>
  )
}

function ScopeText({ scope }: { scope: Obj }) {
  const label = typeof scope.label === 'string' ? scope.label : null
  const versions = isObj(scope.versions) ? Object.entries(scope.versions) : []
  return (
    <>
      {label ?? text(scope.collections)}
      {versions.length > 0 && (
        <div className="muted small">{versions.map(([c, v]) => `${c}: ${v == null ? 'all versions' : text(v)}`).join(' · ')}</div>
      )}
    </>
  )
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="trace-section">
      <h3>{title}</h3>
      {children}
    </section>
  )
}

export function TracePanel() {
  const trace = useViewer((s) => s.trace)
  const openSource = useViewer((s) => s.openSource)
  const data = trace?.data
  const rows = useMemo(() => (data ? traceRows(data) : []), [data])

  if (!trace) return <p className="panel-empty muted">Choose “Why this answer?” under an answer to see how it was found.</p>
  if (trace.status === 'loading')
    return (
      <div className="panel-empty">
        <Spinner label="Loading trace" /> <span className="muted">Loading the trace…</span>
      </div>
    )
  if (trace.status === 'error')
    return (
      <div className="notice notice-error panel-notice" role="alert">
        <AlertIcon size={15} /> <span>Couldn't load the trace: {trace.error}</span>
      </div>
    )

  const question = findKey(data, ['question', 'original_question', 'query']) ?? trace.question
  const standalone = findKey(data, ['standalone_question', 'rewritten_question'])
  const rewritten = typeof standalone === 'string' && standalone !== question ? standalone : null
  const scope = findKey(data, ['scope_label', 'scope'])
  const gate = findKey(data, ['gate'])
  const verification = findKey(data, ['verification', 'verify', 'citations_check'])
  const outcome = findKey(data, ['outcome', 'reason', 'decision'])
  const stages = findKey(data, ['stages_ms'])
  const retrievalTimings = findKey(data, ['timings_ms', 'timings'])
  const total = isObj(data) ? num(data.ms) : null
  const shown = rows.slice(0, 30)

  return (
    <div className="trace">
      <Section title="Query">
        <dl className="kv">
          <div className="kv-row">
            <dt>Asked</dt>
            <dd>{text(question)}</dd>
          </div>
          <div className="kv-row">
            <dt>Searched for</dt>
            <dd>{rewritten ? text(rewritten) : <span className="muted">the question as asked</span>}</dd>
          </div>
          <div className="kv-row">
            <dt>Scope</dt>
            <dd>{isObj(scope) ? <ScopeText scope={scope} /> : text(scope)}</dd>
          </div>
          {outcome !== undefined && (
            <div className="kv-row">
              <dt>Outcome</dt>
              <dd>{text(outcome)}</dd>
            </div>
          )}
        </dl>
      </Section>

      <Section title={`Passages (${rows.length})`}>
        {rows.length === 0 ? (
          <p className="muted small">This trace has no retrieval details.</p>
        ) : (
          <div className="table-wrap">
            <table className="trace-table">
              <thead>
                <tr>
                  <th scope="col">Passage</th>
                  <th scope="col" className="num" title="Rank in keyword (BM25) search">
                    KW #
                  </th>
                  <th scope="col" className="num" title="BM25 score of the keyword search, not normalised">
                    BM25
                  </th>
                  <th scope="col" className="num" title="Rank in vector search">
                    Vec #
                  </th>
                  <th scope="col" className="num" title="Cosine similarity of question and passage embeddings, -1 to 1">
                    Cos
                  </th>
                  <th scope="col" className="num" title="Reciprocal rank fusion: sum of 1/(60 + rank)">
                    RRF
                  </th>
                  <th scope="col" className="num" title="Cross-encoder score (a logit, not a probability)">
                    Rerank
                  </th>
                  <th scope="col" className="num" title="Given to the answering model">
                    Used
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((r) => (
                  <tr key={r.chunk_id} className={r.given ? 'given' : undefined}>
                    <td>
                      <button
                        type="button"
                        className="link-btn trace-passage"
                        onClick={() => void openSource(r.chunk_id, 'Passage from the trace')}
                        title={`${r.path ?? ''}\n${r.chunk_id}`}
                      >
                        {r.path ? (r.path.split('/').at(-1) ?? r.path) : `passage ${r.chunk_id.slice(0, 10)}…`}
                      </button>
                      {r.heading && (
                        <div className="source-crumb">{r.heading.split(' > ').slice(1).join(' › ') || r.heading}</div>
                      )}
                    </td>
                    <td className="num">{r.keyword_rank ?? '—'}</td>
                    <td className="num">{formatScore(r.bm25, 2)}</td>
                    <td className="num">{r.vector_rank ?? '—'}</td>
                    <td className="num">{formatScore(r.cosine)}</td>
                    <td className="num">{formatScore(r.rrf, 4)}</td>
                    <td className="num">{formatScore(r.reranker, 2)}</td>
                    <td className="num">{r.given ? '✓' : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {rows.length > shown.length && (
              <p className="muted small">{rows.length - shown.length} more candidates not shown (see the raw trace).</p>
            )}
            <p className="trace-legend">
              <b>KW #</b> and <b>Vec #</b>: rank in keyword and vector search. <b>BM25</b>: keyword score. <b>Cos</b>: cosine
              similarity. <b>RRF</b>: the fused score that orders candidates. <b>Rerank</b>: cross-encoder score used by the
              relevance gate. <b>Used</b>: given to the answering model.
            </p>
          </div>
        )}
      </Section>

      {gate !== undefined && (
        <Section title="Relevance gate">
          <KeyValues value={gate} />
        </Section>
      )}
      {verification !== undefined && (
        <Section title="Citation check">
          <KeyValues value={verification} />
        </Section>
      )}
      {(isObj(stages) || isObj(retrievalTimings)) && (
        <Section title={`Timings${total != null ? ` (${formatMs(total)} in all)` : ''}`}>
          <table className="timings">
            <tbody>
              {Object.entries(isObj(stages) ? stages : {}).map(([k, v]) => (
                <tr key={`s-${k}`}>
                  <th scope="row">{k.replace(/_ms$/, '').replace(/_/g, ' ')}</th>
                  <td className="num">{formatMs(num(v))}</td>
                </tr>
              ))}
              {Object.entries(isObj(retrievalTimings) ? retrievalTimings : {}).map(([k, v]) => (
                <tr key={`r-${k}`} className="sub">
                  <th scope="row">search: {k.replace(/_ms$/, '').replace(/_/g, ' ')}</th>
                  <td className="num">{formatMs(num(v))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
      <details className="raw-trace">
        <summary>Raw trace (JSON)</summary>
        <pre>{JSON.stringify(data, null, 2)}</pre>
      </details>
    </div>
  )
}
