import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { Db, Queryable } from './db'

/**
 * The store on a PostgreSQL server (a team library): the same Db interface as embedded PGlite, on a
 * node-postgres pool. Each transaction takes its own client from the pool; plain queries go to any
 * free client. Credentials come from the URL or the PG* environment variables (PGPASSWORD,
 * PGUSER, PGHOST, PGPORT, PGDATABASE, as libpq reads them); `sslmode=require` in the URL turns on
 * TLS (docs/postgres.md). A password never appears in what this module prints or throws.
 */

/** The oldest server the SQL needs (FOR EACH STATEMENT triggers with transition tables, DROP DATABASE … FORCE in tests). */
export const MIN_SERVER_VERSION = 140000

/** True for a URL that names a PostgreSQL server rather than a data folder. */
export function isDatabaseUrl(s: string | null | undefined): s is string {
  return !!s && /^postgres(ql)?:\/\//i.test(s)
}

/** The URL with its password (and any password= parameter) replaced by `***`, for logs and errors. */
export function redactUrl(url: string): string {
  let out = url.replace(/^(postgres(?:ql)?:\/\/[^:/@?#]*):[^@/?#]*@/i, '$1:***@')
  out = out.replace(/([?&]password=)[^&#]*/gi, '$1***')
  return out
}

/** Removes any password (from the URL or PGPASSWORD) from a message. */
function scrub(message: string, url: string): string {
  const secrets = new Set<string>()
  const m = /^postgres(?:ql)?:\/\/[^:/@?#]*:([^@/?#]*)@/i.exec(url)
  if (m?.[1]) {
    secrets.add(m[1])
    try {
      secrets.add(decodeURIComponent(m[1]))
    } catch {
      // Not percent-encoded: the raw form is enough.
    }
  }
  const q = /[?&]password=([^&#]*)/i.exec(url)
  if (q?.[1]) secrets.add(decodeURIComponent(q[1]))
  const env = process.env['PGPASSWORD']
  if (env) secrets.add(env)
  let out = message.split(url).join(redactUrl(url))
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('***')
  return out
}

/** An error that carries no password: its message is scrubbed, its stack rebuilt from the scrubbed message. */
export function serverError(err: unknown, url: string, prefix = ''): Error {
  const e = err instanceof Error ? err : new Error(String(err))
  const message = scrub(prefix + e.message, url)
  const out = new Error(message)
  const code = (e as { code?: unknown }).code
  if (code !== undefined) (out as Error & { code?: unknown }).code = code
  out.stack = `Error: ${message}\n${scrub((e.stack ?? '').split('\n').slice(1).join('\n'), url)}`
  return out
}

export interface PgOptions {
  /** Pool size: concurrent statements this process may run (default 8). */
  max?: number
  /** Said after the pool's id in application_name (pg_stat_activity): what this connection is for. */
  applicationName?: string
  /** Settings for every connection (such as hnsw.ef_search), given the pgvector version; sent at connect. */
  settings?: (vectorVersion: string) => Record<string, string | number>
}

class PgDb implements Db {
  private readonly closing: (() => void)[] = []
  readonly dataDir = null
  readonly kind = 'server' as const

  constructor(
    private readonly pool: pg.Pool,
    readonly url: string,
    readonly session: string,
  ) {}

  /** A pool whose connections carry `docent <session>` as application_name: other processes see this engine alive by it. */
  static create(url: string, config: Omit<pg.PoolConfig, 'connectionString' | 'application_name'>, purpose?: string): PgDb {
    const session = randomUUID()
    // The server keeps 63 bytes of it: the id first, so it always fits.
    const name = `docent ${session}${purpose ? ` ${purpose}` : ''}`.slice(0, 63)
    const pool = new pg.Pool({ ...config, connectionString: url, application_name: name })
    // An idle client whose connection drops emits 'error' on the pool: without a listener that is an
    // uncaught exception. The next query gets a fresh connection.
    pool.on('error', () => undefined)
    return new PgDb(pool, url, session)
  }

  async query<T>(sql: string, params: unknown[] = []): Promise<{ rows: T[] }> {
    try {
      const res = await this.pool.query(sql, params)
      return { rows: res.rows as T[] }
    } catch (err) {
      throw serverError(err, this.url)
    }
  }

  async exec(sql: string): Promise<void> {
    try {
      // Without parameters node-postgres sends a simple query: several statements in one string run.
      await this.pool.query(sql)
    } catch (err) {
      throw serverError(err, this.url)
    }
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (err) {
      throw serverError(err, this.url)
    }
    const tx: Queryable = {
      query: async <R>(sql: string, params: unknown[] = []) => {
        try {
          return { rows: (await client.query(sql, params)).rows as R[] }
        } catch (err) {
          throw serverError(err, this.url)
        }
      },
      exec: async (sql: string) => {
        try {
          await client.query(sql)
        } catch (err) {
          throw serverError(err, this.url)
        }
      },
    }
    let broken: Error | undefined
    try {
      await client.query('BEGIN')
      const out = await fn(tx)
      await client.query('COMMIT')
      return out
    } catch (err) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        // The connection is gone or unusable: do not give it back to the pool.
        broken = e instanceof Error ? e : new Error(String(e))
      })
      throw err instanceof Error && !(err as { severity?: unknown }).severity ? err : serverError(err, this.url)
    } finally {
      client.release(broken)
    }
  }

  onClose(fn: () => void): void {
    this.closing.push(fn)
  }

  async close(): Promise<void> {
    for (const fn of this.closing.splice(0)) fn()
    if (!this.pool.ended) await this.pool.end()
  }
}

/**
 * Connects to a PostgreSQL server and checks it can hold a Docent library: version ≥ 14 and the
 * pgvector extension (installed in the database, or available to install). Throws a message
 * saying what is missing and how to fix it.
 */
export async function openPostgres(url: string, opts: PgOptions = {}): Promise<Db> {
  let vector: string
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000, application_name: 'docent' })
  try {
    await probe.connect()
    const { rows } = await probe.query<{ v: string; vector: string | null; available: string | null }>(
      `SELECT current_setting('server_version_num') AS v,
              (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
              (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available`,
    )
    const r = rows[0]!
    if (Number(r.v) < MIN_SERVER_VERSION)
      throw new Error(
        `the PostgreSQL server at ${redactUrl(url)} is version ${Math.floor(Number(r.v) / 10000)}; Docent needs PostgreSQL 14 or later`,
      )
    if (!r.vector && !r.available) throw new Error(`the PostgreSQL server at ${redactUrl(url)} ${NO_PGVECTOR}`)
    const words = await probe.query<{ db: string; enc: string; ctype: string; split: string }>(
      `SELECT current_database() AS db, pg_encoding_to_char(d.encoding) AS enc, d.datctype AS ctype,
              to_tsvector('simple', 'access\u2014handling')::text AS split
         FROM pg_database d WHERE d.datname = current_database()`,
    )
    const w = words.rows[0]!
    if (w.enc !== 'UTF8' || !w.split.includes("'access'"))
      throw new Error(`the database "${w.db}" at ${redactUrl(url)} ${wrongCtype(w.enc, w.ctype)}`)
    vector = r.vector ?? r.available!
  } catch (err) {
    const ours = err instanceof Error && /Docent needs|pgvector|LC_CTYPE/.test(err.message)
    throw serverError(err, url, ours ? '' : `could not connect to ${redactUrl(url)}: `)
  } finally {
    await probe.end().catch(() => undefined)
  }
  const settings = Object.entries(opts.settings?.(vector) ?? {})
  return PgDb.create(
    url,
    {
      max: opts.max ?? 8,
      connectionTimeoutMillis: 30_000,
      // Startup options: every connection has them before its first statement.
      ...(settings.length > 0 ? { options: settings.map(([k, v]) => `-c ${k}=${v}`).join(' ') } : {}),
    },
    opts.applicationName,
  )
}

/**
 * Why a database's encoding or character classes would break keyword search, and the fix. With
 * LC_CTYPE C, PostgreSQL's text search takes every non-ASCII character for a letter, so
 * "access—handling" or "15°C" index as one word and a search for "access" misses them; an embedded
 * library (C.UTF-8) splits them. The golden sets measured 103 of 7,139 document frequencies apart.
 */
function wrongCtype(enc: string, ctype: string): string {
  return (
    `has encoding ${enc} and LC_CTYPE ${ctype}: Docent needs UTF8 with a UTF-8 LC_CTYPE, or keyword search ` +
    `reads words joined by non-ASCII punctuation (access\u2014handling, 15°C) as one word. Create the library's ` +
    `database with: CREATE DATABASE docent TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.UTF-8' ` +
    `(or 'en_US.UTF-8')`
  )
}

export const NO_PGVECTOR =
  'does not have the pgvector extension: install it on the server (Debian/Ubuntu: apt install ' +
  'postgresql-<major>-pgvector; https://github.com/pgvector/pgvector), then run CREATE EXTENSION vector ' +
  'in the database as a superuser or the database owner'

/** True when pgvector `version` is at least `min` ("0.8.0"). */
export function vectorAtLeast(version: string, min: string): boolean {
  const a = version.split('.').map(Number)
  const b = min.split('.').map(Number)
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0)
  return true
}

/** The pgvector version installed in the database ("0.6.2"), or null. */
export async function vectorVersion(db: Queryable): Promise<string | null> {
  const { rows } = await db.query<{ v: string | null }>(`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`)
  return rows[0]?.v ?? null
}
