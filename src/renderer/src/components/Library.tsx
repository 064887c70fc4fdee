import { useEffect } from 'react'
import type { CollectionInfo } from '../../../shared/api'
import { docent } from '../docent'
import { importFolders } from '../importFolders'
import { compareVersionsDesc } from '../../../shared/versions'
import { formatDuration, formatRate, formatRelativeTime, formatTimeLeft, plural } from '../lib/format'
import { estimateImport } from '../lib/import-eta'
import { useNow } from '../lib/useNow'
import { importRate, jobForCollection, useCollections, type FileIssue, type ImportJob } from '../stores/collections'
import { useNav } from '../stores/nav'
import { ProgressBar } from './Common'
import { AlertIcon, CheckIcon, CloseIcon, FolderIcon, PlusIcon, RefreshIcon, TrashIcon } from './Icons'

/** Opens the system folder picker and imports what was chosen. */
export async function pickAndImportFolder(): Promise<void> {
  const folder = await docent().pickFolder()
  if (folder) await importFolders([folder])
}

export function LibrarySection() {
  const collections = useCollections((s) => s.collections)
  const jobs = useCollections((s) => s.jobs)
  const loaded = useCollections((s) => s.loaded)
  const loadError = useCollections((s) => s.loadError)

  const known = new Set(collections.map((c) => c.id))
  // Imports whose collection is not listed yet: still starting, or a new collection being built.
  const newJobs = Object.values(jobs).filter((j) => !j.collection || !known.has(j.collection))
  const newCollections = [...new Set(newJobs.filter((j) => j.collection).map((j) => j.collection!))]
  const starting = newJobs.filter((j) => !j.collection && !j.finished)

  return (
    <section className="sidebar-section" aria-labelledby="library-heading">
      <div className="section-header">
        <h2 id="library-heading">Library</h2>
        <button type="button" className="btn btn-small" onClick={() => void pickAndImportFolder()}>
          <PlusIcon size={14} /> Add folder
        </button>
      </div>
      {loadError && (
        <p className="inline-error" role="alert">
          Couldn't load the library: {loadError}
        </p>
      )}
      {loaded && collections.length === 0 && newJobs.length === 0 && (
        <p className="muted small sidebar-empty">No folders yet. Drop a folder anywhere on the window, or use Add folder.</p>
      )}
      <ul className="collection-list">
        {starting.map((j) => (
          <li key={j.jobId}>
            <div className="collection-card">
              <div className="collection-title">
                <FolderIcon />
                <span className="collection-name" title={j.folder}>
                  {j.folder.split(/[\\/]/).filter(Boolean).at(-1) ?? j.folder}
                </span>
              </div>
              <ImportProgressView job={j} />
            </div>
          </li>
        ))}
        {newCollections.map((id) => (
          <li key={`new-${id}`}>
            <CollectionCard collection={null} id={id} />
          </li>
        ))}
        {collections.map((c) => (
          <li key={c.id}>
            <CollectionCard collection={c} id={c.id} />
          </li>
        ))}
      </ul>
    </section>
  )
}

function CollectionCard({ collection: c, id }: { collection: CollectionInfo | null; id: string }) {
  const job = useCollections((s) => jobForCollection(s.jobs, id))
  const stored = useCollections((s) => s.failures[id])
  const report = useCollections((s) => s.lastReports[id])
  const loadFailures = useCollections((s) => s.loadFailures)
  const running = job && !job.finished

  useEffect(() => {
    if (c && c.failed > 0 && stored === undefined) void loadFailures(id)
  }, [c, id, stored, loadFailures])

  const failed = mergeIssues(stored ?? [], report?.failed ?? [])
  const skipped = report?.skipped_files ?? []

  return (
    <article className="collection-card" aria-label={`Collection ${id}`}>
      <div className="collection-title">
        <FolderIcon />
        <span className="collection-name" title={c?.root ?? id}>
          {id}
        </span>
        {c && <CollectionActions collection={c} id={id} running={!!running} />}
      </div>
      {c && <CollectionDetails collection={c} id={id} running={!!running} />}
      {job && running && <ImportProgressView job={job} />}
      {job && job.finished && <ImportSummary job={job} />}
      {(failed.length > 0 || skipped.length > 0) && <IssueList failed={failed} skipped={skipped} />}
    </article>
  )
}

