import type { EngineOptions } from '../engine/engine'
import { openPGlite, type Db } from '../engine/store/db'
import { openPostgres } from '../engine/store/pg'
import { tempDir } from './paths'
import { freshDatabase, pgSkipReason } from './pg-test'

/**
 * The two stores the engine runs on, for suites that must pass on both: embedded PGlite on disk
 * and a real PostgreSQL server (pg-test.ts). Each `place()` is a new empty library: a data folder,
 * or a database of its own on the server. Use as
 *   for (const backend of storeBackends) describe.skipIf(backend.skip)(`… (${backend.name})`, () => …)
 */
export interface StoreBackend {
  name: 'pglite' | 'postgres'
  /** Why this backend's tests skip here (null: they run). */
  skip: string | null
  /** A new empty library: the Engine options that open it, and a cleanup. */
  place(): Promise<{ options: Pick<EngineOptions, 'dataDir' | 'database'>; cleanup: () => Promise<void> }>
  /** A new empty store opened as a bare Db (not migrated). */
  openDb(): Promise<{ db: Db; cleanup: () => Promise<void> }>
}

export const storeBackends: StoreBackend[] = [
  {
    name: 'pglite',
    skip: null,
    async place() {
      const d = await tempDir('docent-store-')
      return { options: { dataDir: d.dir }, cleanup: d.cleanup }
    },
    async openDb() {
      const db = await openPGlite(null)
      return { db, cleanup: () => db.close() }
    },
  },
  {
    name: 'postgres',
    skip: pgSkipReason,
    async place() {
      return { options: { database: await freshDatabase() }, cleanup: async () => undefined }
    },
    async openDb() {
      const db = await openPostgres(await freshDatabase())
      return { db, cleanup: () => db.close() }
    },
  },
]
