import { mkdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { activeModelName } from '../active'
import { CATALOG, defaultCatalogEntry, findCatalogEntry, isSafeName, type CatalogEntry } from './catalog'
import { DownloadAbortedError } from './download'
import { downloadModel, type HubAccess, type ModelDownloadProgress } from './download-model'
import { ModelManagerError } from './errors'
import { exists } from './files'
import { ModelFolder } from './folder'
import { DEFAULT_HUB_ENDPOINT } from './hub'
import { importModel } from './import-model'
import type { DownloadFetch } from './network'
import { readInstalled, readSettings, writeJsonAtomic } from './store'
import { MODEL_ROLES, isModelRole, type InstalledModel, type ModelRole, type ModelStatus } from './types'

export { ModelManagerError, PinMismatchError } from './errors'
export { hashFile } from './files'
export type { ModelDownloadProgress } from './download-model'

/**
 * The models folder's one owner: what is installed and active (status), downloads from the hub
 * (download-model.ts), imports from disk (import-model.ts), deletion and the choice of active model.
 * Only downloads use the network.
 */

export interface ModelManagerOptions {
  /** Hub base URL (default https://huggingface.co). Tests point it at a loopback server. */
  endpoint?: string
  /**
   * fetch used for downloads only. Default: the proxy variables' route in plain Node (network.ts,
   * read when a download starts); the app passes Electron's net.fetch.
   */
  fetchImpl?: DownloadFetch
  /** Model catalog (default: the built-in one). */
  catalog?: readonly CatalogEntry[]
  /** Minimum time between progress events (default 250 ms). */
  progressIntervalMs?: number
  retry?: { maxAttempts?: number; backoffMs?: number }
}

export interface DownloadModelOptions {
  onProgress?: (p: ModelDownloadProgress) => void
  signal?: AbortSignal
}

interface InFlight {
  entry: CatalogEntry
  controller: AbortController
  promise: Promise<InstalledModel>
}

export class ModelManager {
  readonly modelsDir: string
  readonly endpoint: string
  private readonly catalog: readonly CatalogEntry[]
  private readonly folder: ModelFolder
  private readonly hub: HubAccess
  private readonly inFlight = new Map<string, InFlight>()

  /** Touches neither the disk nor the network. */
  constructor(modelsDir: string, opts: ModelManagerOptions = {}) {
    this.modelsDir = path.resolve(modelsDir)
    this.endpoint = opts.endpoint ?? DEFAULT_HUB_ENDPOINT
    this.catalog = opts.catalog ?? CATALOG
    this.folder = new ModelFolder(this.modelsDir)
    this.hub = {
      endpoint: this.endpoint,
      fetchOverride: opts.fetchImpl,
      progressIntervalMs: opts.progressIntervalMs ?? 250,
      retry: opts.retry ?? {},
    }
  }

  get catalogEntries(): readonly CatalogEntry[] {
    return this.catalog
  }

  /** Where a model of a role with a name lives (a folder, or a .gguf file for llm). */
  modelPath(role: ModelRole, name: string): string {
    return this.folder.modelPath(role, name)
  }

  /** Per role: the active model, whether it is on disk, every installed model with sizes, hashes and source. Local only. */
  async status(): Promise<ModelStatus[]> {
    const [installed, settings] = await Promise.all([
      readInstalled(this.folder.installedFile),
      readSettings(this.folder.settingsFile),
    ])
    const out: ModelStatus[] = []
    for (const role of MODEL_ROLES) {
      const names = await this.folder.listOnDisk(role)
      const models: InstalledModel[] = []
      for (const name of names) {
        const rec = installed.models.find((m) => m.role === role && m.name === name)
        models.push(rec ? this.folder.fromRecord(rec) : await this.folder.fixture(role, name))
      }
      const active = typeof settings[role] === 'string' ? (settings[role] as string) : null
      const activeModel = active === null ? null : (models.find((m) => m.name === active) ?? null)
      out.push({
        role,
        active,
        installed: activeModel !== null,
        inUse: activeModel ? activeModel.name : activeModelName(this.modelsDir, role),
        activeModel,
        models,
        defaultCatalogId: defaultCatalogEntry(role, this.catalog).id,
        downloading: [...this.inFlight.values()].some((f) => f.entry.role === role),
      })
    }
    return out
  }

  /**
   * Downloads a catalog model (by id, or a role's default) into .staging, verifies every file, then moves the finished
   * folder or file into place in one rename. Returns at once, without any network call, when the same pin is already
   * installed and its files are intact. The only method that uses the network.
   */
  download(roleOrCatalogId: ModelRole | string, opts: DownloadModelOptions = {}): Promise<InstalledModel> {
    const entry = isModelRole(roleOrCatalogId)
      ? defaultCatalogEntry(roleOrCatalogId, this.catalog)
      : findCatalogEntry(roleOrCatalogId, this.catalog)
    if (!entry) return Promise.reject(new ModelManagerError(`There is no model "${roleOrCatalogId}" in the catalog.`))
    const running = this.inFlight.get(entry.id)
    if (running) return running.promise

    const controller = new AbortController()
    const onAbort = (): void => controller.abort(new DownloadAbortedError())
    if (opts.signal?.aborted) onAbort()
    else opts.signal?.addEventListener('abort', onAbort, { once: true })

    const promise = downloadModel(this.folder, this.hub, entry, controller.signal, opts.onProgress)
      .catch((err: unknown) => {
        if (controller.signal.aborted && !(err instanceof DownloadAbortedError)) throw new DownloadAbortedError()
        throw err
      })
      .finally(() => {
        opts.signal?.removeEventListener('abort', onAbort)
        this.inFlight.delete(entry.id)
      })
    this.inFlight.set(entry.id, { entry, controller, promise })
    return promise
  }

  /**
   * Cancels running downloads: of one catalog id, of a role, or all. The partial files stay in .staging, so the next
   * download resumes. Returns how many downloads were cancelled.
   */
  cancel(roleOrCatalogId?: ModelRole | string): number {
    let n = 0
    for (const f of this.inFlight.values()) {
      if (roleOrCatalogId === undefined || f.entry.id === roleOrCatalogId || f.entry.role === roleOrCatalogId) {
        f.controller.abort(new DownloadAbortedError())
        n++
      }
    }
    return n
  }

  /** Removes an installed model (atomically: renamed aside first, then deleted). Clears it as active. Local only. */
  async delete(role: ModelRole, name: string): Promise<void> {
    if (!isModelRole(role)) throw new ModelManagerError(`Unknown model role "${String(role)}".`)
    if (!isSafeName(name)) throw new ModelManagerError(`"${name}" is not a model name.`)
    for (const f of this.inFlight.values()) {
      if (f.entry.role === role && f.entry.installName === name) {
        throw new ModelManagerError(`${name} is being downloaded; cancel the download first.`)
      }
    }
    const p = this.modelPath(role, name)
    const installed = await readInstalled(this.folder.installedFile)
    const recorded = installed.models.some((m) => m.role === role && m.name === name)
    if (await exists(p)) {
      const aside = this.folder.trashPath(name)
      await mkdir(path.dirname(aside), { recursive: true })
      await rename(p, aside)
      await rm(aside, { recursive: true, force: true })
    } else if (!recorded) {
      throw new ModelManagerError(`No ${role} model named "${name}" is installed.`)
    }
    await this.folder.withFileLock(async () => {
      const inst = await readInstalled(this.folder.installedFile)
      inst.models = inst.models.filter((m) => !(m.role === role && m.name === name))
      await this.folder.ensureDir()
      await writeJsonAtomic(this.folder.installedFile, inst)
      const settings = await readSettings(this.folder.settingsFile)
      if (settings[role] === name) {
        settings[role] = null
        await writeJsonAtomic(this.folder.settingsFile, settings)
      }
    })
  }

  /** Records the model the loaders use for a role in settings.json. The model must be on disk. Local only. */
  async setActive(role: ModelRole, name: string): Promise<void> {
    if (!isModelRole(role)) throw new ModelManagerError(`Unknown model role "${String(role)}".`)
    if (!isSafeName(name) || !(await this.folder.listOnDisk(role)).includes(name)) {
      throw new ModelManagerError(`No ${role} model named "${name}" is installed.`)
    }
    await this.folder.withFileLock(async () => {
      const settings = await readSettings(this.folder.settingsFile)
      settings[role] = name
      await this.folder.ensureDir()
      await writeJsonAtomic(this.folder.settingsFile, settings)
    })
  }

  /**
   * Copies a model from disk into the models folder (never moves it); see import-model.ts for what
   * is accepted and how it is checked. Local only.
   */
  importFromDisk(sourcePath: string, role?: ModelRole): Promise<InstalledModel> {
    return importModel(this.folder, sourcePath, role)
  }
}
