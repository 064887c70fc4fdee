import { z } from 'zod'
import type { Db, Queryable } from './db'
import { sha256Hex } from './ids'

/**
 * Who reads which collection of a team library (ADR 0011). PostgreSQL enforces it: migration 8
 * puts row-level security on every table of content or derived data, and its policies let a role
 * read a collection's rows when it is a member of that collection's read role
 * (`docent_<database>_read_<collection>`), recorded in docent_collection_access. This module only manages
 * those roles (`docent access grant|revoke|list`) and reads what the connected role may read, so
 * the engine's own caches never serve one role what another read. Embedded (PGlite) there are no
 * permissions: the library is one person's own.
 */

export class AccessError extends Error {
  override readonly name = 'AccessError'
}

export const NOT_A_SERVER =
  'permissions are for a server library: this library is in a data folder, one person’s own, and every collection in it is theirs. ' +
  'Give --database postgres://… (or DOCENT_DATABASE_URL) to manage who reads a team library'

/** A PostgreSQL role name as given on the command line (quoted when used, so any case or character but NUL). */
export const RoleName = z
  .string()
  .min(1, 'a role name is empty')
  .max(63, 'a role name has at most 63 bytes on PostgreSQL')
  .refine((s) => !s.includes('\0'), 'a role name cannot contain a NUL character')
  .refine((s) => Buffer.byteLength(s) <= 63, 'a role name has at most 63 bytes on PostgreSQL')

export const CollectionName = z.string().min(1, 'a collection name is empty').max(64)

/** `"name"`, with embedded quotes doubled: a role in a statement that takes no parameters (GRANT, CREATE ROLE). */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"'
}

/**
 * The read role of a collection: `docent_<database>_read_<collection>`. Roles belong to the whole
 * server, not to one database, so the library's database is in the name: two libraries on one
 * server with a collection of the same name get two roles. Anything but a-z, 0-9 and _ becomes `_`;
 * when that changed a name or it would pass 63 bytes, 8 hex digits of a hash keep two apart
 * (`docs.v2` and `docs-v2`).
 */
export function readRoleName(collection: string, database: string): string {
  const clean = (s: string) => s.toLowerCase().replace(/[^a-z0-9_]/g, '_')
  const name = `docent_${clean(database)}_read_${clean(collection)}`
  if (clean(collection) === collection && clean(database) === database && name.length <= 63) return name
  return `${name.slice(0, 54)}_${sha256Hex(`${database}\n${collection}`).slice(0, 8)}`
}

/**
 * The collections the connected role may read, from the database now (one cheap statement); null
 * for every one (embedded, or a role with full access on a server).
 */
export async function readableCollections(db: Queryable): Promise<string[] | null> {
  const { rows } = await db.query<{ r: string[] | null }>('SELECT docent_readable_collections() AS r')
  return rows[0]?.r ?? null
}

/** A key for what the connected role may read: caches keyed by it are never shared across scopes. */
export function accessKey(readable: string[] | null): string {
  return readable === null ? '*' : [...readable].sort().join('\n')
}

/** Only those of `ids` the role may read (all for null). */
export function onlyReadable<T extends string>(ids: T[], readable: string[] | null): T[] {
  if (readable === null) return ids
  const ok = new Set(readable)
  return ids.filter((c) => ok.has(c))
}

export interface AccessEntry {
  collection: string
  /** Its read role; null when nobody was ever granted it. */
  read_role: string | null
  /** Roles that are members of the read role (directly granted), by name. */
  readers: string[]
}

export interface AccessList {
  /** The role owning the library's tables: it and its members have full access (imports, grants). */
  owner: string
  full_access: string[]
  collections: AccessEntry[]
}

async function requireServerAdmin(db: Db): Promise<void> {
  if (db.kind !== 'server') throw new AccessError(NOT_A_SERVER)
  const { rows } = await db.query<{ full: boolean; me: string; owner: string; superuser: boolean }>(
    `SELECT docent_full_access() AS full, current_user AS me, pg_get_userbyid(c.relowner) AS owner,
            (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser
       FROM pg_class c WHERE c.oid = 'docent_collection_access'::regclass`,
  )
  const r = rows[0]!
  if (!r.full && !r.superuser)
    throw new AccessError(
      `the role ${r.me} may not manage permissions: that takes full access to the library, as the role owning its tables (${r.owner}) or a member of it`,
    )
}

async function requireCollection(db: Queryable, collection: string): Promise<void> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM collections ORDER BY id')
  if (rows.some((r) => r.id === collection)) return
  const known = rows.map((r) => r.id)
  throw new AccessError(
    `there is no collection "${collection}" in this library` +
      (known.length ? ` (it has: ${known.join(', ')})` : ' (it has none yet: import one with docent ingest)'),
  )
}

async function requireRole(db: Queryable, role: string): Promise<void> {
  const { rows } = await db.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])
  if (rows.length === 0)
    throw new AccessError(
      `there is no role "${role}" on the server: create it first (CREATE ROLE ${quoteIdent(role)} LOGIN PASSWORD '…'), ` +
        'with CONNECT on the database, USAGE on the schema and SELECT on the tables (docs/postgres.md, "Permissions")',
    )
}

/**
 * Lets `role` read `collection`: creates the collection's read role when it has none (this takes
 * CREATEROLE, or a superuser) and grants it to `role`. Takes effect on that role's next statement.
 * Returns the read role and notes on what else the role needs.
 */
