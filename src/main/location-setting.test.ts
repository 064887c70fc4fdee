import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EngineClient } from '../engine/host/client'
import { engineHostSpawner } from '../test-support/engine-host'
import { tempDir } from '../test-support/paths'
import { freshDatabase, pgSkipReason } from '../test-support/pg-test'
import { testSecretBox } from '../test-support/secret-box'
import { LocationSettingStore, createLocationRelays } from './location-setting'

/**
 * The "Library location" setting in the main process, without Electron: the store over an AES
 * stand-in for safeStorage (Electron's keychain cannot run here: no Electron binary), the IPC
 * handlers' checks, and the engine process started from what the store says (the real engine host
 * in a Node child, as utilityProcess.fork runs it) on a real PostgreSQL server and back.
 */

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function store(opts: { keychain?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const t = await tempDir('docent-location-')
  cleanups.push(t.cleanup)
  const secrets = testSecretBox({ available: opts.keychain ?? true })
  return { store: new LocationSettingStore(path.join(t.dir, 'library.json'), secrets, opts.env ?? {}), dir: t.dir }
}

const PASSWORD = 'correct horse battery staple 42'

describe('library location store', () => {
  it('is this computer until a server is saved; the password is kept encrypted and never shown', async () => {
    const { store: s } = await store()
    expect(s.info()).toEqual({ location: { kind: 'local' }, canSavePassword: true, environmentPassword: false })
    expect(s.engineLaunch()).toEqual({ args: [], env: {} })

    const info = s.save({ kind: 'server', url: 'postgres://docent@db.example:5432/docs', requireTls: true, password: PASSWORD })
    expect(info.location).toEqual({
      kind: 'server',
      url: 'postgres://docent@db.example:5432/docs',
      requireTls: true,
      password: 'saved',
    })
    expect(JSON.stringify(info)).not.toContain(PASSWORD)
    const onDisk = readFileSync(s.file, 'utf8')
    expect(onDisk).not.toContain(PASSWORD)
    expect(onDisk).toContain('encryptedPassword')
    expect(statSync(s.file).mode & 0o777).toBe(0o600)
    // The engine process gets the URL (with sslmode=require) in its arguments, the password only in its environment.
    const launch = s.engineLaunch()
    expect(launch.args).toEqual(['--database', 'postgres://docent@db.example:5432/docs?sslmode=require'])
    expect(launch.args.join(' ')).not.toContain(PASSWORD)
    expect(launch.env).toEqual({ PGPASSWORD: PASSWORD })
  })

  it('keeps the saved password for the same account only, and forgets it when the library comes back', async () => {
    const { store: s } = await store()
    s.save({ kind: 'server', url: 'postgres://docent@db.example/docs', requireTls: false, password: PASSWORD })
    s.save({ kind: 'server', url: 'postgres://docent@db.example:5432/other', requireTls: true })
    expect(s.engineLaunch().env).toEqual({ PGPASSWORD: PASSWORD })
    // Another host: the password is not sent there.
    s.save({ kind: 'server', url: 'postgres://docent@elsewhere.example/docs', requireTls: false })
    expect(s.info().location).toMatchObject({ password: 'none' })
    expect(s.engineLaunch().env).toEqual({})
    s.save({ kind: 'server', url: 'postgres://docent@elsewhere.example/docs', requireTls: false, password: PASSWORD })
    s.save({ kind: 'local' })
    expect(s.info().location).toEqual({ kind: 'local' })
    expect(readFileSync(s.file, 'utf8')).not.toContain('encryptedPassword')
  })

  it('without a keychain it refuses to keep a password and points to PGPASSWORD', async () => {
    const { store: s } = await store({ keychain: false, env: { PGPASSWORD: 'from-env' } })
    expect(() =>
      s.save({ kind: 'server', url: 'postgres://docent@db.example/docs', requireTls: false, password: PASSWORD }),
    ).toThrow(/no keychain.*PGPASSWORD/)
    const info = s.save({ kind: 'server', url: 'postgres://docent@db.example/docs', requireTls: false })
    expect(info).toMatchObject({ canSavePassword: false, environmentPassword: true, location: { password: 'environment' } })
    // The engine process inherits PGPASSWORD from the app's environment; nothing is added.
    expect(s.engineLaunch().env).toEqual({})
  })

  it('the IPC handlers check the sender and the input before saving, then restart the engine', async () => {
    const { store: s } = await store()
    let restarts = 0
    const relay = createLocationRelays({
      store: s,
      isTrustedSender: (url) => url === 'file:///app/index.html',
      restartEngine: async () => {
        restarts++
      },
    })
    expect(await relay.get('https://evil.example/')).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    expect(await relay.set('https://evil.example/', { kind: 'local' })).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    const withPassword = await relay.set('file:///app/index.html', {
      kind: 'server',
      url: `postgres://docent:${PASSWORD}@db.example/docs`,
      requireTls: false,
    })
    expect(withPassword).toMatchObject({ ok: false, error: { code: 'invalid_input', message: /password out of the URL/ } })
    expect(JSON.stringify(withPassword)).not.toContain(PASSWORD)
    expect(await relay.set('file:///app/index.html', { kind: 'server', url: 'mysql://x', requireTls: false })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input' },
    })
    expect(restarts).toBe(0)
    const ok = await relay.set('file:///app/index.html', {
      kind: 'server',
      url: 'postgres://docent@db.example/docs',
      requireTls: false,
    })
    expect(ok).toMatchObject({ ok: true, value: { location: { kind: 'server', password: 'none' } } })
    expect(restarts).toBe(1)
  })
})

