import type { ConnectionProblem, ConnectionTest } from '../../shared/library'
import { errorMessage } from '../../shared/errors'
import { MIGRATIONS, schemaVersion } from './migrations'
import { NO_PGVECTOR, openPostgres, redactUrl, vectorAtLeast, vectorVersion } from './pg'

/**
 * "Test connection" for a team library: opens the server exactly as Engine.open does (openPostgres
 * and its checks: reachable, password, PostgreSQL 14+, pgvector present), then only reads what the
 * first open would do there: whether the schema is current or would be created or upgraded, whether
 * pgvector can be created, and whether this role may write. Writes nothing. Never throws: a failure
 * is reported with the engine's own message (no password in it) and what kind of failure it was.
 */
export async function checkServer(url: string): Promise<ConnectionTest> {
  let db
  try {
    db = await openPostgres(url, { max: 1 })
  } catch (err) {
    return { connected: false, problem: classify(err), message: errorMessage(err) }
  }
  try {
    const { rows } = await db.query<{
      version: string
      superuser: boolean
      create_db: boolean
      create_schema: boolean
      trusted: boolean | null
      available: string | null
      role: string
    }>(
      `SELECT current_setting('server_version') AS version,
              (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
              has_database_privilege(current_database(), 'CREATE') AS create_db,
              has_schema_privilege(current_schema(), 'CREATE') AS create_schema,
              (SELECT bool_or(trusted) FROM pg_available_extension_versions WHERE name = 'vector') AS trusted,
              (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available,
              current_user AS role`,
    )
    const r = rows[0]!
    const installed = await vectorVersion(db)
    // Creating an extension that is not trusted takes a superuser (CREATE EXTENSION's rules).
    const mayCreateVector = r.superuser || (!!r.trusted && r.create_db)
    if (!installed && !mayCreateVector)
      return {
        connected: false,
        problem: 'no-pgvector',
        message: `pgvector is not created in the database at ${redactUrl(url)} and the role ${r.role} may not create it: the server ${NO_PGVECTOR}`,
      }
    const at = await schemaVersion(db)
    const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version
    const schema = at === 0 ? 'create' : at < latest ? 'upgrade' : at > latest ? 'newer' : 'current'
    const notes: string[] = []
    let canWrite: boolean
    if (schema === 'create' || schema === 'upgrade') {
      canWrite = r.create_schema
      if (!canWrite)
        notes.push(
          `The role ${r.role} may not create tables here (no CREATE on the schema): ${
            schema === 'create' ? 'the library cannot be created' : 'the library cannot be upgraded'
          } with it. Ask an administrator for an importer's grants (docs/postgres.md, "Roles and grants").`,
        )
    } else {
      const w = await db.query<{ ok: boolean }>(
        `SELECT has_table_privilege('chunks', 'INSERT') AND has_table_privilege('chunks', 'UPDATE')
                AND has_table_privilege('chunks', 'DELETE') AS ok`,
      )
      canWrite = !!w.rows[0]?.ok
      if (!canWrite) notes.push(`The role ${r.role} can only read this library: searches and answers work, imports are refused.`)
      if (schema === 'newer') notes.push('This library was made by a newer version of Docent: update Docent before using it.')
    }
    const pgvector = installed ?? r.available ?? 'unknown'
    if (!vectorAtLeast(pgvector, '0.8.0'))
      notes.push(
        `pgvector ${pgvector} is older than 0.8: a search narrowed to one version of a large collection may find fewer passages by meaning.`,
      )
    return { connected: true, serverVersion: r.version, pgvector, pgvectorInstalled: !!installed, schema, canWrite, notes }
  } catch (err) {
    return { connected: false, problem: 'other', message: errorMessage(err) }
  } finally {
    await db.close().catch(() => undefined)
  }
}

/** The kind of failure, from the driver's error code or the engine's own messages. */
function classify(err: unknown): ConnectionProblem {
  const code = String((err as { code?: unknown }).code ?? '')
  const message = errorMessage(err)
  if (['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN'].includes(code)) return 'unreachable'
  if (/timeout|timed out/i.test(message)) return 'unreachable'
  // invalid_password, invalid_authorization_specification (no such role, or pg_hba refuses it)
  if (code === '28P01' || code === '28000') return 'auth'
  if (code === '3D000') return 'no-database'
  if (/SSL|TLS|certificate/i.test(message)) return 'tls'
  if (/Docent needs PostgreSQL/.test(message)) return 'too-old'
  if (/pgvector/.test(message)) return 'no-pgvector'
  return 'other'
}
