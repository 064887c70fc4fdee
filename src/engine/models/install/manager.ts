import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  CATALOG,
  defaultCatalogEntry,
  findCatalogEntry,
  isSafeName,
  isSafeRelativePath,
  type CatalogEntry,
  type CatalogFile,
} from './catalog'
import { ChecksumError, DownloadAbortedError, downloadFile, throwIfAborted, type DownloadProgress } from './download'
import { DEFAULT_HUB_ENDPOINT, listRepoFiles, resolveRevision, resolveUrl, type HubFile } from './hub'
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
import { activeModelName } from '../active'
import { MODEL_ROLES, isModelRole, type InstalledFile, type InstalledModel, type ModelRole, type ModelStatus } from './types'

export interface ModelManagerOptions {
  /** Hub base URL (default https://huggingface.co). Tests point it at a loopback server. */
  endpoint?: string
  /** fetch used for downloads only (default: globalThis.fetch, looked up when a download starts). */
  fetchImpl?: typeof fetch
  /** Model catalog (default: the built-in one). */
  catalog?: readonly CatalogEntry[]
  /** Minimum time between progress events (default 250 ms). */
  progressIntervalMs?: number
  retry?: { maxAttempts?: number; backoffMs?: number }
}

export interface ModelDownloadProgress extends DownloadProgress {
  catalogId: string
  /** 1-based index of the file being downloaded, and how many files the model has. */
  fileIndex: number
  fileCount: number
  overallBytesDone: number
  overallBytesTotal: number
}

export interface DownloadModelOptions {
  onProgress?: (p: ModelDownloadProgress) => void
  signal?: AbortSignal
}

/** A problem to show the person (what is wrong, in words). */
export class ModelManagerError extends Error {
  override readonly name = 'ModelManagerError'
}

/** The hub now publishes something other than what was first seen for the same commit (trust-on-first-use breach). */
export class PinMismatchError extends Error {
  override readonly name = 'PinMismatchError'
}

interface Expectation {
  file: CatalogFile
  sha256: string | null
  size: number | null
  gitOid: string | null
}

interface InFlight {
  entry: CatalogEntry
  controller: AbortController
  promise: Promise<InstalledModel>
}

const STAGING = '.staging'
const TRASH = '.trash'
const STAGING_META = '.docent-staging.json'

export class ModelManager {
  readonly modelsDir: string
  readonly endpoint: string
  private readonly fetchOverride: typeof fetch | undefined
  private readonly catalog: readonly CatalogEntry[]
  private readonly progressIntervalMs: number
  private readonly retry: { maxAttempts?: number; backoffMs?: number }
  private readonly inFlight = new Map<string, InFlight>()
  private fileLock: Promise<unknown> = Promise.resolve()

  /** Touches neither the disk nor the network. */
  constructor(modelsDir: string, opts: ModelManagerOptions = {}) {
    this.modelsDir = path.resolve(modelsDir)
    this.endpoint = opts.endpoint ?? DEFAULT_HUB_ENDPOINT
    this.fetchOverride = opts.fetchImpl
    this.catalog = opts.catalog ?? CATALOG
    this.progressIntervalMs = opts.progressIntervalMs ?? 250
    this.retry = opts.retry ?? {}
  }

  get catalogEntries(): readonly CatalogEntry[] {
    return this.catalog
  }

  private get installedFile(): string {
    return path.join(this.modelsDir, 'installed.json')
  }
  private get lockFile(): string {
    return path.join(this.modelsDir, 'pins.lock.json')
  }
  private get settingsFile(): string {
    return path.join(this.modelsDir, 'settings.json')
  }

  /** Where a model of a role with a name lives (a folder, or a .gguf file for llm). */
  modelPath(role: ModelRole, name: string): string {
    return path.join(this.modelsDir, role, name)
  }

  // ---------------------------------------------------------------- status

