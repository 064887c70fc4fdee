import { useEffect, useId, useState } from 'react'
import { loadInitialState } from '../bridge'
import { call, docent, errorMessage } from '../docent'
import { ServerUrl, type ConnectionProblem, type ConnectionTest, type LibraryLocationInfo } from '../../../shared/library'
import { AlertIcon, CheckIcon } from './Icons'

/**
 * Settings > Library location: the embedded index on this computer, or a PostgreSQL server (a team
 * library). "Test connection" runs the engine's own checks on the server (library.testConnection);
 * saving goes to the main process, which keeps the password in the OS keychain and reopens the
 * library there. A saved password is never shown again: only where it comes from.
 */

const PROBLEM_TITLES: Record<ConnectionProblem, string> = {
  unreachable: 'Cannot reach the server',
  auth: 'The server refused the user name or password',
  'no-database': 'There is no such database on the server',
  tls: 'No TLS connection',
  'too-old': 'The server is too old',
  'no-pgvector': 'pgvector is missing',
  other: 'The connection failed',
}

const SCHEMA_TEXT = {
  current: 'The library there is up to date.',
  create: 'There is no library there yet: Docent will create it when it opens.',
  upgrade: 'The library there was made by an older Docent: it will be upgraded when it opens.',
  newer: 'The library there was made by a newer Docent.',
} as const

type Status =
  | { kind: 'idle' }
  | { kind: 'busy'; what: 'test' | 'save' }
  | { kind: 'tested'; result: ConnectionTest }
  | { kind: 'saved'; where: string }
  | { kind: 'error'; message: string }

