// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import { useNav } from '../stores/nav'
import { renderApp, resetApp } from '../test/setup'
import type { FakeDocent } from '../test/fakeDocent'

afterEach(() => {
  cleanup()
  resetApp()
})

/** The app on Models & Settings, with the library location section. */
async function openSettings(setup: (d: FakeDocent) => void = () => {}) {
  const { docent } = await renderApp()
  setup(docent)
  act(() => useNav.getState().setScreen('models'))
  const section = await screen.findByRole('region', { name: 'Library location' })
  await within(section).findByRole('radio', { name: /This computer/ })
  return { docent, section: within(section) }
}

describe('Settings > Library location', () => {
  it('starts on this computer, with no server fields until PostgreSQL server is chosen', async () => {
    const { section } = await openSettings()
    expect((section.getByRole('radio', { name: /This computer/ }) as HTMLInputElement).checked).toBe(true)
    expect(section.queryByLabelText(/Server URL/)).toBeNull()
    expect(section.queryByRole('button', { name: 'Test connection' })).toBeNull()

    await userEvent.click(section.getByRole('radio', { name: 'PostgreSQL server' }))
    expect(section.getByLabelText(/Server URL/)).toBeTruthy()
    expect((section.getByLabelText('Password') as HTMLInputElement).type).toBe('password')
    expect((section.getByRole('checkbox', { name: /Require TLS/ }) as HTMLInputElement).checked).toBe(false)
    // Nothing typed yet: nothing to test or save.
    expect((section.getByRole('button', { name: 'Test connection' }) as HTMLButtonElement).disabled).toBe(true)
    expect((section.getByRole('button', { name: 'Save and reopen the library' }) as HTMLButtonElement).disabled).toBe(true)
  })

  it('refuses a URL with the password in it, before anything is sent', async () => {
    const { docent, section } = await openSettings()
    await userEvent.click(section.getByRole('radio', { name: 'PostgreSQL server' }))
    await userEvent.type(section.getByLabelText(/Server URL/), 'postgres://docent:hunter2@db.example/docs')
    expect(section.getByRole('alert').textContent).toMatch(/Leave the password out of the URL/)
    expect((section.getByRole('button', { name: 'Test connection' }) as HTMLButtonElement).disabled).toBe(true)
    expect(docent.callsTo('library.testConnection')).toEqual([])
  })

  it('tests the connection with the typed password and TLS, and says what it found', async () => {
    const { docent, section } = await openSettings((d) => {
      d.handlers['library.testConnection'] = () => ({
        connected: true,
        serverVersion: '16.4',
        pgvector: '0.6.2',
        pgvectorInstalled: false,
        schema: 'create',
        canWrite: true,
        notes: ['pgvector 0.6.2 is older than 0.8: a search narrowed to one version may find fewer passages by meaning.'],
      })
    })
    await userEvent.click(section.getByRole('radio', { name: 'PostgreSQL server' }))
    await userEvent.type(section.getByLabelText(/Server URL/), 'postgres://docent@db.example:5432/docs')
    await userEvent.type(section.getByLabelText('Password'), 's3cret')
    await userEvent.click(section.getByRole('checkbox', { name: /Require TLS/ }))
    await userEvent.click(section.getByRole('button', { name: 'Test connection' }))
    const status = await section.findByRole('status')
    expect(status.textContent).toContain('Connected. PostgreSQL 16.4, pgvector 0.6.2 (Docent will create the extension).')
    expect(status.textContent).toContain('There is no library there yet: Docent will create it when it opens.')
    expect(status.textContent).toContain('This account can import.')
    expect(status.textContent).toContain('older than 0.8')
    expect(docent.callsTo('library.testConnection')).toEqual([
      { url: 'postgres://docent@db.example:5432/docs', requireTls: true, password: 's3cret' },
    ])
    // Testing moves nothing.
    expect(docent.savedLocations).toEqual([])
  })

  it('names what failed, with the engine’s message', async () => {
    const { section } = await openSettings((d) => {
      d.handlers['library.testConnection'] = () => ({
        connected: false,
        problem: 'auth',
        message: 'could not connect to postgres://docent@db.example/docs: password authentication failed for user "docent"',
      })
    })
    await userEvent.click(section.getByRole('radio', { name: 'PostgreSQL server' }))
    await userEvent.type(section.getByLabelText(/Server URL/), 'postgres://docent@db.example/docs')
    await userEvent.click(section.getByRole('button', { name: 'Test connection' }))
    const alert = await section.findByRole('alert')
    expect(alert.textContent).toMatch(
      /^The server refused the user name or password\. could not connect .*password authentication failed/,
    )
  })

  it('shows a saved server without its password, keeps it when left empty, and reloads the app from there', async () => {
    const { docent, section } = await openSettings((d) => {
      d.location = {
        location: { kind: 'server', url: 'postgres://docent@db.example/docs', requireTls: true, password: 'saved' },
        canSavePassword: true,
        environmentPassword: false,
      }
    })
    const region = section
    expect(await region.findByDisplayValue('postgres://docent@db.example/docs')).toBeTruthy()
    expect((region.getByLabelText('Password') as HTMLInputElement).value).toBe('')
    expect(region.getByText('Saved in the keychain; leave empty to keep it.')).toBeTruthy()
    expect((region.getByRole('checkbox', { name: /Require TLS/ }) as HTMLInputElement).checked).toBe(true)

    const listsBefore = docent.callsTo('collections.list').length
    await userEvent.click(region.getByRole('button', { name: 'Save and reopen the library' }))
    expect((await region.findByRole('status')).textContent?.trim()).toBe(
      'Saved. The library now opens from postgres://docent@db.example/docs.',
    )
    expect(docent.savedLocations).toEqual([{ kind: 'server', url: 'postgres://docent@db.example/docs', requireTls: true }])
    // Everything on screen is read again, from the reopened library.
    expect(docent.callsTo('collections.list').length).toBeGreaterThan(listsBefore)

    await userEvent.click(region.getByRole('radio', { name: /This computer/ }))
    await userEvent.click(region.getByRole('button', { name: 'Save and reopen the library' }))
    expect((await region.findByRole('status')).textContent?.trim()).toBe('Saved. The library now opens from this computer.')
    expect(docent.savedLocations.at(-1)).toEqual({ kind: 'local' })
  })

  it('says so when the saved server cannot be opened, and how to go back', async () => {
    const { docent, section } = await openSettings()
    await userEvent.click(section.getByRole('radio', { name: 'PostgreSQL server' }))
    await userEvent.type(section.getByLabelText(/Server URL/), 'postgres://docent@db.example/docs')
    // What the engine process answers when it cannot open the new location (host/open-server.ts).
    docent.handlers['app.info'] = () => {
      throw new Error('The library at postgres://docent@db.example/docs could not be opened: could not connect: ECONNREFUSED.')
    }
    await userEvent.click(section.getByRole('button', { name: 'Save and reopen the library' }))
    const alert = await section.findByRole('alert')
    expect(alert.textContent).toMatch(
      /^ ?Saved, but the library at postgres:\/\/docent@db\.example\/docs could not be opened: .*ECONNREFUSED\. .*choose This computer to go back\.$/,
    )
    expect(docent.savedLocations).toEqual([{ kind: 'server', url: 'postgres://docent@db.example/docs', requireTls: false }])
  })

  it('without a keychain, says to use PGPASSWORD, and shows main’s refusal to keep a password', async () => {
    const { section } = await openSettings((d) => {
      d.location = { location: { kind: 'local' }, canSavePassword: false, environmentPassword: false }
      d.saveLocationError = 'This computer has no keychain Docent can keep the password in.'
    })
    const region = section
    await userEvent.click(await region.findByRole('radio', { name: 'PostgreSQL server' }))
    expect(region.getByRole('note').textContent).toMatch(/no keychain .* PGPASSWORD/)
    await userEvent.type(region.getByLabelText(/Server URL/), 'postgres://docent@db.example/docs')
    await userEvent.type(region.getByLabelText('Password'), 'pw')
    await userEvent.click(region.getByRole('button', { name: 'Save and reopen the library' }))
    expect((await region.findByRole('alert')).textContent).toContain('no keychain Docent can keep the password in')
  })
})
