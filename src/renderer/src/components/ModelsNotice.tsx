import { useEffect, useState } from 'react'
import { recallList, rememberInList } from '../lib/remember'
import { statusFor, useModels, type ModelRole } from '../stores/models'
import { useNav } from '../stores/nav'
import { CloseIcon, GearIcon, InfoIcon } from './Icons'

const ROLES: ModelRole[] = ['llm', 'embedding', 'reranker']

/** What each missing model would add, in the notice's words. */
const ADDS: Record<ModelRole, string> = {
  llm: 'the chat model for written answers',
  embedding: 'the embedding model for search by meaning',
  reranker: 'the reranker for better ordering',
}

/**
 * The roles whose model is not installed, once the model list has loaded (none before, so nothing
 * flashes at start-up).
 */
export function useMissingModels(): ModelRole[] {
  const statuses = useModels((s) => s.statuses)
  const loaded = useModels((s) => s.loaded)
  if (!loaded) return []
  return ROLES.filter((r) => !statusFor(statuses, r)?.installed)
}

/**
 * The engine's notices that only say a model is missing (each search and answer repeats them).
 * They are left out of a result while this notice is shown; a notice about a model that is
 * installed but failed (a broken file, a load error) does not start with these words and stays.
 */
const MISSING_MODEL_NOTICES: [RegExp, ModelRole][] = [
  [/^Vector search is unavailable: no embedding model is installed\b/, 'embedding'],
  [/^Reranking is unavailable: no reranker model is installed\b/, 'reranker'],
  [/^No reranker was available, so relevance was judged\b/, 'reranker'],
  [/^No language model is available \((none installed|no language model is installed)\b/, 'llm'],
]

export function saysModelMissing(notice: string, missing: readonly ModelRole[]): boolean {
  return MISSING_MODEL_NOTICES.some(([re, role]) => missing.includes(role) && re.test(notice))
}

function joinAnd(parts: string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`
}

const SEEN = 'modelsNotice.seen'

/**
 * One calm notice, instead of a stack of warnings under every answer, when models are missing:
 * what works now and what to install for the rest. It is shown once, in the first conversation
 * after the set of missing models changes, not in every one (Models & Settings and the sidebar's
 * dot keep saying it); it can be hidden sooner. Which sets were shown is remembered across restarts.
 */
export function ModelsNotice() {
  const missing = useMissingModels()
  const setScreen = useNav((s) => s.setScreen)
  const key = missing.join(',')
  const [shownFor, setShownFor] = useState<string | null>(() => (recallList(SEEN).includes(key) ? null : key))
  useEffect(() => {
    if (!key) return
    if (shownFor === key) rememberInList(SEEN, key)
    else if (!recallList(SEEN).includes(key)) setShownFor(key)
  }, [key, shownFor])
  if (missing.length === 0 || shownFor !== key) return null
  const works = [
    missing.includes('embedding') ? 'keyword search' : 'search by keywords and meaning',
    'opening every source at its passage',
  ]
  if (!missing.includes('llm')) works.push('written answers')
  return (
    <div className="notice notice-muted models-notice" role="status" aria-label="Models">
      <InfoIcon size={15} />
      <div className="models-notice-text">
        <div>
          <strong>Works now:</strong> {joinAnd(works)}.
        </div>
        <div>
          <strong>To add:</strong> install {joinAnd(missing.map((r) => ADDS[r]))}.
        </div>
      </div>
      <button type="button" className="btn btn-small" onClick={() => setScreen('models')}>
        <GearIcon size={13} /> Models &amp; Settings
      </button>
      <button type="button" className="icon-btn" aria-label="Hide this notice" onClick={() => setShownFor(null)}>
        <CloseIcon size={14} />
      </button>
    </div>
  )
}
