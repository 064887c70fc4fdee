import { useChat } from '../stores/chat'
import { useCollections, type ImportJob } from '../stores/collections'
import { roleLabel, statusFor, useModels, type ModelRole } from '../stores/models'
import { useNav } from '../stores/nav'
import { isPrerelease } from '../../../shared/versions'
import { CheckIcon, FolderIcon, GearIcon, SparkIcon } from './Icons'
import { ImportProgressView, pickAndImportFolder } from './Library'

const ROLES: ModelRole[] = ['embedding', 'reranker', 'llm']

/** Questions that make sense for any documentation folder; the version one uses what the import found. */
export function suggestedQuestions(collections: { id: string; versions: string[] }[]): string[] {
  const versions = [...new Set(collections.flatMap((c) => c.versions))].filter((v) => !isPrerelease(v))
  const out = ['How do I get started?', 'What are the main concepts, in a few sentences?']
  const newest = versions.sort().at(-1)
  if (newest) out.push(`What changed in ${newest}?`)
  else out.push('What are the known limitations?')
  return out
}

/**
 * The empty state of a conversation. On first run it walks a person to a first cited answer:
 * add a folder, check the models, ask a suggested question. Later it only offers suggestions.
 */
export function Onboarding() {
  const collections = useCollections((s) => s.collections)
  const loaded = useCollections((s) => s.loaded)
  const jobs = useCollections((s) => s.jobs)
  const threads = useChat((s) => s.threads)
  const ask = useChat((s) => s.ask)
  const searchOnly = useModels((s) => s.settings?.searchOnly ?? false)

  if (!loaded) return null
  const hasCollections = collections.length > 0
  const firstRun = !hasCollections || threads.length === 0
  const suggestions = suggestedQuestions(collections)
  const onAsk = (q: string) => void ask(q, { searchOnly })

  if (!firstRun) {
    return (
      <div className="empty-chat">
        <SparkIcon size={28} />
        <h2>Ask about your documents</h2>
        <p className="muted">Answers come only from the folders in your library, with sources you can open.</p>
        <Suggestions questions={suggestions} onAsk={onAsk} />
      </div>
    )
  }

  return (
    <div className="onboarding" aria-labelledby="welcome-title">
      <h2 id="welcome-title">Welcome to Docent</h2>
      <p className="muted lead">
        Ask questions about your own document folders. Everything stays on this computer, and every answer cites the passages it
        came from.
      </p>

      <ol className="steps">
        <FolderStep collections={collections} running={Object.values(jobs).filter((j) => !j.finished)} />

        <ModelsStep hasCollections={hasCollections} />

        <li className={`step${hasCollections ? ' current' : ' later'}`}>
          <StepMarker n={3} done={false} />
          <div className="step-body">
            <h3>Ask a question</h3>
            <p className="muted">
              {hasCollections ? 'Try one of these, or type your own below.' : 'Suggestions appear once a folder is imported.'}
            </p>
            <Suggestions questions={suggestions} onAsk={onAsk} disabled={!hasCollections} />
          </div>
        </li>
      </ol>
    </div>
  )
}

function Suggestions({ questions, onAsk, disabled }: { questions: string[]; onAsk(q: string): void; disabled?: boolean }) {
  return (
    <div className="suggestions" role="group" aria-label="Suggested questions">
      {questions.map((q) => (
        <button key={q} type="button" className="suggestion" disabled={disabled} onClick={() => onAsk(q)}>
          {q}
        </button>
      ))}
    </div>
  )
}

function FolderStep({ collections, running }: { collections: { id: string }[]; running: ImportJob[] }) {
  const hasCollections = collections.length > 0
  return (
    <li className={`step${hasCollections ? ' done' : ' current'}`}>
      <StepMarker n={1} done={hasCollections} />
      <div className="step-body">
        <h3>Add a folder of documents</h3>
        {hasCollections ? (
          <p className="muted">
            {collections.length === 1
              ? `“${collections[0]!.id}” is in your library.`
              : `${collections.length} folders are in your library.`}{' '}
            Add more any time by dropping them on the window.
          </p>
        ) : running.length > 0 ? (
          running.map((j) => <ImportProgressView key={j.jobId} job={j} />)
        ) : (
          <button type="button" className="drop-zone" onClick={() => void pickAndImportFolder()}>
            <FolderIcon size={28} />
            <span className="drop-zone-title">Drop a folder here, or click to choose one</span>
            <span className="muted small">Markdown, MDX, HTML, PDF, Word and text files are read and indexed locally.</span>
          </button>
        )}
      </div>
    </li>
  )
}

function ModelsStep({ hasCollections }: { hasCollections: boolean }) {
  const statuses = useModels((s) => s.statuses)
  const modelsLoaded = useModels((s) => s.loaded)
  const setScreen = useNav((s) => s.setScreen)
  const llm = statusFor(statuses, 'llm')
  return (
    <li className={`step${hasCollections ? ' current' : ''}`}>
      <StepMarker n={2} done={!!llm?.installed} />
      <div className="step-body">
        <h3>Check the models</h3>
        <p className="muted">
          Search works without any models. Written answers need the chat model; without it Docent shows the passages that match.
        </p>
        {modelsLoaded && (
          <ul className="model-checklist">
            {ROLES.map((r) => {
              const s = statusFor(statuses, r)
              return (
                <li key={r} className={s?.installed ? 'ok' : 'missing'}>
                  <span className={`status-dot ${s?.installed ? 'ok' : 'warn'}`} aria-hidden="true" />
                  <span>{roleLabel(r)}</span>
                  <span className="muted small">{s?.installed ? (s.name ?? 'installed') : 'not installed'}</span>
                </li>
              )
            })}
          </ul>
        )}
        <button type="button" className="btn btn-small" onClick={() => setScreen('models')}>
          <GearIcon size={13} /> Open Models &amp; Settings
        </button>
      </div>
    </li>
  )
}

function StepMarker({ n, done }: { n: number; done: boolean }) {
  return (
    <span className={`step-marker${done ? ' done' : ''}`} aria-label={done ? `Step ${n}, done` : `Step ${n}`}>
      {done ? <CheckIcon size={14} /> : n}
    </span>
  )
}
