import { z } from 'zod'

/**
 * Where the app's library lives: the embedded index in the data folder, or a PostgreSQL server
 * (docs/postgres.md). Plain data and pure functions only: the renderer, the preload, main and the
 * engine host all use these.
 */

/** A `postgres://` URL that carries no password: the password travels on its own and is never shown again once saved. */
export const ServerUrl = z
  .string()
  .trim()
  .min(1, 'Enter the server’s postgres:// URL.')
  .max(2000)
  .regex(
    /^postgres(ql)?:\/\/[^\s]+$/i,
    'The URL must start with postgres:// (for example postgres://docent@db.example:5432/docs).',
  )
  .refine((url) => !/^postgres(ql)?:\/\/[^/@?#]*:[^@/?#]*@/i.test(url) && !/[?&]password=/i.test(url), {
    message: 'Leave the password out of the URL and type it in the password field.',
  })

export const ServerConnection = z.object({
  url: ServerUrl,
  /** sslmode=require: refuse a server that cannot speak TLS rather than send anything in plain text. */
  requireTls: z.boolean(),
})
export type ServerConnection = z.infer<typeof ServerConnection>

/**
 * A connection to test. Without `password` the engine uses what libpq would: PGPASSWORD of the
 * engine's process, which the app sets to the saved password while a server is the library.
 */
export const ConnectionTestInput = ServerConnection.extend({ password: z.string().max(1000).optional() })

export const ConnectionProblem = z.enum(['unreachable', 'auth', 'no-database', 'tls', 'too-old', 'no-pgvector', 'other'])
export type ConnectionProblem = z.infer<typeof ConnectionProblem>

/** What a connection test found: what Docent would do on that server, or what stands in the way. */
export const ConnectionTest = z.discriminatedUnion('connected', [
  z.object({
    connected: z.literal(true),
    /** "16.4" */
    serverVersion: z.string(),
    /** The pgvector version installed in the database, or the one Docent will create. */
    pgvector: z.string(),
    pgvectorInstalled: z.boolean(),
    /** current; create (a new library); upgrade (an older Docent's schema); newer (made by a newer Docent). */
    schema: z.enum(['current', 'create', 'upgrade', 'newer']),
    /** The role may import (and create or upgrade the schema when that is due). */
    canWrite: z.boolean(),
    /** Plain-words remarks (why the role cannot write, an old pgvector). */
    notes: z.array(z.string()),
  }),
  z.object({
    connected: z.literal(false),
    problem: ConnectionProblem,
    /** The engine's own message, with no password in it. */
    message: z.string(),
  }),
])
export type ConnectionTest = z.infer<typeof ConnectionTest>

/** The connection URL the engine opens: `sslmode=require` added when TLS is required. */
export function connectionUrl(conn: ServerConnection): string {
  if (!conn.requireTls) return conn.url
  const u = new URL(conn.url)
  u.searchParams.set('sslmode', 'require')
  return u.toString()
}

/**
 * Where the library is, as the renderer sees it: never the password, only where it comes from
 * (`saved`: in the OS keychain through Electron's safeStorage; `environment`: PGPASSWORD of the
 * app's process; `none`).
 */
export const LibraryLocation = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local') }),
  z.object({
    kind: z.literal('server'),
    url: z.string(),
    requireTls: z.boolean(),
    password: z.enum(['saved', 'environment', 'none']),
  }),
])
export type LibraryLocation = z.infer<typeof LibraryLocation>

export const LibraryLocationInfo = z.object({
  location: LibraryLocation,
  /** A password can be kept in the OS keychain here; otherwise only PGPASSWORD works. */
  canSavePassword: z.boolean(),
  /** PGPASSWORD is set in the app's environment. */
  environmentPassword: z.boolean(),
})
export type LibraryLocationInfo = z.infer<typeof LibraryLocationInfo>

/** A new location. Without `password` a server keeps the saved one (same host, port and user only). */
export const SaveLibraryLocation = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local') }),
  ServerConnection.extend({ kind: z.literal('server'), password: z.string().min(1).max(1000).optional() }),
])
export type SaveLibraryLocation = z.infer<typeof SaveLibraryLocation>
