import { statfs } from 'node:fs/promises'

/**
 * Free-space guard for the on-disk index. Embedded PostgreSQL does not fail cleanly when its disk
 * fills up (seen here: PGlite spins instead of returning an error), so the importer stops *before*
 * the disk is full, with a reason a person can act on, while there is still room to commit.
 */
export const MIN_FREE_BYTES = 64 * 1024 * 1024

export class DiskFullError extends Error {
  override readonly name = 'DiskFullError'
}

export async function freeBytes(dir: string): Promise<number | null> {
  try {
    const s = await statfs(dir)
    return Number(s.bavail) * Number(s.bsize)
  } catch {
    return null
  }
}

/** Throws DiskFullError when `dir` has less than `need` bytes (and at least MIN_FREE_BYTES) free. */
export async function ensureFreeSpace(dir: string | null, need = 0): Promise<void> {
  if (!dir) return
  const free = await freeBytes(dir)
  if (free === null) return
  const required = Math.max(MIN_FREE_BYTES, need)
  if (free < required) {
    throw new DiskFullError(
      `not enough free disk space for the index: ${Math.round(free / 2 ** 20)} MB left in ${dir}, ` +
        `${Math.round(required / 2 ** 20)} MB needed; free some space and import again (documents imported so far are kept)`,
    )
  }
}
