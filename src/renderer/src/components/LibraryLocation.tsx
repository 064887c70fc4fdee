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

async function testConnection(url: string, requireTls: boolean, password: string): Promise<Status> {
  try {
    const result = await call('library.testConnection', { url, requireTls, ...(password ? { password } : {}) })
    return { kind: 'tested', result }
  } catch (err) {
    return { kind: 'error', message: errorMessage(err) }
  }
}

/** The engine process was stopped on saving; this first request opens the library at the new location. */
async function reopenAt(where: string): Promise<Status> {
  const opened = await docent()
    .invoke('app.info', {})
    .catch((err: unknown) => ({ ok: false as const, error: { message: errorMessage(err) } }))
  if (opened.ok) return { kind: 'saved', where }
  return {
    kind: 'error',
    message: `Saved, but the library at ${where} could not be opened: ${opened.error.message} Test the connection, or choose This computer to go back.`,
  }
}

/** The form's state, loaded from the main process, with its test and save actions. */
function useLocationForm() {
  const [info, setInfo] = useState<LibraryLocationInfo | null>(null)
  const [kind, setKind] = useState<'local' | 'server'>('local')
  const [url, setUrl] = useState('')
  const [password, setPassword] = useState('')
  const [requireTls, setRequireTls] = useState(false)
  const [status, setStatus] = useState<Status>({ kind: 'idle' })

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

  const checkedUrl = ServerUrl.safeParse(url)

  const test = async (): Promise<void> => {
    if (!checkedUrl.success) return
    setStatus({ kind: 'busy', what: 'test' })
    setStatus(await testConnection(checkedUrl.data, requireTls, password))
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
    const reopened = await reopenAt(res.value.location.kind === 'server' ? res.value.location.url : 'this computer')
    setStatus(reopened)
    // Everything on screen comes from the new location now.
    if (reopened.kind === 'saved') await loadInitialState()
  }

  return { info, kind, setKind, url, setUrl, password, setPassword, requireTls, setRequireTls, status, checkedUrl, test, save }
}

type LocationForm = ReturnType<typeof useLocationForm>

export function LibraryLocation() {
  const form = useLocationForm()
  const { info, kind, setKind, status, checkedUrl } = form
  const ids = { url: useId(), password: useId(), tls: useId(), local: useId(), server: useId() }
  const busy = status.kind === 'busy'
  const canUseServer = checkedUrl.success && !busy

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

        {kind === 'server' && <ServerFields form={form} ids={ids} />}

        <div className="location-actions">
          {kind === 'server' && (
            <button type="button" className="btn" disabled={!canUseServer} onClick={() => void form.test()}>
              {status.kind === 'busy' && status.what === 'test' ? 'Testing…' : 'Test connection'}
            </button>
          )}
          <button
            type="button"
            className="btn btn-primary"
            disabled={!info || busy || (kind === 'server' && !checkedUrl.success)}
            onClick={() => void form.save()}
          >
            {status.kind === 'busy' && status.what === 'save' ? 'Reopening…' : 'Save and reopen the library'}
          </button>
        </div>
        <LocationStatus status={status} />
      </div>
    </section>
  )
}

/** The server's URL, password and TLS fields, shown when the library lives on a PostgreSQL server. */
function ServerFields({ form, ids }: { form: LocationForm; ids: { url: string; password: string; tls: string } }) {
  const { info, url, setUrl, password, setPassword, requireTls, setRequireTls, checkedUrl } = form
  const saved = info?.location.kind === 'server' ? info.location.password : 'none'
  const urlProblem = url.trim() && !checkedUrl.success ? checkedUrl.error.issues[0]?.message : null
  const passwordHint =
    saved === 'saved'
      ? 'Saved in the keychain; leave empty to keep it.'
      : saved === 'environment' || info?.environmentPassword
        ? 'Leave empty to use PGPASSWORD from Docent’s environment.'
        : ''
  return (
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
        <input id={ids.tls} type="checkbox" checked={requireTls} onChange={(e) => setRequireTls(e.target.checked)} /> Require TLS{' '}
        <span className="muted small">(sslmode=require: the server’s certificate is checked)</span>
      </label>
    </>
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