/** Re-sync and remove (after asking), both held while the collection is being imported. */
function CollectionActions({ collection: c, id, running }: { collection: CollectionInfo; id: string; running: boolean }) {
  const resync = useCollections((s) => s.resync)
  const remove = useCollections((s) => s.remove)

  const onRemove = async () => {
    const ok = await useNav.getState().ask({
      title: `Remove “${id}”?`,
      body: `Docent will forget the ${plural(c.documents, 'document')} it indexed from ${c.root}. The files on disk are not touched.`,
      confirmLabel: 'Remove',
      danger: true,
    })
    if (ok) await remove(id)
  }

  return (
    <span className="card-actions">
      <button
        type="button"
        className="icon-btn"
        aria-label={`Re-sync ${id}`}
        title="Re-sync: pick up added, changed and deleted files"
        disabled={running}
        onClick={() => void resync(id)}
      >
        <RefreshIcon size={15} />
      </button>
      <button
        type="button"
        className="icon-btn"
        aria-label={`Remove ${id}`}
        title="Remove from library"
        disabled={running}
        onClick={() => void onRemove()}
      >
        <TrashIcon size={15} />
      </button>
    </span>
  )
}

/** Counts, versions, last sync, text recognition and its switch. */
function CollectionDetails({ collection: c, id, running }: { collection: CollectionInfo; id: string; running: boolean }) {
  const setOcr = useCollections((s) => s.setOcr)
  return (
    <>
      <div className="collection-meta">
        <span>{plural(c.documents, 'document')}</span>
        <span aria-hidden="true">·</span>
        <span>{c.versions.length ? plural(c.versions.length, 'version') : 'unversioned'}</span>
      </div>
      {c.versions.length > 0 && (
        <div className="version-chips" aria-label="Versions found">
          {c.versions
            .slice()
            .sort(compareVersionsDesc)
            .slice(0, 4)
            .map((v) => (
              <span key={v} className="chip">
                {v}
              </span>
            ))}
          {c.versions.length > 4 && <span className="chip chip-muted">+{c.versions.length - 4}</span>}
        </div>
      )}
      <div className="collection-meta muted" title={c.last_sync_at ?? undefined}>
        Synced {formatRelativeTime(c.last_sync_at)}
      </div>
      {c.ocr_pages > 0 && (
        <div className="collection-meta muted">
          {plural(c.ocr_pages, 'page')} read by text recognition
          {c.low_confidence_pages > 0 && (
            <span
              className="ocr-low"
              title="Tesseract was unsure of much of the text on these pages: check them against the page"
            >
              {' '}
              · {plural(c.low_confidence_pages, 'page')} to check ({plural(c.low_confidence_documents, 'document')})
            </span>
          )}
        </div>
      )}
      <label className="collection-meta small">
        <input type="checkbox" checked={c.ocr} disabled={running} onChange={(e) => void setOcr(id, e.target.checked)} /> Read
        scanned pages and images (text recognition; re-sync to apply)
      </label>
    </>
  )
}

function mergeIssues(a: FileIssue[], b: FileIssue[]): FileIssue[] {
  const seen = new Map<string, FileIssue>()
  for (const i of [...a, ...b]) if (!seen.has(i.path)) seen.set(i.path, i)
  return [...seen.values()]
}

const PHASE: Record<string, string> = {
  scanning: 'Scanning the folder…',
  importing: 'Importing',
  embedding: 'Embedding passages',
  pruning: 'Removing deleted files',
  done: 'Finishing',
  cancelled: 'Cancelled',
}

