import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import { dropTemplate, entriesOf, readTemplate, removeNewEntries, saveTemplate, type TemplatePlace } from './template'

/**
 * The small query interface the engine talks to. PGlite implements it in the app; a node-postgres
 * pool implements it for a shared server (store/pg.ts, docs/postgres.md), so the SQL in the
 * engine sticks to plain PostgreSQL + pgvector and never calls PGlite-only APIs.
 */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>
  exec(sql: string): Promise<void>
}

export interface Db extends Queryable {
  /** Runs `fn` in one transaction: everything it wrote commits together or not at all. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  close(): Promise<void>
  /** Runs `fn` when close() begins (caches derived from the store stop reading it). */
  onClose(fn: () => void): void
  readonly dataDir: string | null
  /** 'embedded': PGlite, one process owns it. 'server': a PostgreSQL server other processes write to as well. */
  readonly kind: 'embedded' | 'server'
  /** Server: this pool's id, in its connections' application_name ("docent <id>"), so others can tell it is alive. */
  readonly session?: string
}

class PGliteDb implements Db {
  private readonly closing: (() => void)[] = []
  readonly kind = 'embedded' as const
  /** PGlite is single-connection: statements are queued, and a transaction holds the connection. */
  constructor(
    private readonly pg: PGlite,
    readonly dataDir: string | null,
    /** How a new folder became a library in this open: by initdb, from the template; null when it was one already. */
    readonly madeBy: 'initdb' | 'template' | null = null,
  ) {}

  /** The PGlite itself, for leaveTemplate() alone. */
  get pglite(): PGlite {
    return this.pg
  }

  async query<T>(sql: string, params: unknown[] = []): Promise<{ rows: T[] }> {
    const res = await this.pg.query<T>(sql, params)
    return { rows: res.rows }
  }

  async exec(sql: string): Promise<void> {
    await this.pg.exec(sql)
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pg.transaction(async (tx) =>
      fn({
        query: async <R>(sql: string, params: unknown[] = []) => ({ rows: (await tx.query<R>(sql, params)).rows }),
        exec: async (sql: string) => {
          await tx.exec(sql)
        },
      }),
    )
  }

  onClose(fn: () => void): void {
    this.closing.push(fn)
  }

  async close(): Promise<void> {
    for (const fn of this.closing.splice(0)) fn()
    if (!this.pg.closed) await this.pg.close()
  }
}

/** Whether a data folder holds a library: openPGlite made a database cluster there (PG_VERSION is the cluster's own mark). */
export function holdsLibrary(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'PG_VERSION'))
}

export interface OpenPGliteOptions {
  /** Where new libraries' templates are kept (template.ts); none: a new folder always runs initdb. */
  templates?: TemplatePlace | null
}

/**
 * Opens (creating if needed) an on-disk PGlite database with pgvector. `null` gives an in-memory
 * one. A new folder unpacks the template when there is one (template.ts), else runs initdb.
 */
export async function openPGlite(dataDir: string | null, opts: OpenPGliteOptions = {}): Promise<Db> {
  if (dataDir) await mkdir(dataDir, { recursive: true })
  const t = opts.templates
  const isNew = !!dataDir && !holdsLibrary(dataDir)
  if (dataDir && isNew && t) {
    const tar = await readTemplate(t.dir, t.schema)
    if (tar) {
      const before = await entriesOf(dataDir)
      try {
        const pg = await PGlite.create({ dataDir, loadDataDir: tar, extensions: { vector } })
        return new PGliteDb(pg, dataDir, 'template')
      } catch {
        // A template that does not unpack: remove what it left, drop it, and make the library as before.
        await removeNewEntries(dataDir, before)
        await dropTemplate(t.dir, t.schema)
      }
    }
  }
  const pg = await PGlite.create({
    // PGlite opens an in-memory database for an undefined dataDir, as for an absent one.
    dataDir: dataDir ?? undefined,
    extensions: { vector },
  })
  return new PGliteDb(pg, dataDir, isNew ? 'initdb' : null)
}

/**
 * After a new library's migrations, before anything else is written: leaves it behind as the
 * template of the next new library, when it ran initdb and there is none yet (template.ts).
 */
export async function leaveTemplate(db: Db, templates: TemplatePlace | null | undefined): Promise<boolean> {
  if (!(db instanceof PGliteDb) || db.madeBy !== 'initdb' || !templates) return false
  return saveTemplate(db.pglite, templates.dir, templates.schema)
}
