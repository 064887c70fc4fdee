import { useId, useState } from 'react'
import { docent } from '../docent'
import { formatBytes, formatDuration, formatRate } from '../lib/format'
import { roleLabel, rolePurpose, statusFor, useModels, type ModelProgress, type ModelRole } from '../stores/models'
import { ProgressBar } from './Common'
import { AlertIcon, CheckIcon, DownloadIcon, FolderIcon } from './Icons'
import { LibraryLocation } from './LibraryLocation'

const ROLES: ModelRole[] = ['llm', 'embedding', 'reranker']

/** Where an installed model came from, in words (ModelSource in the engine's installer). */
const SOURCE_LABEL: Record<'download' | 'import' | 'models-dev' | 'folder', string> = {
  download: 'downloaded',
  import: 'imported from disk',
  'models-dev': 'installed by npm run models:dev (from PyPI packages)',
  folder: 'found in the models folder',
}

/** What a person can do after a failed download: the error alone ("fetch failed") says nothing. */
export function downloadAdvice(error: string): string {
  if (/cancel/i.test(error)) return 'Start it again when you are ready; what was downloaded is kept.'
  if (/space|ENOSPC/i.test(error)) return 'Free some disk space, or choose a library location on another disk, then try again.'
  if (/checksum|sha|hash|integrity/i.test(error))
    return 'A file arrived damaged. Try again; if it keeps failing, download the files elsewhere and import them from disk below.'
  return (
    'Docent could not reach the model host. If this computer is offline, copy the model over and use ' +
    '"Import a model from disk" below. If it reaches the internet through a proxy, check the proxy ' +
    'settings of the system (or HTTPS_PROXY), then try again.'
  )
}

export function ModelsSettings() {
  return (
    <section className="settings" aria-labelledby="settings-title">
      <header className="pane-header">
        <h1 className="pane-title" id="settings-title">
          Models &amp; Settings
        </h1>
      </header>
      <div className="settings-scroll">
        <div className="settings-inner">
          <section className="settings-group" aria-labelledby="models-title">
            <h2 id="models-title">Models</h2>
            <p className="muted">
              Everything runs on this computer. Search works without any model; the embedding model adds search by meaning, the
              reranker sharpens relevance, and the chat model writes answers.
            </p>
            <div className="model-cards">
              {ROLES.map((r) => (
                <ModelCard key={r} role={r} />
              ))}
            </div>
          </section>

          <ImportModel />

          <AnswersSettings />

          <LibraryLocation />

          <ThisComputer />
        </div>
      </div>
    </section>
  )
}

function AnswersSettings() {
  const settings = useModels((s) => s.settings)
  const setSearchOnly = useModels((s) => s.setSearchOnly)
  const toggleId = useId()
  return (
    <section className="settings-group" aria-labelledby="answers-title">
      <h2 id="answers-title">Answers</h2>
      <div className="toggle-row">
        <div>
          <label htmlFor={toggleId} className="toggle-label">
            Search only
          </label>
          <p className="muted small">
            Show the passages that match instead of writing an answer. Faster, and needs no chat model.
          </p>
        </div>
        <input
          id={toggleId}
          type="checkbox"
          role="switch"
          className="switch"
          checked={settings?.searchOnly ?? false}
          disabled={!settings}
          onChange={(e) => void setSearchOnly(e.target.checked)}
        />
      </div>
    </section>
  )
}

function ThisComputer() {
  const info = useModels((s) => s.info)
  return (
    <section className="settings-group" aria-labelledby="hw-title">
      <h2 id="hw-title">This computer</h2>
      <dl className="kv kv-wide">
        <div className="kv-row">
          <dt>Hardware found</dt>
          <dd>{info?.hardware ?? 'unknown'}</dd>
        </div>
        <div className="kv-row">
          <dt>Docent version</dt>
          <dd>{info?.version ?? '—'}</dd>
        </div>
        <div className="kv-row">
          <dt>Data folder</dt>
          <dd className="mono">{info?.dataDir ?? '—'}</dd>
        </div>
        <div className="kv-row">
          <dt>Models folder</dt>
          <dd className="mono">{info?.modelsDir ?? '—'}</dd>
        </div>
      </dl>
    </section>
  )
}

