import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { SerialQueue } from '../../core/serial-queue'
import { exists, walkFiles } from './files'
import {
  readInstalled,
  readLock,
  readSettings,
  writeJsonAtomic,
  type InstalledJson,
  type InstalledRecord,
  type PinsLock,
  type Settings,
} from './store'
import type { InstalledFile, InstalledModel, ModelRole } from './types'

export const STAGING = '.staging'
const TRASH = '.trash'

/**
 * A models folder (layout in types.ts) and its records: installed.json, pins.lock.json and
 * settings.json. Every change to those files goes through one queue, so concurrent downloads,
 * imports and deletions never lose each other's writes.
 */
export class ModelFolder {
  readonly installedFile: string
  readonly lockFile: string
  readonly settingsFile: string
  private readonly records = new SerialQueue()

  constructor(readonly dir: string) {
    this.installedFile = path.join(dir, 'installed.json')
    this.lockFile = path.join(dir, 'pins.lock.json')
    this.settingsFile = path.join(dir, 'settings.json')
  }

  /** Where a model of a role with a name lives (a folder, or a .gguf file for llm). */
  modelPath(role: ModelRole, name: string): string {
    return path.join(this.dir, role, name)
  }

  /** Names of the models of a role present on disk, sorted. */
  async listOnDisk(role: ModelRole): Promise<string[]> {
    let entries
    try {
      entries = await readdir(path.join(this.dir, role), { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    return entries
      .filter((e) => !e.name.startsWith('.'))
      .filter((e) => (role === 'llm' ? e.isFile() && e.name.toLowerCase().endsWith('.gguf') : e.isDirectory()))
      .map((e) => e.name)
      .sort()
  }

  fromRecord(rec: InstalledRecord): InstalledModel {
    return {
      role: rec.role,
      name: rec.name,
      path: this.modelPath(rec.role, rec.name),
      source: rec.source,
      catalogId: rec.catalogId,
      repo: rec.repo,
      revision: rec.revision,
      importedFrom: rec.importedFrom,
      files: rec.files.map((f) => ({ ...f })),
      totalBytes: rec.files.reduce((a, f) => a + f.size, 0),
      installedAt: rec.installedAt,
    }
  }

  /**
   * A model on disk the manager did not install: sizes from stat, hashes unknown. Its source says
   * who put it there when the folder's manifest.json (written by `npm run models:dev`) lists it.
   */
  async fixture(role: ModelRole, name: string): Promise<InstalledModel> {
    const p = this.modelPath(role, name)
    const files: InstalledFile[] =
      role === 'llm'
        ? [{ path: name, size: (await stat(p)).size, sha256: null }]
        : (await walkFiles(p)).map((f) => ({ path: f.rel, size: f.size, sha256: null }))
    return {
      role,
      name,
      path: p,
      source: (await this.devManifestLists(`${role}/${name}`)) ? 'models-dev' : 'folder',
      catalogId: null,
      repo: null,
      revision: null,
      importedFrom: null,
      files,
      totalBytes: files.reduce((a, f) => a + f.size, 0),
      installedAt: null,
    }
  }

  /** Whether the manifest.json of `npm run models:dev` (scripts/models-dev) in this folder lists the model. */
  private async devManifestLists(key: string): Promise<boolean> {
    try {
      const m = JSON.parse(await readFile(path.join(this.dir, 'manifest.json'), 'utf8')) as {
        generator?: unknown
        models?: unknown
      }
      return (
        typeof m.generator === 'string' &&
        m.generator.includes('models:dev') &&
        !!m.models &&
        typeof m.models === 'object' &&
        key in m.models
      )
    } catch {
      return false
    }
  }

  /** Replace a model folder with a finished one so that loaders see either the old or the new folder, never a mix. */
  async moveIntoPlace(from: string, to: string): Promise<void> {
    await mkdir(path.dirname(to), { recursive: true })
    let old: string | null = null
    if (await exists(to)) {
      old = this.trashPath(path.basename(to))
      await mkdir(path.dirname(old), { recursive: true })
      await rename(to, old)
    }
    try {
      await rename(from, to)
    } catch (err) {
      if (old !== null) await rename(old, to).catch(() => undefined)
      throw err
    }
    if (old !== null) await rm(old, { recursive: true, force: true })
  }

  /** A fresh place to rename a model to before deleting it, so loaders never see it half deleted. */
  trashPath(name: string): string {
    return path.join(this.dir, TRASH, `${name}-${randomBytes(4).toString('hex')}`)
  }

  /** Records an installation, and makes it the active model when the role has none on disk. */
  async recordInstall(rec: InstalledRecord): Promise<void> {
    await this.withFileLock(async () => {
      await this.ensureDir()
      const inst: InstalledJson = await readInstalled(this.installedFile)
      inst.models = inst.models.filter((m) => !(m.role === rec.role && m.name === rec.name))
      inst.models.push(rec)
      await writeJsonAtomic(this.installedFile, inst)
      const settings: Settings = await readSettings(this.settingsFile)
      const active = settings[rec.role]
      if (typeof active !== 'string' || !(await exists(this.modelPath(rec.role, active)))) {
        settings[rec.role] = rec.name
        await writeJsonAtomic(this.settingsFile, settings)
      }
    })
  }

  updateLock(change: (lock: PinsLock) => void): Promise<PinsLock> {
    return this.withFileLock(async () => {
      await this.ensureDir()
      const lock = await readLock(this.lockFile)
      change(lock)
      await writeJsonAtomic(this.lockFile, lock)
      return lock
    })
  }

  withFileLock<T>(fn: () => Promise<T>): Promise<T> {
    return this.records.run(fn)
  }

  async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true })
  }
}
