import net from 'node:net'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Result } from '../../../shared/api'
import type { ConnectionTest } from '../../../shared/library'
import { Engine } from '../../engine'
import { createEngineHost, type EngineHost } from '../host'
import { freshDatabase, pgSkipReason, UTF8_DATABASE, sqlAt, readOnlyRole } from '../../../test-support/pg-test'

/**
 * library.testConnection through the host's dispatch (the contract's validation on both sides)
 * against a real PostgreSQL server (test-support/pg-test.ts), the way the settings screen sends it:
 * a URL without the password, and the password on its own.
 */

const noModels = '/nonexistent/docent-no-models'
const uniq = () => Math.random().toString(36).slice(2, 8)

/** The URL without its password, and the password. */
function split(url: string): { url: string; password: string } {
  const u = new URL(url)
  const password = decodeURIComponent(u.password)
  u.password = ''
  return { url: u.toString(), password }
}

const sql = sqlAt

function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

describe.skipIf(pgSkipReason)('library.testConnection against a real PostgreSQL server', () => {
  let engine: Engine
  let host: EngineHost
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    // The host the app runs over its own library (here an in-memory one); the test reaches out to the server.
    engine = await Engine.open({ dataDir: null, modelsDir: noModels })
    host = createEngineHost(engine, { dataDir: '/memory', modelsDir: noModels, emit: () => {} })
  })
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
    await host?.shutdown()
    await engine?.close()
  })

  const test = async (input: unknown): Promise<Result<ConnectionTest>> =>
    (await host.dispatch('library.testConnection', input)) as Result<ConnectionTest>

  it('connects with the password given apart, says the library will be created, then that it is current', async () => {
    const full = await freshDatabase()
    const { url, password } = split(full)
    const before = await test({ url, password, requireTls: false })
    expect(before.ok).toBe(true)
    if (!before.ok || !before.value.connected) throw new Error(`not connected: ${JSON.stringify(before)}`)
    expect(before.value.serverVersion).toMatch(/^1[4-9]|^[2-9]\d/)
    expect(before.value.pgvector).toMatch(/^\d+\.\d+\.\d+$/)
    expect(before.value.pgvectorInstalled).toBe(false)
    expect(before.value.schema).toBe('create')
    expect(before.value.canWrite).toBe(true)
    // The test wrote nothing: no extension, no tables.
    const client = new pg.Client({ connectionString: full })
    await client.connect()
    const tables = await client.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)
    const ext = await client.query(`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'`)
    await client.end()
    expect(tables.rows[0].n).toBe(0)
    expect(ext.rows[0].n).toBe(0)

    const opened = await Engine.open({ database: full, modelsDir: noModels })
    cleanups.push(() => opened.close())
    const after = await test({ url, password, requireTls: false })
    if (!after.ok || !after.value.connected) throw new Error(`not connected: ${JSON.stringify(after)}`)
    expect(after.value).toMatchObject({ schema: 'current', canWrite: true, pgvectorInstalled: true })
    expect(after.value.pgvector).toBe(before.value.pgvector)
  })

  it('a SELECT-only role connects and is told it can only read', async () => {
    const full = await freshDatabase()
    const owner = await Engine.open({ database: full, modelsDir: noModels })
    cleanups.push(() => owner.close())
    const { role, password, url } = await readOnlyRole(full)
    const u = new URL(url)
    u.password = ''
    const res = await test({ url: u.toString(), password, requireTls: false })
    if (!res.ok || !res.value.connected) throw new Error(`not connected: ${JSON.stringify(res)}`)
    expect(res.value.schema).toBe('current')
    expect(res.value.canWrite).toBe(false)
    expect(res.value.notes.join(' ')).toMatch(new RegExp(`${role} can only read this library`))
  })

  it('a wrong password is reported as such, and the password appears nowhere in the answer', async () => {
    const { url, password } = split(await freshDatabase())
    const wrong = `${password}-wrong-${uniq()}`
    const res = await test({ url, password: wrong, requireTls: false })
    expect(res.ok).toBe(true)
    if (!res.ok || res.value.connected) throw new Error(`expected a failure: ${JSON.stringify(res)}`)
    expect(res.value.problem).toBe('auth')
    expect(res.value.message).toMatch(/password authentication failed/)
    expect(JSON.stringify(res)).not.toContain(wrong)
    expect(JSON.stringify(res)).not.toContain(password)
  })

  it('a port where nothing listens is reported as unreachable', async () => {
    const { url, password } = split(await freshDatabase())
    const u = new URL(url)
    u.port = String(await closedPort())
    const res = await test({ url: u.toString(), password, requireTls: false })
    if (!res.ok || res.value.connected) throw new Error(`expected a failure: ${JSON.stringify(res)}`)
    expect(res.value.problem).toBe('unreachable')
    expect(res.value.message).toMatch(/could not connect to postgres:\/\/.*ECONNREFUSED/)
    expect(res.value.message).not.toContain(password)
  })

  it('with Require TLS, a server without TLS is refused', async () => {
    const { url, password } = split(await freshDatabase())
    const res = await test({ url, password, requireTls: true })
    if (!res.ok || res.value.connected) throw new Error(`expected a failure: ${JSON.stringify(res)}`)
    expect(res.value.problem).toBe('tls')
    expect(res.value.message).toMatch(/does not support SSL/)
  })

  it('pgvector that this role may not create is reported as missing, with how to install it', async () => {
    const admin = await freshDatabase()
    const role = `owner_${uniq()}`
    await sql(admin, `CREATE ROLE ${role} LOGIN PASSWORD 'pw-${role}'`)
    const name = `docent_np_${uniq()}`
    await sql(admin, `CREATE DATABASE ${name} OWNER ${role} ${UTF8_DATABASE}`)
    cleanups.push(() => sql(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    const u = new URL(admin)
    u.username = role
    u.password = ''
    u.pathname = `/${name}`
    const res = await test({ url: u.toString(), password: `pw-${role}`, requireTls: false })
    if (!res.ok || res.value.connected) throw new Error(`expected a failure: ${JSON.stringify(res)}`)
    expect(res.value.problem).toBe('no-pgvector')
    expect(res.value.message).toMatch(/may not create it.*CREATE EXTENSION vector/)
  })

  it('refuses a URL that carries the password, before connecting', async () => {
    const full = await freshDatabase()
    const res = await host.dispatch('library.testConnection', { url: full, requireTls: false })
    expect(res.ok).toBe(false)
    if (res.ok) return
    expect(res.error.code).toBe('invalid_input')
    expect(res.error.message).toMatch(/Leave the password out of the URL/)
  })
})