function ModelCard({ role }: { role: ModelRole }) {
  const statuses = useModels((s) => s.statuses)
  const download = useModels((s) => s.downloads[role])
  const startDownload = useModels((s) => s.download)
  const status = statusFor(statuses, role)
  const installedNames = [...new Set(statuses.filter((s) => s.role === role && s.installed && s.name).map((s) => s.name!))]
  // The card keeps the pending choice, so it outlives the chooser being hidden while only one model is installed.
  const [choice, setChoice] = useState<string | null>(null)
  const downloading = download && !download.finished

  return (
    <article className="model-card" aria-label={roleLabel(role)}>
      <div className="model-head">
        <h3>{roleLabel(role)}</h3>
        {status?.installed ? (
          <span className="badge badge-ok">
            <CheckIcon size={12} /> Installed
          </span>
        ) : (
          <span className="badge badge-warn">Not installed</span>
        )}
      </div>
      <p className="muted small">{rolePurpose(role)}</p>
      {status?.installed && (
        <dl className="kv">
          <div className="kv-row">
            <dt>Model</dt>
            <dd>{status.name ?? status.active ?? '—'}</dd>
          </div>
          <div className="kv-row">
            <dt>Size</dt>
            <dd>{formatBytes(status.sizeBytes)}</dd>
          </div>
          {status.source && (
            <div className="kv-row">
              <dt>From</dt>
              <dd>{SOURCE_LABEL[status.source]}</dd>
            </div>
          )}
        </dl>
      )}
      {status?.problem && (
        <div className="notice notice-warn" role="note">
          <AlertIcon size={14} /> <span>{status.problem}</span>
        </div>
      )}
      {installedNames.length > 1 && (
        <ModelChooser role={role} names={installedNames} active={status?.active ?? null} choice={choice} onChoose={setChoice} />
      )}
      {downloading ? (
        <DownloadProgress role={role} progress={download.progress} />
      ) : (
        <>
          {download?.error && (
            <div className="notice notice-error" role="alert">
              <AlertIcon size={14} />{' '}
              <span>
                Download failed: {download.error}. {downloadAdvice(download.error)}
              </span>
            </div>
          )}
          {!status?.installed && (
            <button type="button" className="btn btn-primary btn-small" onClick={() => void startDownload(role)}>
              <DownloadIcon size={13} /> Download
            </button>
          )}
        </>
      )}
    </article>
  )
}

/** Picks which of several installed models of a role is used. */
function ModelChooser(props: {
  role: ModelRole
  names: string[]
  active: string | null
  choice: string | null
  onChoose(name: string | null): void
}) {
  const { role, names, active, choice, onChoose: setChoice } = props
  const setActive = useModels((s) => s.setActive)
  const selectId = useId()
  return (
    <div className="model-choose">
      <label htmlFor={selectId} className="small">
        {role === 'llm' ? 'Chat model to use' : 'Model to use'}
      </label>
      <select id={selectId} className="select" value={choice ?? active ?? names[0]} onChange={(e) => setChoice(e.target.value)}>
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="btn btn-small"
        disabled={!choice || choice === active}
        onClick={() => choice && void setActive(role, choice).then(() => setChoice(null))}
      >
        Use this model
      </button>
    </div>
  )
}

function DownloadProgress({ role, progress: p }: { role: ModelRole; progress: ModelProgress | null }) {
  return (
    <div className="download-progress">
      <div className="import-row small">
        <span>Downloading {p?.file ?? '…'}</span>
        <span>{p ? `${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}` : ''}</span>
      </div>
      <ProgressBar
        value={p?.bytesDone ?? 0}
        max={p?.bytesTotal ?? 0}
        label={`Downloading the ${roleLabel(role).toLowerCase()}`}
        indeterminate={!p || !p.bytesTotal}
      />
      {p && (
        <div className="import-row small muted">
          <span>{formatRate(p.bytesPerSecond / (1024 * 1024), 'MB')}</span>
          <span>{p.etaSeconds != null ? `about ${formatDuration(p.etaSeconds * 1000)} left` : 'estimating…'}</span>
        </div>
      )}
    </div>
  )
}

function ImportModel() {
  const importFromDisk = useModels((s) => s.importFromDisk)
  const importing = useModels((s) => s.importing)
  const [path, setPath] = useState('')
  const [role, setRole] = useState<ModelRole | 'auto'>('auto')
  const pathId = useId()
  const roleId = useId()

  const choose = async () => {
    const folder = await docent().pickFolder()
    if (folder) setPath(folder)
  }

  return (
    <section className="settings-group" aria-labelledby="import-model-title">
      <h2 id="import-model-title">Import a model from disk</h2>
      <p className="muted">
        For computers without internet: point Docent at a model folder (ONNX) or a GGUF file you copied over.
      </p>
      <form
        className="import-model"
        onSubmit={(e) => {
          e.preventDefault()
          if (path.trim()) void importFromDisk(path.trim(), role === 'auto' ? undefined : role).then((ok) => ok && setPath(''))
        }}
      >
        <div className="field grow">
          <label htmlFor={pathId} className="small">
            Path
          </label>
          <div className="input-row">
            <input
              id={pathId}
              className="input mono"
              value={path}
              onChange={(e) => setPath(e.target.value)}
              placeholder="/path/to/model"
              spellCheck={false}
            />
            <button type="button" className="btn" onClick={() => void choose()}>
              <FolderIcon size={14} /> Choose…
            </button>
          </div>
        </div>
        <div className="field">
          <label htmlFor={roleId} className="small">
            Use as
          </label>
          <select id={roleId} className="select" value={role} onChange={(e) => setRole(e.target.value as ModelRole | 'auto')}>
            <option value="auto">Detect</option>
            <option value="llm">Chat model</option>
            <option value="embedding">Embedding model</option>
            <option value="reranker">Reranker</option>
          </select>
        </div>
        <button type="submit" className="btn btn-primary" disabled={!path.trim() || importing}>
          {importing ? 'Importing…' : 'Import'}
        </button>
      </form>
    </section>
  )
}
