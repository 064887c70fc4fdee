import { randomBytes } from 'node:crypto'
import { readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { z } from 'zod'
import { MODEL_ROLES, ModelRole } from '../../../shared/models'

/** The manager's small JSON files. Every write goes to a temporary file that is then renamed over the old one. */

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/)

export const InstalledRecord = z.object({
  role: ModelRole,
  name: z.string(),
  source: z.enum(['download', 'import']),
  catalogId: z.string().nullable(),
  repo: z.string().nullable(),
  revision: z.string().nullable(),
  importedFrom: z.string().nullable(),
  files: z.array(z.object({ path: z.string(), size: z.number().int().nonnegative(), sha256: Hex64 })),
  installedAt: z.string(),
})
export type InstalledRecord = z.infer<typeof InstalledRecord>

const InstalledJson = z.object({ version: z.literal(1), models: z.array(InstalledRecord) })
export type InstalledJson = z.infer<typeof InstalledJson>

const PinnedFile = z.object({ sha256: Hex64, size: z.number().int().nonnegative() })
export type PinnedFile = z.infer<typeof PinnedFile>

const PinsLock = z.object({
  version: z.literal(1),
  /** Commits resolved from `main` for catalog entries whose revision was null, by catalog id. */
  revisions: z.record(z.string(), z.object({ repo: z.string(), revision: z.string(), resolvedAt: z.string() })),
  /** By "repo@revision", then by file path: what the file was first seen to be; null = absent at that revision. */
  pins: z.record(z.string(), z.record(z.string(), PinnedFile.nullable())),
})
export type PinsLock = z.infer<typeof PinsLock>

export type Settings = Partial<Record<ModelRole, string | null>> & Record<string, unknown>

export const EMPTY_INSTALLED: InstalledJson = { version: 1, models: [] }
export const EMPTY_LOCK: PinsLock = { version: 1, revisions: {}, pins: {} }

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    if (err instanceof SyntaxError) return null
    throw err
  }
}

export async function readInstalled(file: string): Promise<InstalledJson> {
  const raw = await readJson(file)
  const parsed = InstalledJson.safeParse(raw)
  return parsed.success ? parsed.data : structuredClone(EMPTY_INSTALLED)
}

/**
 * A damaged lock must not be silently replaced by an empty one (that would drop every pin), so anything other than
 * "absent" or "valid" is an error the person has to resolve.
 */
export async function readLock(file: string): Promise<PinsLock> {
  const raw = await readJson(file)
  if (raw === undefined) return structuredClone(EMPTY_LOCK)
  const parsed = PinsLock.safeParse(raw)
  if (!parsed.success) throw new Error(`${file} is damaged; restore it from a backup or delete it to trust the hub again.`)
  return parsed.data
}

export async function readSettings(file: string): Promise<Settings> {
  const raw = await readJson(file)
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return {}
  const out: Settings = { ...(raw as Record<string, unknown>) }
  for (const role of MODEL_ROLES) {
    const v = out[role]
    if (v !== undefined && v !== null && typeof v !== 'string') delete out[role]
  }
  return out
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, 'utf8')
  try {
    await rename(tmp, file)
  } catch (err) {
    await unlink(tmp).catch(() => undefined)
    throw err
  }
}