export async function grantRead(
  db: Db,
  role: string,
  collection: string,
): Promise<{ read_role: string; created: boolean; already: boolean; notes: string[] }> {
  RoleName.parse(role)
  CollectionName.parse(collection)
  await requireServerAdmin(db)
  await requireCollection(db, collection)
  await requireRole(db, role)
  return db.transaction(async (tx) => {
    // Two grants of one new collection at once: one creates its read role, the other waits here.
    await tx.query('SELECT pg_advisory_xact_lock(7234, 3)')
    const { rows: known } = await tx.query<{ read_role: string }>(
      'SELECT read_role FROM docent_collection_access WHERE collection_id = $1',
      [collection],
    )
    let readRole = known[0]?.read_role
    let created = false
    if (!readRole) {
      const { rows: here } = await tx.query<{ db: string }>('SELECT current_database() AS db')
      readRole = readRoleName(collection, here[0]!.db)
      const { rows: exists } = await tx.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [readRole])
      if (exists.length === 0) {
        await tx.exec(`CREATE ROLE ${quoteIdent(readRole)} NOLOGIN`)
        created = true
      }
      await tx.query('INSERT INTO docent_collection_access (collection_id, read_role) VALUES ($1, $2)', [collection, readRole])
    }
    const { rows: member } = await tx.query<{ m: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_auth_members am WHERE am.roleid = (SELECT oid FROM pg_roles WHERE rolname = $1)
                        AND am.member = (SELECT oid FROM pg_roles WHERE rolname = $2)) AS m`,
      [readRole, role],
    )
    const already = !!member[0]?.m
    if (!already) await tx.exec(`GRANT ${quoteIdent(readRole)} TO ${quoteIdent(role)}`)
    const notes: string[] = []
    const { rows: priv } = await tx.query<{ ok: boolean }>(`SELECT has_table_privilege($1, 'chunks', 'SELECT') AS ok`, [role])
    if (!priv[0]?.ok)
      notes.push(
        `${role} has no SELECT on the library's tables yet: GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${quoteIdent(role)} (docs/postgres.md)`,
      )
    return { read_role: readRole, created, already, notes }
  })
}

/** Stops `role` reading `collection` (revokes the read role from it). Its next statement reads without it. */
export async function revokeRead(
  db: Db,
  role: string,
  collection: string,
): Promise<{ read_role: string; still_through: string[] }> {
  RoleName.parse(role)
  CollectionName.parse(collection)
  await requireServerAdmin(db)
  await requireCollection(db, collection)
  await requireRole(db, role)
  const { rows } = await db.query<{ read_role: string }>(
    'SELECT read_role FROM docent_collection_access WHERE collection_id = $1',
    [collection],
  )
  const readRole = rows[0]?.read_role
  if (!readRole)
    throw new AccessError(`nobody was granted "${collection}": it has no read role, so ${role} reads it only with full access`)
  const { rows: member } = await db.query<{ m: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_auth_members am WHERE am.roleid = (SELECT oid FROM pg_roles WHERE rolname = $1)
                      AND am.member = (SELECT oid FROM pg_roles WHERE rolname = $2)) AS m`,
    [readRole, role],
  )
  if (!member[0]?.m) throw new AccessError(`${role} was not granted "${collection}" (it is not a member of ${readRole})`)
  await db.exec(`REVOKE ${quoteIdent(readRole)} FROM ${quoteIdent(role)}`)
  // Still a member through another role (a group): say so rather than claim the access is gone.
  const { rows: still } = await db.query<{ via: string }>(
    `SELECT g.rolname AS via FROM pg_auth_members am JOIN pg_roles g ON g.oid = am.member
      WHERE am.roleid = (SELECT oid FROM pg_roles WHERE rolname = $1) AND pg_has_role($2, g.oid, 'MEMBER') ORDER BY 1`,
    [readRole, role],
  )
  return { read_role: readRole, still_through: still.map((r) => r.via) }
}

/** Every collection with its read role and the roles granted it, and who has full access. */
export async function listAccess(db: Db): Promise<AccessList> {
  await requireServerAdmin(db)
  const { rows: own } = await db.query<{ owner: string; members: string[] | null }>(
    `SELECT pg_get_userbyid(c.relowner)::text AS owner,
            (SELECT array_agg(m.rolname::text ORDER BY m.rolname) FROM pg_auth_members am JOIN pg_roles m ON m.oid = am.member
              WHERE am.roleid = c.relowner) AS members
       FROM pg_class c WHERE c.oid = 'docent_collection_access'::regclass`,
  )
  const { rows } = await db.query<{ id: string; read_role: string | null; readers: string[] | null }>(
    // Roles with full access are listed apart (on PostgreSQL 16 the role that created a read role
    // is recorded as its admin member, and it reads everything anyway).
    `SELECT c.id, a.read_role,
            (SELECT array_agg(m.rolname::text ORDER BY m.rolname) FROM pg_roles r JOIN pg_auth_members am ON am.roleid = r.oid
               JOIN pg_roles m ON m.oid = am.member
              WHERE r.rolname = a.read_role
                AND NOT pg_has_role(m.oid, (SELECT relowner FROM pg_class WHERE oid = 'docent_collection_access'::regclass), 'MEMBER')) AS readers
       FROM collections c LEFT JOIN docent_collection_access a ON a.collection_id = c.id ORDER BY c.id`,
  )
  return {
    owner: own[0]!.owner,
    full_access: [own[0]!.owner, ...(own[0]!.members ?? [])],
    collections: rows.map((r) => ({ collection: r.id, read_role: r.read_role, readers: r.readers ?? [] })),
  }
}