  /** Per role: the active model, whether it is on disk, every installed model with sizes, hashes and source. Local only. */
  async status(): Promise<ModelStatus[]> {
    const [installed, settings] = await Promise.all([readInstalled(this.installedFile), readSettings(this.settingsFile)])
    const out: ModelStatus[] = []
    for (const role of MODEL_ROLES) {
      const names = await this.listOnDisk(role)
      const models: InstalledModel[] = []
      for (const name of names) {
        const rec = installed.models.find((m) => m.role === role && m.name === name)
        models.push(rec ? this.fromRecord(rec) : await this.fixture(role, name))
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

  private async listOnDisk(role: ModelRole): Promise<string[]> {
    let entries
    try {
      entries = await readdir(path.join(this.modelsDir, role), { withFileTypes: true })
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

  private fromRecord(rec: InstalledRecord): InstalledModel {
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

  /** A model on disk the manager did not install (e.g. a test fixture): sizes from stat, hashes unknown. */
  private async fixture(role: ModelRole, name: string): Promise<InstalledModel> {
    const p = this.modelPath(role, name)
    const files: InstalledFile[] =
      role === 'llm'
        ? [{ path: name, size: (await stat(p)).size, sha256: null }]
        : (await walkFiles(p)).map((f) => ({ path: f.rel, size: f.size, sha256: null }))
    return {
      role,
      name,
      path: p,
      source: 'fixture',
      catalogId: null,
      repo: null,
      revision: null,
      importedFrom: null,
      files,
      totalBytes: files.reduce((a, f) => a + f.size, 0),
      installedAt: null,
    }
  }

  // ---------------------------------------------------------------- download

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

    const promise = this.runDownload(entry, controller.signal, opts.onProgress)
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

  private async runDownload(
    entry: CatalogEntry,
    signal: AbortSignal,
    onProgress?: (p: ModelDownloadProgress) => void,
  ): Promise<InstalledModel> {
    throwIfAborted(signal)
    if (!isSafeName(entry.installName) || !entry.files.every((f) => isSafeRelativePath(f.path))) {
      throw new ModelManagerError(`The catalog entry ${entry.id} has an unsafe file name.`)
    }
    let lock = await readLock(this.lockFile)
    const locked = lock.revisions[entry.id]
    const knownRevision = entry.revision ?? (locked?.repo === entry.repo ? locked.revision : null)

    // 1. Already installed from this pin, files intact: nothing to do, no network.
    if (knownRevision !== null) {
      const installed = await readInstalled(this.installedFile)
      const rec = installed.models.find((m) => m.role === entry.role && m.name === entry.installName)
      if (rec && (await this.isIntactInstall(rec, entry, knownRevision, lock))) return this.fromRecord(rec)
    }

    // 2. From here on the network is used: the person asked for this download.
    const fetchImpl = this.fetchOverride ?? globalThis.fetch
    let revision = knownRevision
    if (revision === null) {
      revision = await resolveRevision(this.endpoint, entry.repo, 'main', fetchImpl, signal)
      const resolved = revision
      lock = await this.updateLock((l) => {
        l.revisions[entry.id] = { repo: entry.repo, revision: resolved, resolvedAt: new Date().toISOString() }
      })
    }
    const pinKey = `${entry.repo}@${revision}`
    const pinned = lock.pins[pinKey] ?? {}

    // 3. What each file must be: catalog values first, then the lock, then the hub's tree (trust on first use).
    // The tree is skipped only when the catalog itself pins every file; otherwise it is read on every download, so a
    // hub that now publishes something else than pins.lock.json recorded is caught before any byte is fetched.
    const needsTree = entry.files.some((f) => f.sha256 === null || f.size === null)
    const tree = needsTree ? await listRepoFiles(this.endpoint, entry.repo, revision, fetchImpl, signal) : null
    const expectations: Expectation[] = []
    for (const file of entry.files) {
      const p = pinned[file.path]
      const hub = tree?.get(file.path)
      if (tree !== null && hub === undefined) {
        if (file.optional) continue
        throw new ModelManagerError(`${file.path} is not in ${entry.repo} at revision ${revision}.`)
      }
      if (tree === null && p === null) continue // optional file absent at this revision
      checkAgainstHub(entry, revision, file, p ?? undefined, hub)
      expectations.push({
        file,
        sha256: file.sha256 ?? p?.sha256 ?? hub?.sha256 ?? null,
        size: file.size ?? p?.size ?? hub?.size ?? null,
        gitOid: hub && !hub.lfs && hub.gitOid ? hub.gitOid : null,
      })
    }
    for (const e of expectations) {
      if (e.sha256 === null && e.gitOid === null) {
        throw new ModelManagerError(`${entry.repo}: no published hash to check ${e.file.path} against.`)
      }
    }

    // 4. Download into .staging/<id>/, resuming what an earlier attempt left there.
    const stageDir = path.join(this.modelsDir, STAGING, entry.id)
    await this.prepareStaging(stageDir, entry, revision)
    const overallTotal = expectations.reduce((a, e) => a + (e.size ?? e.file.approxBytes), 0)
    let doneBefore = 0
    const results = new Map<string, { size: number; sha256: string }>()
    for (const [i, e] of expectations.entries()) {
      throwIfAborted(signal)
      const target = path.join(stageDir, ...e.file.path.split('/'))
      const already = await verifyExisting(target, e)
      const result =
        already ??
        (await downloadFile({
          url: resolveUrl(this.endpoint, entry.repo, revision, e.file.path),
          target,
          label: e.file.path,
          expectedSha256: e.sha256,
          expectedSize: e.size,
          expectedGitBlobSha1: e.sha256 === null ? e.gitOid : null,
          signal,
          fetchImpl,
          progressIntervalMs: this.progressIntervalMs,
          ...(this.retry.maxAttempts !== undefined ? { maxAttempts: this.retry.maxAttempts } : {}),
          ...(this.retry.backoffMs !== undefined ? { backoffMs: this.retry.backoffMs } : {}),
          onProgress: (p) =>
            onProgress?.({
              ...p,
              catalogId: entry.id,
              fileIndex: i + 1,
              fileCount: expectations.length,
              overallBytesDone: doneBefore + p.bytesDone,
              overallBytesTotal: overallTotal,
            }),
        }))
      results.set(e.file.path, { size: result.size, sha256: result.sha256 })
      doneBefore += result.size
    }
    throwIfAborted(signal)

    // 5. Everything verified: write docent.json and move the finished model into place in one rename.
    if (entry.role !== 'llm' && entry.docent) {
      await writeJsonAtomic(path.join(stageDir, 'docent.json'), entry.docent)
    }
    await unlink(path.join(stageDir, STAGING_META)).catch(() => undefined)
    const finalPath = this.modelPath(entry.role, entry.installName)
    const firstFile = expectations[0]
    if (entry.role === 'llm') {
      if (!firstFile) throw new ModelManagerError(`${entry.id} has no .gguf file.`)
      await mkdir(path.dirname(finalPath), { recursive: true })
      await rename(path.join(stageDir, firstFile.file.path), finalPath)
      await rm(stageDir, { recursive: true, force: true })
    } else {
      await this.moveIntoPlace(stageDir, finalPath)
    }

    // 6. Record: pins (first seen), the installation, and the active model if the role had none.
    const files = expectations.map((e) => {
      const r = results.get(e.file.path) as { size: number; sha256: string }
      return { path: entry.role === 'llm' ? entry.installName : e.file.path, size: r.size, sha256: r.sha256 }
    })
    await this.updateLock((l) => {
      const pins = (l.pins[pinKey] ??= {})
      for (const f of entry.files) {
        const r = results.get(f.path)
        if (r) pins[f.path] = { sha256: r.sha256, size: r.size }
        else if (f.optional && pins[f.path] === undefined) pins[f.path] = null
      }
    })
    const docentFile = entry.role !== 'llm' && entry.docent ? await fileRecord(finalPath, 'docent.json') : null
    const rec: InstalledRecord = {
      role: entry.role,
      name: entry.installName,
      source: 'download',
      catalogId: entry.id,
      repo: entry.repo,
      revision,
      importedFrom: null,
      files: docentFile ? [...files, docentFile] : files,
      installedAt: new Date().toISOString(),
    }
    await this.recordInstall(rec)
    return this.fromRecord(rec)
  }

  /** Installed from this catalog entry at this revision, hashes agree with catalog/lock, files present with their sizes. */
  private async isIntactInstall(rec: InstalledRecord, entry: CatalogEntry, revision: string, lock: PinsLock): Promise<boolean> {
    if (rec.source !== 'download' || rec.catalogId !== entry.id || rec.repo !== entry.repo || rec.revision !== revision) {
      return false
    }
    const pins = lock.pins[`${entry.repo}@${revision}`] ?? {}
    for (const f of entry.files) {
      const recordedPath = entry.role === 'llm' ? entry.installName : f.path
      const r = rec.files.find((x) => x.path === recordedPath)
      if (!r) {
        if (f.optional) continue
        return false
      }
      const want = f.sha256 ?? pins[f.path]?.sha256 ?? null
      if (want !== null && want !== r.sha256) return false
    }
    const root = this.modelPath(rec.role, rec.name)
    for (const f of rec.files) {
      const p = rec.role === 'llm' ? root : path.join(root, ...f.path.split('/'))
      try {
        if ((await stat(p)).size !== f.size) return false
      } catch {
        return false
      }
    }
    return true
  }

  private async prepareStaging(stageDir: string, entry: CatalogEntry, revision: string): Promise<void> {
    const metaPath = path.join(stageDir, STAGING_META)
    let meta: unknown
    try {
      meta = JSON.parse(await readFile(metaPath, 'utf8'))
    } catch {
      meta = null
    }
    const m = meta as { repo?: unknown; revision?: unknown } | null
    if (m === null || m.repo !== entry.repo || m.revision !== revision) {
      // Leftovers of another revision (or of nothing we know): start clean.
      await rm(stageDir, { recursive: true, force: true })
      await mkdir(stageDir, { recursive: true })
      await writeJsonAtomic(metaPath, { repo: entry.repo, revision })
    }
  }

  /** Replace a model folder with a finished one so that loaders see either the old or the new folder, never a mix. */
  private async moveIntoPlace(from: string, to: string): Promise<void> {
    await mkdir(path.dirname(to), { recursive: true })
    let old: string | null = null
    if (await exists(to)) {
      old = path.join(this.modelsDir, TRASH, `${path.basename(to)}-${randomBytes(4).toString('hex')}`)
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

  // ---------------------------------------------------------------- delete / active

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
    const installed = await readInstalled(this.installedFile)
    const recorded = installed.models.some((m) => m.role === role && m.name === name)
    if (await exists(p)) {
      const aside = path.join(this.modelsDir, TRASH, `${name}-${randomBytes(4).toString('hex')}`)
      await mkdir(path.dirname(aside), { recursive: true })
      await rename(p, aside)
      await rm(aside, { recursive: true, force: true })
    } else if (!recorded) {
      throw new ModelManagerError(`No ${role} model named "${name}" is installed.`)
    }
    await this.withFileLock(async () => {
      const inst = await readInstalled(this.installedFile)
      inst.models = inst.models.filter((m) => !(m.role === role && m.name === name))
      await this.ensureDir()
      await writeJsonAtomic(this.installedFile, inst)
      const settings = await readSettings(this.settingsFile)
      if (settings[role] === name) {
        settings[role] = null
        await writeJsonAtomic(this.settingsFile, settings)
      }
    })
  }

  /** Records the model the loaders use for a role in settings.json. The model must be on disk. Local only. */
  async setActive(role: ModelRole, name: string): Promise<void> {
    if (!isModelRole(role)) throw new ModelManagerError(`Unknown model role "${String(role)}".`)
    if (!isSafeName(name) || !(await this.listOnDisk(role)).includes(name)) {
      throw new ModelManagerError(`No ${role} model named "${name}" is installed.`)
    }
    await this.withFileLock(async () => {
      const settings = await readSettings(this.settingsFile)
      settings[role] = name
      await this.ensureDir()
      await writeJsonAtomic(this.settingsFile, settings)
    })
  }

  // ---------------------------------------------------------------- import

  /**
   * Copies a model from disk into the models folder (never moves it): a .gguf file goes to llm/, an ONNX model folder
   * (config.json + tokenizer.json + onnx/*.onnx) to reranker/ when config.json's architectures name a
   * SequenceClassification model, else to embedding/ (or to `role` when given). Every copied file is hashed while
   * copying and hashed again from the copy; the two must agree. Local only.
   */
  async importFromDisk(sourcePath: string, role?: ModelRole): Promise<InstalledModel> {
    const src = path.resolve(sourcePath)
    let st
    try {
      st = await stat(src)
    } catch {
      throw new ModelManagerError(`${src} does not exist.`)
    }
    if (role !== undefined && !isModelRole(role)) throw new ModelManagerError(`Unknown model role "${String(role)}".`)

    let targetRole: ModelRole
    let name: string
    let files: { rel: string; abs: string }[]
    if (st.isFile()) {
      if (!src.toLowerCase().endsWith('.gguf')) {
        throw new ModelManagerError(`${path.basename(src)} is not a .gguf file or an ONNX model folder.`)
      }
      if (role !== undefined && role !== 'llm') throw new ModelManagerError(`A .gguf file is an llm model, not ${role}.`)
      if (!(await hasGgufMagic(src))) throw new ModelManagerError(`${path.basename(src)} does not start like a GGUF file.`)
      targetRole = 'llm'
      name = path.basename(src)
      files = [{ rel: name, abs: src }]
    } else if (st.isDirectory()) {
      if (role === 'llm') throw new ModelManagerError('An ONNX model folder cannot be an llm model; import a .gguf file.')
      const walked = await walkFiles(src)
      const rels = new Set(walked.map((f) => f.rel))
      const missing = ['config.json', 'tokenizer.json'].filter((f) => !rels.has(f))
      if (!walked.some((f) => /^onnx\/[^/]+\.onnx$/i.test(f.rel))) missing.push('onnx/*.onnx')
      if (missing.length > 0) {
        throw new ModelManagerError(`${path.basename(src)} is not an ONNX model folder: it lacks ${missing.join(', ')}.`)
      }
      targetRole = role ?? (await detectOnnxRole(path.join(src, 'config.json')))
      name = path.basename(src)
      files = walked.map((f) => ({ rel: f.rel, abs: path.join(src, ...f.rel.split('/')) }))
    } else {
      throw new ModelManagerError(`${src} is neither a file nor a folder.`)
    }
    if (!isSafeName(name)) throw new ModelManagerError(`"${name}" cannot be used as a model name; rename it first.`)
    const finalPath = this.modelPath(targetRole, name)
    if (await exists(finalPath)) {
      throw new ModelManagerError(`A ${targetRole} model named "${name}" is already installed; delete it first.`)
    }

    const stageDir = path.join(this.modelsDir, STAGING, `import-${randomBytes(6).toString('hex')}`)
    try {
      const recorded: { path: string; size: number; sha256: string }[] = []
      for (const f of files) {
        const dest = path.join(stageDir, ...f.rel.split('/'))
        const { size, sha256 } = await copyVerified(f.abs, dest, f.rel)
        recorded.push({ path: f.rel, size, sha256 })
      }
      if (targetRole === 'llm') {
        await mkdir(path.dirname(finalPath), { recursive: true })
        await rename(path.join(stageDir, name), finalPath)
      } else {
        await this.moveIntoPlace(stageDir, finalPath)
      }
      const rec: InstalledRecord = {
        role: targetRole,
        name,
        source: 'import',
        catalogId: null,
        repo: null,
        revision: null,
        importedFrom: src,
        files: recorded,
        installedAt: new Date().toISOString(),
      }
      await this.recordInstall(rec)
      return this.fromRecord(rec)
    } finally {
      await rm(stageDir, { recursive: true, force: true })
    }
  }

  // ---------------------------------------------------------------- records

  private async recordInstall(rec: InstalledRecord): Promise<void> {
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

  private updateLock(change: (lock: PinsLock) => void): Promise<PinsLock> {
    return this.withFileLock(async () => {
      await this.ensureDir()
      const lock = await readLock(this.lockFile)
      change(lock)
      await writeJsonAtomic(this.lockFile, lock)
      return lock
    })
  }

  private withFileLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.fileLock.then(fn, fn)
    this.fileLock = run.catch(() => undefined)
    return run
  }

  private async ensureDir(): Promise<void> {
    await mkdir(this.modelsDir, { recursive: true })
  }
}

// ---------------------------------------------------------------- helpers

function checkAgainstHub(
  entry: CatalogEntry,
  revision: string,
  file: CatalogFile,
  pinned: { sha256: string; size: number } | undefined,
  hub: HubFile | undefined,
): void {
  if (!hub) return
  const where = `${entry.repo}@${revision.slice(0, 12)} ${file.path}`
  const wantSha = file.sha256 ?? pinned?.sha256 ?? null
  if (hub.sha256 !== null && wantSha !== null && hub.sha256 !== wantSha.toLowerCase()) {
    throw new PinMismatchError(
      `${where}: the hub now publishes SHA-256 ${hub.sha256}, but ${file.sha256 ? 'the catalog pins' : 'pins.lock.json recorded'} ${wantSha}. Not downloading.`,
    )
  }
  const wantSize = file.size ?? pinned?.size ?? null
  if (wantSize !== null && hub.size !== wantSize) {
    throw new PinMismatchError(`${where}: the hub now lists ${hub.size} bytes, but ${wantSize} were pinned. Not downloading.`)
  }
}

/** A finished file left in staging by an earlier, interrupted run: reuse it when its size and hash are right. */
async function verifyExisting(p: string, e: Expectation): Promise<{ size: number; sha256: string } | null> {
  if (e.sha256 === null && e.gitOid === null) return null
  let st
  try {
    st = await stat(p)
  } catch {
    return null
  }
  if (!st.isFile() || (e.size !== null && st.size !== e.size)) return null
  const sha256 = await hashFile(p)
  const ok =
    e.sha256 !== null
      ? sha256 === e.sha256.toLowerCase()
      : (await hashFile(p, 'sha1', `blob ${st.size}\0`)) === (e.gitOid ?? '').toLowerCase()
  if (ok) return { size: st.size, sha256 }
  await unlink(p).catch(() => undefined)
  return null
}

export async function hashFile(p: string, algorithm: 'sha256' | 'sha1' = 'sha256', prefix = ''): Promise<string> {
  const h = createHash(algorithm).update(prefix)
  for await (const chunk of createReadStream(p, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer)
  return h.digest('hex')
}

/** Copies while hashing the source, then hashes the copy from disk; the two hashes must agree. */
async function copyVerified(src: string, dest: string, label: string): Promise<{ size: number; sha256: string }> {
  await mkdir(path.dirname(dest), { recursive: true })
  const h = createHash('sha256')
  let size = 0
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      h.update(chunk)
      size += chunk.length
      cb(null, chunk)
    },
  })
  await pipeline(createReadStream(src, { highWaterMark: 1 << 20 }), tap, createWriteStream(dest, { flags: 'wx' }))
  const expected = h.digest('hex')
  const actual = await hashFile(dest)
  if (actual !== expected) {
    await unlink(dest).catch(() => undefined)
    throw new ChecksumError(label, expected, actual)
  }
  return { size, sha256: actual }
}

async function fileRecord(root: string, rel: string): Promise<{ path: string; size: number; sha256: string }> {
  const p = path.join(root, ...rel.split('/'))
  return { path: rel, size: (await stat(p)).size, sha256: await hashFile(p) }
}

/** Regular files under a folder, as forward-slash relative paths; skips hidden entries and symlinks. */
async function walkFiles(root: string): Promise<{ rel: string; size: number }[]> {
  const out: { rel: string; size: number }[] = []
  const visit = async (dir: string, prefix: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true })
    for (const e of entries) {
      if (e.name.startsWith('.')) continue
      const abs = path.join(dir, e.name)
      const rel = prefix ? `${prefix}/${e.name}` : e.name
      if (e.isDirectory()) await visit(abs, rel)
      else if (e.isFile()) out.push({ rel, size: (await stat(abs)).size })
    }
  }
  await visit(root, '')
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))
}

async function detectOnnxRole(configPath: string): Promise<ModelRole> {
  let config: unknown
  try {
    config = JSON.parse(await readFile(configPath, 'utf8'))
  } catch {
    throw new ModelManagerError('config.json of this model folder cannot be read as JSON.')
  }
  const archs = (config as { architectures?: unknown }).architectures
  const names = Array.isArray(archs) ? archs.filter((a): a is string => typeof a === 'string') : []
  return names.some((a) => a.includes('SequenceClassification')) ? 'reranker' : 'embedding'
}

async function hasGgufMagic(p: string): Promise<boolean> {
  const fh = await open(p, 'r')
  try {
    const buf = Buffer.alloc(4)
    const { bytesRead } = await fh.read(buf, 0, 4, 0)
    return bytesRead === 4 && buf.toString('latin1') === 'GGUF'
  } finally {
    await fh.close()
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p)
    return true
  } catch {
    return false
  }
}
