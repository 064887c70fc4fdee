import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll } from 'vitest'
import { isInstalled, startPostgres, stopPostgres } from './pg-server'
import { repoRoot } from './paths'

/**
 * A real PostgreSQL server for tests. DOCENT_TEST_DATABASE_URL names a running one (.ci/run
 * starts one for the whole run); without it the first test file that asks starts its own from
 * the binaries `npm run pg:dev -- install` put in .pg/ (or DOCENT_PG_INSTALL), and stops it after
 * its tests. Each test gets a database of its own (freshDatabase), dropped afterwards.
 *
 * Without binaries the server tests skip, saying why, on a developer's machine; in CI (CI or
 * DOCENT_REQUIRE_POSTGRES set) they fail instead: a CI that skipped them would be green for nothing.
 */
export const pgInstallDir = path.resolve(process.env['DOCENT_PG_INSTALL'] ?? path.join(repoRoot, '.pg'))
const givenUrl = process.env['DOCENT_TEST_DATABASE_URL'] || null
const required = !!process.env['CI'] || !!process.env['DOCENT_REQUIRE_POSTGRES']

/** Why the server tests skip here, or null when they run (or must run and will fail). */
export const pgSkipReason: string | null =
  givenUrl || isInstalled(pgInstallDir) || required
    ? null
    : `no PostgreSQL server for the server tests: DOCENT_TEST_DATABASE_URL is unset and there are no binaries in ${pgInstallDir} (npm run pg:dev -- install puts them there)`
if (pgSkipReason) console.warn(`[postgres tests skipped] ${pgSkipReason}`)

let server: Promise<string> | null = null
let ownDataDir: string | null = null
const created: string[] = []

async function serverUrl(): Promise<string> {
  if (givenUrl) return givenUrl
  if (!isInstalled(pgInstallDir))
    throw new Error(
      `PostgreSQL is required here (CI) but there are no binaries in ${pgInstallDir} and DOCENT_TEST_DATABASE_URL is unset: run npm run pg:dev -- install`,
    )
  server ??= (async () => {
    ownDataDir = mkdtempSync(path.join(os.tmpdir(), 'docent-pgtest-'))
    const s = await startPostgres(pgInstallDir, path.join(ownDataDir, 'data'), { fast: true })
    return s.url
  })()
  return server
}

/** A URL with another database name (and the same credentials and parameters). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = '/' + database
  return u.toString()
}

/** Runs `sql` on the server's maintenance database as the test superuser. */
export async function adminQuery(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: await serverUrl() })
  await client.connect()
  try {
    return await client.query(sql, params)
  } finally {
    await client.end()
  }
}

/**
 * What every test database is created with, explicitly, so that a given server initialised with
 * LC_CTYPE C still gives tests a database the engine accepts (pg.ts refuses one whose text search
 * would glue words to non-ASCII punctuation).
 */
export const UTF8_DATABASE = `TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'`

/** A new empty database on the test server, for one test: its URL. Dropped when the file's tests end. */
export async function freshDatabase(): Promise<string> {
  const url = await serverUrl()
  const name = `docent_t_${randomBytes(6).toString('hex')}`
  await adminQuery(`CREATE DATABASE ${name} ${UTF8_DATABASE}`)
  created.push(name)
  return withDatabase(url, name)
}

afterAll(async () => {
  if (created.length > 0 && (givenUrl || server)) {
    for (const name of created.splice(0)) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined)
  }
  if (server && ownDataDir) {
    await server.catch(() => undefined)
    stopPostgres(pgInstallDir, path.join(ownDataDir, 'data'))
    rmSync(ownDataDir, { recursive: true, force: true })
    server = null
  }
})

/** Runs SQL on `url` as whoever the URL names. */
export async function sqlAt(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(text)
  } finally {
    await c.end()
  }
}

/**
 * A new login role that may only read the library at `url` (CONNECT, USAGE, SELECT on its tables,
 * as docs/postgres.md grants a read-only MCP server): its name, password and a URL that logs in as it.
 */
export async function readOnlyRole(url: string, prefix = 'reader'): Promise<{ role: string; password: string; url: string }> {
  const role = `${prefix}_${Math.random().toString(36).slice(2, 8)}`
  const password = `pw-${role}-secret`
  await sqlAt(
    url,
    `CREATE ROLE ${role} LOGIN PASSWORD '${password}';
     GRANT CONNECT ON DATABASE ${new URL(url).pathname.slice(1)} TO ${role};
     GRANT USAGE ON SCHEMA public TO ${role};
     GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role};`,
  )
  const u = new URL(url)
  u.username = role
  u.password = password
  return { role, password, url: u.toString() }
}
