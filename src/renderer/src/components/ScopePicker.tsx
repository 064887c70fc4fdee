import { useEffect, useId, useRef, useState, type RefObject } from 'react'
import { useChat } from '../stores/chat'
import { useCollections } from '../stores/collections'
import { CheckIcon, ChevronIcon } from './Icons'
import { compareVersionsDesc, isPrerelease } from '../../../shared/versions'
import type { Scope } from '../../../shared/search'

/** Versions available for the chosen collections (all collections when none are chosen). */
export function versionsInScope(collections: { id: string; versions: string[] }[], chosen: string[]): string[] {
  const pool = chosen.length ? collections.filter((c) => chosen.includes(c.id)) : collections
  const all = new Set<string>()
  for (const c of pool) for (const v of c.versions) all.add(v)
  return [...all].sort(compareVersionsDesc)
}

/** "Latest (2025-06-18)" when the collections in scope agree on their newest release, else per collection. */
export function latestLabel(collections: { id: string; versions: string[] }[], chosen: string[]): string {
  const pool = (chosen.length ? collections.filter((c) => chosen.includes(c.id)) : collections).filter((c) =>
    c.versions.some((v) => !isPrerelease(v)),
  )
  const newest = new Set(pool.map((c) => c.versions.filter((v) => !isPrerelease(v)).sort(compareVersionsDesc)[0]!))
  if (newest.size === 0) return 'Latest'
  if (newest.size === 1) return `Latest (${[...newest][0]})`
  return 'Latest of each collection'
}

/** Closes a popover on a mouse press outside it and outside the button that opens it. */
function useCloseOnOutsidePress(open: boolean, inside: RefObject<HTMLElement | null>[], close: () => void): void {
  useEffect(() => {
    if (!open) return
    const onDown = (e: MouseEvent) => {
      if (!inside.some((r) => r.current?.contains(e.target as Node))) close()
    }
    window.addEventListener('mousedown', onDown)
    return () => window.removeEventListener('mousedown', onDown)
    // The refs are stable and close only sets state: the listener changes with `open` alone.
  }, [open])
}

/** A specific version that left the scope (collection deselected or removed) falls back to not chosen. */
function useVersionLeavingScope(scope: Scope, versions: string[], collectionCount: number, setScope: (scope: Scope) => void) {
  const version = scope.version
  useEffect(() => {
    if (version !== 'auto' && version !== 'all' && version !== 'latest' && !versions.includes(version) && collectionCount > 0) {
      setScope({ ...scope, version: 'auto' })
    }
  }, [version, versions, collectionCount, scope, setScope])
}

function chosenLabel(chosen: string[]): string {
  return chosen.length === 0 ? 'All collections' : chosen.length === 1 ? chosen[0]! : `${chosen.length} collections`
}

export function ScopePicker() {
  const collections = useCollections((s) => s.collections)
  const scope = useChat((s) => s.scope)
  const setScope = useChat((s) => s.setScope)
  const [open, setOpen] = useState(false)
  const popRef = useRef<HTMLDivElement>(null)
  const buttonRef = useRef<HTMLButtonElement>(null)
  const listId = useId()

  const chosen = scope.collections.filter((c) => collections.some((x) => x.id === c))
  const versions = versionsInScope(collections, chosen)
  const version = scope.version

  useCloseOnOutsidePress(open, [popRef, buttonRef], () => setOpen(false))

  useVersionLeavingScope(scope, versions, collections.length, setScope)

  const toggle = (id: string) => {
    const next = chosen.includes(id) ? chosen.filter((c) => c !== id) : [...chosen, id]
    setScope({ ...scope, collections: next })
  }

  const collectionsLabel = chosenLabel(chosen)

  return (
    <div className="scope-picker" role="group" aria-label="Search scope">
      <div className="scope-field">
        <span className="scope-label" id={`${listId}-label`}>
          In
        </span>
        <button
          ref={buttonRef}
          type="button"
          className="select-btn"
          aria-haspopup="true"
          aria-expanded={open}
          aria-controls={listId}
          aria-label={`Collections: ${collectionsLabel}`}
          disabled={collections.length === 0}
          onClick={() => setOpen((o) => !o)}
        >
          <span>{collectionsLabel}</span>
          <ChevronIcon size={14} />
        </button>
        {open && (
          <CollectionsPopover
            popRef={popRef}
            id={listId}
            collections={collections}
            chosen={chosen}
            onToggle={toggle}
            onAll={() => setScope({ ...scope, collections: [] })}
            onClose={(refocus) => {
              setOpen(false)
              if (refocus) buttonRef.current?.focus()
            }}
          />
        )}
      </div>
      <VersionSelect
        version={version}
        versions={versions}
        latest={latestLabel(collections, chosen)}
        disabled={collections.length === 0}
        onChange={(v) => setScope({ ...scope, version: v })}
      />
    </div>
  )
}

function CollectionsPopover(props: {
  popRef: RefObject<HTMLDivElement | null>
  id: string
  collections: { id: string; versions: string[] }[]
  chosen: string[]
  onToggle(id: string): void
  onAll(): void
  /** refocus: Escape closed it, so focus goes back to the button that opened it. */
  onClose(refocus: boolean): void
}) {
  const { collections, chosen, onToggle, onClose } = props
  return (
    <div
      ref={props.popRef}
      id={props.id}
      className="popover"
      role="group"
      aria-label="Collections to search"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation()
          onClose(true)
        }
      }}
    >
      <label className="popover-item">
        <input type="checkbox" checked={chosen.length === 0} onChange={props.onAll} autoFocus />
        <span>All collections</span>
      </label>
      <div className="popover-sep" />
      {collections.map((c) => (
        <label key={c.id} className="popover-item">
          <input type="checkbox" checked={chosen.includes(c.id)} onChange={() => onToggle(c.id)} />
          <span>{c.id}</span>
          <span className="muted small">{c.versions.length ? `${c.versions.length} versions` : 'unversioned'}</span>
        </label>
      ))}
      <div className="popover-footer">
        <button type="button" className="btn btn-small" onClick={() => onClose(false)}>
          <CheckIcon size={13} /> Done
        </button>
      </div>
    </div>
  )
}

function VersionSelect(props: {
  version: string
  versions: string[]
  latest: string
  disabled: boolean
  onChange(version: string): void
}) {
  const versionId = useId()
  return (
    <div className="scope-field">
      <label className="scope-label" htmlFor={versionId}>
        Version
      </label>
      <select
        id={versionId}
        className="select"
        value={props.version}
        onChange={(e) => props.onChange(e.target.value)}
        disabled={props.disabled}
      >
        <option value="auto">As the question says</option>
        <option value="latest">{props.latest}</option>
        <option value="all">All versions</option>
        {props.versions.length > 0 && (
          <optgroup label="A specific version">
            {props.versions.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </optgroup>
        )}
      </select>
    </div>
  )
}