describe.skipIf(pgSkipReason)('the engine process on the saved location (real engine host, real server)', () => {
  it('opens the server with the password from its environment, and the data folder again after a restart', async () => {
    const { store: s, dir } = await store()
    const full = new URL(await freshDatabase())
    const password = decodeURIComponent(full.password)
    full.password = ''
    const dataDir = path.join(dir, 'index')
    const started: string[][] = []
    const client = new EngineClient({
      // What utilityEngineSpawner does: ask the store at every start.
      spawn: (listeners) => {
        const launch = s.engineLaunch()
        const args = ['--data', dataDir, '--models', path.join(dir, 'models'), '--no-watch', ...launch.args]
        started.push(args)
        const env = { ...process.env, ...launch.env }
        delete env['DOCENT_DATABASE_URL']
        return engineHostSpawner(args, env)(listeners)
      },
      onEvent: () => {},
      log: () => {},
    })
    cleanups.push(() => client.dispose(5_000))
    const relay = createLocationRelays({ store: s, isTrustedSender: () => true, restartEngine: () => client.restart() })

    const local = await client.invoke('app.info', {})
    expect(local).toMatchObject({ ok: true, value: { dataDir } })

    const saved = await relay.set(null, { kind: 'server', url: full.toString(), requireTls: false, password })
    expect(saved.ok).toBe(true)
    const onServer = await client.invoke('app.info', {})
    if (!onServer.ok) throw new Error(onServer.error.message)
    expect(onServer.value.dataDir).toContain(`@${full.host}`)
    expect(onServer.value.dataDir).not.toContain(password)
    expect(await client.invoke('collections.list', {})).toEqual({ ok: true, value: [] })
    // The library was created on the server by this engine process.
    const check = await client.invoke('library.testConnection', { url: full.toString(), requireTls: false, password })
    expect(check).toMatchObject({ ok: true, value: { connected: true, schema: 'current', canWrite: true } })
    // Without a typed password the engine process uses its PGPASSWORD: the saved one.
    const fromEnv = await client.invoke('library.testConnection', { url: full.toString(), requireTls: false })
    expect(fromEnv).toMatchObject({ ok: true, value: { connected: true } })

    expect((await relay.set(null, { kind: 'local' })).ok).toBe(true)
    expect(await client.invoke('app.info', {})).toMatchObject({ ok: true, value: { dataDir } })
    expect(started).toHaveLength(3)
    for (const args of started) expect(args.join(' ')).not.toContain(password)
  })
})
