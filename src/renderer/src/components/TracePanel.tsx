import { useMemo, type ReactNode } from 'react'
import type { PassageRef } from '../../../shared/passage'
import type { HitScores } from '../../../shared/search'
import type { ClaimTrace, ScopeTrace, StoredTrace } from '../../../shared/trace'
import { formatMs, formatScore } from '../lib/format'
import { useViewer } from '../stores/viewer'
import { AlertIcon, Spinner } from './Icons'

/**
 * The trace of one answer, for people who want to see why: question, rewrite, scope,
 * per-retriever ranks, RRF and reranker scores, the gate, verification, timings, and the rest raw.
 */

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

type Place = Pick<PassageRef, 'path' | 'heading' | 'version'>

/** A candidate passage with every score it got; its place is null where neither the result nor the trace's places name it. */
export type TraceRow = Pick<PassageRef, 'chunk_id'> & { [K in keyof Place]: Place[K] | null } & HitScores & { given: boolean }

/** One row per candidate passage, with every score it got, best first. */
export function traceRows(trace: StoredTrace): TraceRow[] {
  const data = trace.data
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
  const retrieval = data.retrieval
  for (const f of retrieval?.fused ?? []) {
    const r = row(f.chunk_id)
    r.rrf = f.rrf
    r.keyword_rank ??= f.ranks.keyword ?? null
    r.vector_rank ??= f.ranks.vector ?? null
  }
  for (const k of retrieval?.keyword ?? []) {
    const r = row(k.chunk_id)
    r.keyword_rank = k.rank
    r.bm25 = k.bm25
  }
  for (const v of retrieval?.vector ?? []) {
    const r = row(v.chunk_id)
    r.vector_rank = v.rank
    r.cosine = v.cosine
  }
  for (const x of retrieval?.reranked ?? []) row(x.chunk_id).reranker = x.reranker
  // Paths and headings come from the hits the result names (closest sections, citations).
  for (const h of [...data.result.closest, ...data.result.citations]) {
    const r = rows.get(h.chunk_id)
    if (!r) continue
    r.path ??= h.path
    r.heading ??= h.heading
    r.version ??= h.version
  }
  for (const { chunk_id, scores: s } of data.result.closest) {
    const r = rows.get(chunk_id)
    if (!r) continue
    r.keyword_rank ??= s.keyword_rank
    r.vector_rank ??= s.vector_rank
    r.bm25 ??= s.bm25
    r.cosine ??= s.cosine
    r.rrf ??= s.rrf
    r.reranker ??= s.reranker
  }
  // Every other passage's place, as looked up when the trace was read.
  for (const p of trace.places ?? []) {
    const r = rows.get(p.chunk_id)
    if (!r) continue
    r.path ??= p.path
    r.heading ??= p.heading
    r.version ??= p.version
  }
  for (const id of data.passages ?? data.result.passages) row(id).given = true
  const all = [...rows.values()]
  const anyRerank = all.some((r) => r.reranker != null)
  return all.sort((a, b) =>
    anyRerank
      ? (b.reranker ?? -Infinity) - (a.reranker ?? -Infinity) || (b.rrf ?? 0) - (a.rrf ?? 0)
      : (b.rrf ?? 0) - (a.rrf ?? 0),
  )
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

function ScopeText({ scope }: { scope: ScopeTrace }) {
  const versions = Object.entries(scope.versions)
  return (
    <>
      {scope.label}
      {versions.length > 0 && <div className="muted small">{versions.map(([c, v]) => `${c}: ${text(v)}`).join(' · ')}</div>}
    </>
  )
}

/** The support check of every sentence of the reply: what each cites, whether it held, and why not. */
function SupportCheck({ claims }: { claims: ClaimTrace[] }) {
  return (
    <div className="table-wrap">
      <table className="trace-table claims-table" aria-label="Support check of every sentence">
        <thead>
          <tr>
            <th scope="col">Sentence</th>
            <th scope="col" className="num" title="Passage numbers it cites, as given to the model">
              Cites
            </th>
            <th scope="col" className="num" title="Share of its content words found in the cited passages">
              Words
            </th>
            <th scope="col" className="num" title="Best cosine similarity to a sentence of a cited passage">
              Cos
            </th>
          </tr>
        </thead>
        <tbody>
          {claims.map((c, i) => (
            <tr key={i} className={c.ok ? 'claim-ok' : 'claim-failed'}>
              <td>
                {c.ok ? c.text : <del>{c.text}</del>}
                <div className={c.ok ? 'muted small' : 'claim-reason small'}>
                  {c.ok ? 'supported' : `removed: ${c.reason ?? c.failure ?? 'not supported'}`}
                  {c.repaired ? ` · ${c.repaired}` : ''}
                </div>
              </td>
              <td className="num">{c.cited.join(', ') || '—'}</td>
              <td className="num">{formatScore(c.coverage, 2)}</td>
              <td className="num">{formatScore(c.best_cosine, 2)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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

/** Every candidate passage with its score in each retriever, best first; the ones the model read marked. */
function PassagesTable({ rows }: { rows: TraceRow[] }) {
  const openSource = useViewer((s) => s.openSource)
  const shown = rows.slice(0, 30)
  return (
    <>
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
                    {r.heading && <div className="source-crumb">{r.heading.split(' > ').slice(1).join(' › ') || r.heading}</div>}
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
            similarity. <b>RRF</b>: the fused score that orders candidates after keyword's first. <b>Rerank</b>: cross-encoder
            score used by the relevance gate. <b>Used</b>: given to the answering model.
          </p>
        </div>
      )}
    </>
  )
}

export function TracePanel() {
  const trace = useViewer((s) => s.trace)
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

  const gate = data?.data.gate
  const verification = data?.data.verification
  const stages = data?.data.stages_ms
  const retrievalTimings = data?.data.retrieval?.timings_ms
  const total = data?.ms ?? null

  return (
    <div className="trace">
      <QuerySection data={data ?? null} asked={trace.question} />

      <Section title={`Passages (${rows.length})`}>
        <PassagesTable rows={rows} />
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
      {data?.data.claims && data.data.claims.length > 0 && (
        <Section title="Support check, sentence by sentence">
          <SupportCheck claims={data.data.claims} />
        </Section>
      )}
      {data?.data.release !== undefined && (
        <Section title="Release rules">
          <KeyValues value={data.data.release} />
        </Section>
      )}
      {(stages || retrievalTimings) && (
        <Section title={`Timings${total != null ? ` (${formatMs(total)} in all)` : ''}`}>
          <TimingsTable stages={stages} retrieval={retrievalTimings} />
        </Section>
      )}
      <details className="raw-trace">
        <summary>Raw trace (JSON)</summary>
        <pre>{JSON.stringify(data, null, 2)}</pre>
      </details>
    </div>
  )
}

function QuerySection({ data, asked }: { data: StoredTrace | null; asked: string | null }) {
  const question = data?.question ?? asked
  const standalone = data?.data.standalone_question ?? data?.data.result.rewritten_question
  const rewritten = standalone && standalone !== question ? standalone : null
  const scope = data?.data.scope ?? data?.data.result.scope_label
  const outcome = data?.outcome
  return (
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
          <dd>{typeof scope === 'object' ? <ScopeText scope={scope} /> : text(scope)}</dd>
        </div>
        {outcome !== undefined && (
          <div className="kv-row">
            <dt>Outcome</dt>
            <dd>{text(outcome)}</dd>
          </div>
        )}
      </dl>
    </Section>
  )
}

/** The answer's stages, then the search's own steps, each without its `_ms`. */
function TimingsTable({
  stages,
  retrieval,
}: {
  stages: StoredTrace['data']['stages_ms'] | undefined
  retrieval: NonNullable<StoredTrace['data']['retrieval']>['timings_ms'] | undefined
}) {
  return (
    <table className="timings">
      <tbody>
        {Object.entries(stages ?? {}).map(([k, v]) => (
          <tr key={`s-${k}`}>
            <th scope="row">{k.replace(/_ms$/, '').replace(/_/g, ' ')}</th>
            <td className="num">{formatMs(v)}</td>
          </tr>
        ))}
        {Object.entries(retrieval ?? {}).map(([k, v]) => (
          <tr key={`r-${k}`} className="sub">
            <th scope="row">search: {k.replace(/_ms$/, '').replace(/_/g, ' ')}</th>
            <td className="num">{formatMs(v)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