export function LibraryLocation() {
  const [info, setInfo] = useState<LibraryLocationInfo | null>(null)
  const [kind, setKind] = useState<'local' | 'server'>('local')
  const [url, setUrl] = useState('')
  const [password, setPassword] = useState('')
  const [requireTls, setRequireTls] = useState(false)
  const [status, setStatus] = useState<Status>({ kind: 'idle' })
  const ids = { url: useId(), password: useId(), tls: useId(), local: useId(), server: useId() }

  const show = (i: LibraryLocationInfo): void => {
    setInfo(i)
    setKind(i.location.kind)
    if (i.location.kind === 'server') {
      setUrl(i.location.url)
      setRequireTls(i.location.requireTls)
    }
  }

  useEffect(() => {
    void docent()
      .libraryLocation()
      .then((res) => (res.ok ? show(res.value) : setStatus({ kind: 'error', message: res.error.message })))
  }, [])

  const saved = info?.location.kind === 'server' ? info.location.password : 'none'
  const checkedUrl = ServerUrl.safeParse(url)
  const urlProblem = kind === 'server' && url.trim() && !checkedUrl.success ? checkedUrl.error.issues[0]?.message : null
  const busy = status.kind === 'busy'
  const canUseServer = checkedUrl.success && !busy

  const test = async (): Promise<void> => {
    if (!checkedUrl.success) return
    setStatus({ kind: 'busy', what: 'test' })
    try {
      const result = await call('library.testConnection', {
        url: checkedUrl.data,
        requireTls,
        ...(password ? { password } : {}),
      })
      setStatus({ kind: 'tested', result })
    } catch (err) {
      setStatus({ kind: 'error', message: errorMessage(err) })
    }
  }

  const save = async (): Promise<void> => {
    setStatus({ kind: 'busy', what: 'save' })
    const res = await docent()
      .setLibraryLocation(
        kind === 'local'
          ? { kind: 'local' }
          : { kind: 'server', url: checkedUrl.data ?? url, requireTls, ...(password ? { password } : {}) },
      )
      .catch((err: unknown) => ({ ok: false as const, error: { message: errorMessage(err) } }))
    if (!res.ok) {
      setStatus({ kind: 'error', message: res.error.message })
      return
    }
    setPassword('')
    show(res.value)
    const where = res.value.location.kind === 'server' ? res.value.location.url : 'this computer'
    // The engine process was stopped; this first request opens the library at the new location.
    const opened = await docent()
      .invoke('app.info', {})
      .catch((err: unknown) => ({ ok: false as const, error: { message: errorMessage(err) } }))
    if (!opened.ok) {
      setStatus({
        kind: 'error',
        message: `Saved, but the library at ${where} could not be opened: ${opened.error.message} Test the connection, or choose This computer to go back.`,
      })
      return
    }
    setStatus({ kind: 'saved', where })
    // Everything on screen comes from the new location now.
    await loadInitialState()
  }

  const passwordHint =
    saved === 'saved'
      ? 'Saved in the keychain; leave empty to keep it.'
      : saved === 'environment' || info?.environmentPassword
        ? 'Leave empty to use PGPASSWORD from Docent’s environment.'
        : ''

  return (
    <section className="settings-group" aria-labelledby="location-title">
      <h2 id="location-title">Library location</h2>
      <p className="muted">
        Where your collections and conversations are kept: on this computer, or on a PostgreSQL server a team shares (with
        pgvector, PostgreSQL 14 or later).
      </p>
      <div className="location-form">
        <fieldset className="location-choice" disabled={!info || busy}>
          <legend className="small">Library location</legend>
          <label htmlFor={ids.local}>
            <input id={ids.local} type="radio" name="location" checked={kind === 'local'} onChange={() => setKind('local')} />{' '}
            This computer <span className="muted small">(the index in the data folder)</span>
          </label>
          <label htmlFor={ids.server}>
            <input id={ids.server} type="radio" name="location" checked={kind === 'server'} onChange={() => setKind('server')} />{' '}
            PostgreSQL server
          </label>
        </fieldset>

        {kind === 'server' && (
          <>
            <div className="field grow">
              <label htmlFor={ids.url} className="small">
                Server URL (without the password)
              </label>
              <input
                id={ids.url}
                className="input mono"
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                placeholder="postgres://docent@db.example.internal:5432/docs"
                spellCheck={false}
                autoComplete="off"
                aria-invalid={!!urlProblem}
              />
              {urlProblem && (
                <span className="small inline-error" role="alert">
                  {urlProblem}
                </span>
              )}
            </div>
            <div className="field">
              <label htmlFor={ids.password} className="small">
                Password
              </label>
              <input
                id={ids.password}
                className="input"
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                placeholder={saved === 'saved' ? '(saved)' : ''}
                autoComplete="off"
              />
              {passwordHint && <span className="small muted">{passwordHint}</span>}
            </div>
            {info && !info.canSavePassword && (
              <div className="notice notice-warn" role="note">
                <AlertIcon size={14} />{' '}
                <span>
                  This computer has no keychain Docent can keep a password in. Start Docent with PGPASSWORD set in its environment
                  instead.
                </span>
              </div>
            )}
            <label htmlFor={ids.tls} className="location-tls">
              <input id={ids.tls} type="checkbox" checked={requireTls} onChange={(e) => setRequireTls(e.target.checked)} />{' '}
              Require TLS <span className="muted small">(sslmode=require: the server’s certificate is checked)</span>
            </label>
          </>
        )}

        <div className="location-actions">
          {kind === 'server' && (
            <button type="button" className="btn" disabled={!canUseServer} onClick={() => void test()}>
              {status.kind === 'busy' && status.what === 'test' ? 'Testing…' : 'Test connection'}
            </button>
          )}
          <button
            type="button"
            className="btn btn-primary"
            disabled={!info || busy || (kind === 'server' && !checkedUrl.success)}
            onClick={() => void save()}
          >
            {status.kind === 'busy' && status.what === 'save' ? 'Reopening…' : 'Save and reopen the library'}
          </button>
        </div>
        <LocationStatus status={status} />
      </div>
    </section>
  )
}

function LocationStatus({ status }: { status: Status }) {
  if (status.kind === 'error')
    return (
      <div className="notice notice-error" role="alert">
        <AlertIcon size={14} /> <span>{status.message}</span>
      </div>
    )
  if (status.kind === 'saved')
    return (
      <div className="notice notice-ok" role="status">
        <CheckIcon size={14} /> <span>Saved. The library now opens from {status.where}.</span>
      </div>
    )
  if (status.kind !== 'tested') return null
  const r = status.result
  if (!r.connected)
    return (
      <div className="notice notice-error" role="alert">
        <AlertIcon size={14} />
        <div>
          <strong>{PROBLEM_TITLES[r.problem]}.</strong> <span>{r.message}</span>
        </div>
      </div>
    )
  return (
    <div className="notice notice-ok" role="status">
      <CheckIcon size={14} />
      <div>
        <strong>Connected.</strong> PostgreSQL {r.serverVersion}, pgvector {r.pgvector}
        {r.pgvectorInstalled ? '' : ' (Docent will create the extension)'}. {SCHEMA_TEXT[r.schema]}{' '}
        {r.canWrite ? 'This account can import.' : 'This account can only read.'}
        {r.notes.length > 0 && (
          <ul>
            {r.notes.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        )}
      </div>
    </div>
  )
}
