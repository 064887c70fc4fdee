import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, pgSkipReason } from '../src/test-support/pg-test'
import { startHarness, type Harness } from './harness/index'

/**
 * Settings > Library location in a real Chromium over the real engine, against a real PostgreSQL
 * server (test-support/pg-test.ts): the form, Test connection (a wrong password, then the right
 * one), and Save, after which the harness reopens its engine on the server as main restarts the
 * engine process. The password is kept by main's store over an AES stand-in for safeStorage: the
 * OS keychain needs Electron, which this machine does not have.
 */
describe.skipIf(pgSkipReason)('library location (browser e2e, real server)', () => {
  let h: Harness
  let url: string
  let password: string

  beforeAll(async () => {
    const full = new URL(await freshDatabase())
    password = decodeURIComponent(full.password)
    full.password = ''
    url = full.toString()
    h = await startHarness({ viewport: { width: 1360, height: 900 } })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('tests a connection to the server: a wrong password is named, the right one connects', async () => {
    const { page } = h
    await page.getByRole('button', { name: 'Models & Settings', exact: true }).click()
    const section = page.getByRole('region', { name: 'Library location' })
    await section.scrollIntoViewIfNeeded()
    expect(await section.getByRole('radio', { name: /This computer/ }).isChecked()).toBe(true)

    await section.getByRole('radio', { name: 'PostgreSQL server' }).check()
    await section.getByLabel(/Server URL/).fill(url)
    await section.getByLabel('Password', { exact: true }).fill(`${password}-wrong`)
    await section.getByRole('button', { name: 'Test connection' }).click()
    const alert = section.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/^The server refused the user name or password\..*password authentication failed/)
    expect(await alert.textContent()).not.toContain(password)

    await section.getByLabel('Password', { exact: true }).fill(password)
    await section.getByRole('button', { name: 'Test connection' }).click()
    const status = section.getByRole('status')
    await status.waitFor()
    const text = (await status.textContent()) ?? ''
    expect(text).toMatch(/^Connected\. PostgreSQL 1\d[.\d]*, pgvector \d+\.\d+\.\d+ \(Docent will create the extension\)\./)
    expect(text).toContain('There is no library there yet: Docent will create it when it opens.')
    expect(text).toContain('This account can import.')
    await section.scrollIntoViewIfNeeded()
    await h.screenshot('location-setting', { docs: false })
    // Testing moved nothing.
    expect(h.engine.db.kind).toBe('embedded')
    expect(h.pageErrors).toEqual([])
  })

  it('saves the server: the library reopens there, and the password is kept encrypted, never shown again', async () => {
    const { page } = h
    const section = page.getByRole('region', { name: 'Library location' })
    await section.getByRole('button', { name: 'Save and reopen the library' }).click()
    await section.getByText(`Saved. The library now opens from ${url}.`).waitFor()
    expect(h.engine.db.kind).toBe('server')
    expect(await h.engine.catalog.list()).toEqual([])
    // The settings screen now reads from the server: the data row names it, without the password.
    await page.getByText(/Data folder/).waitFor()
    const onDisk = readFileSync(h.locations.file, 'utf8')
    expect(onDisk).not.toContain(password)
    expect(JSON.parse(onDisk)).toMatchObject({ kind: 'server', url, requireTls: false })
    expect(await section.getByLabel('Password', { exact: true }).inputValue()).toBe('')
    await section.getByText('Saved in the keychain; leave empty to keep it.').waitFor()
    const html = await page.content()
    expect(html).not.toContain(password)

    // Back to this computer.
    await section.getByRole('radio', { name: /This computer/ }).check()
    await section.getByRole('button', { name: 'Save and reopen the library' }).click()
    await section.getByText('Saved. The library now opens from this computer.').waitFor()
    expect(h.engine.db.kind).toBe('embedded')
    expect(h.pageErrors).toEqual([])
  })
})