export function ImportProgressView({ job }: { job: ImportJob }) {
  const cancel = useCollections((s) => s.cancel)
  const p = job.progress
  const now = useNow(!job.finished && !!p)
  const estimate = p ? estimateImport(job.eta, p, p.elapsedMs + Math.max(0, now - (job.progressAt ?? now))) : null
  const fileRate = importRate(p)
  const label = `Import progress for ${job.collection ?? job.folder}`
  return (
    <div className="import-progress" role="group" aria-label={label}>
      <div className="import-row">
        <span className="import-phase">{job.cancelling ? 'Cancelling…' : p ? PHASE[p.phase] : 'Starting…'}</span>
        {p && p.filesTotal > 0 && (
          <span className="import-count">
            {p.filesDone.toLocaleString()} / {p.filesTotal.toLocaleString()} files
          </span>
        )}
      </div>
      <ProgressBar value={p?.filesDone ?? 0} max={p?.filesTotal ?? 0} label={label} indeterminate={!p || p.filesTotal === 0} />
      {p && (
        <div className="import-row muted small">
          <span>
            {estimate?.textsPerSecond != null
              ? `${formatRate(estimate.textsPerSecond, 'passages')} embedded`
              : formatRate(fileRate, 'files')}
          </span>
          <span>
            {p.phase === 'pruning' || p.phase === 'done'
              ? ''
              : estimate?.etaMs != null
                ? formatTimeLeft(estimate.etaMs)
                : 'estimating…'}
          </span>
        </div>
      )}
      {p?.currentFile && (
        <div className="import-file small muted" title={p.currentFile}>
          {p.currentFile}
          {p.fileProgress?.stage === 'pages' && (
            <span className="import-pages">
              {' '}
              (page {p.fileProgress.done.toLocaleString()} of {p.fileProgress.total.toLocaleString()})
            </span>
          )}
          {p.fileProgress?.stage === 'ocr' && (
            <span className="import-pages">
              {' '}
              (recognising text, page {Math.min(p.fileProgress.done + 1, p.fileProgress.total).toLocaleString()} of{' '}
              {p.fileProgress.total.toLocaleString()})
            </span>
          )}
        </div>
      )}
      <button type="button" className="btn btn-small btn-quiet" disabled={job.cancelling} onClick={() => void cancel(job.jobId)}>
        Cancel import
      </button>
    </div>
  )
}

function ImportSummary({ job }: { job: ImportJob }) {
  const dismiss = useCollections((s) => s.dismissJob)
  const r = job.report
  let text: string
  let ok = true
  if (job.heldBack) {
    // The engine removed nothing; the confirm dialog (stores/collections.ts) asks whether to go on.
    text = 'Nothing was removed: the folder is empty or not there (a drive not connected, or the folder moved?).'
    ok = false
  } else if (job.error) {
    text = `Import failed: ${job.error}`
    ok = false
  } else if (!r) text = 'Import finished.'
  else if (r.cancelled) {
    text = `Import cancelled after ${plural(r.imported, 'file')}. Re-sync to finish it.`
    ok = false
  } else {
    const parts = [`${plural(r.imported, 'file')} imported`]
    if (r.unchanged) parts.push(`${r.unchanged.toLocaleString()} unchanged`)
    if (r.failed.length) parts.push(`${r.failed.length.toLocaleString()} failed`)
    if (r.skipped) parts.push(`${r.skipped.toLocaleString()} skipped`)
    text = `${parts.join(', ')} in ${formatDuration(r.ms)}.`
  }
  return (
    <div className={`import-summary ${ok ? 'ok' : 'warn'}`} role="status">
      {ok ? <CheckIcon size={14} /> : <AlertIcon size={14} />}
      <span>{text}</span>
      {r?.notices.map((n) => (
        <span key={n} className="small muted">
          {n}
        </span>
      ))}
      <button type="button" className="icon-btn" aria-label="Dismiss import summary" onClick={() => dismiss(job.jobId)}>
        <CloseIcon size={12} />
      </button>
    </div>
  )
}

function IssueList({ failed, skipped }: { failed: FileIssue[]; skipped: FileIssue[] }) {
  return (
    <details className="issues">
      <summary>
        <AlertIcon size={13} />
        {failed.length > 0 && <span>{plural(failed.length, 'file')} failed</span>}
        {failed.length > 0 && skipped.length > 0 && <span aria-hidden="true">·</span>}
        {skipped.length > 0 && <span>{skipped.length.toLocaleString()} skipped</span>}
      </summary>
      <ul className="issue-list" aria-label="Files that were not imported">
        {failed.map((f) => (
          <li key={`f-${f.path}`}>
            <span className="issue-path">{f.path}</span>
            <span className="issue-reason">{f.reason}</span>
          </li>
        ))}
        {skipped.map((f) => (
          <li key={`s-${f.path}`} className="skipped">
            <span className="issue-path">{f.path}</span>
            <span className="issue-reason">Skipped: {f.reason}</span>
          </li>
        ))}
      </ul>
    </details>
  )
}
