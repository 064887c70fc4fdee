import { mkdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { isSafeName, isSafeRelativePath, type CatalogEntry, type CatalogFile } from './catalog'
import { downloadFile, throwIfAborted, type DownloadProgress } from './download'
import { ModelManagerError, PinMismatchError } from './errors'
import { fileRecord, hashFile } from './files'
import { STAGING, type ModelFolder } from './folder'
import { listRepoFiles, resolveRevision, resolveUrl, type HubFile } from './hub'
import { envProxyFetch, type DownloadFetch } from './network'
import { readInstalled, readLock, writeJsonAtomic, type InstalledRecord, type PinsLock } from './store'
import type { InstalledModel } from './types'

/**
 * Installing a catalog model from the hub: pin the revision, check every file against the catalog,
 * the lock and the hub (trust on first use), download into .staging (resuming what an interrupted
 * run left), verify, then move the model into place in one rename. The manager's only network use.
 */

const STAGING_META = '.docent-staging.json'

/** Where and how to reach the hub. */
export interface HubAccess {
  endpoint: string
  /**
   * fetch for downloads; undefined: network.ts's envProxyFetch, which reads the proxy variables when a
   * download starts and otherwise calls globalThis.fetch.
   */
  fetchOverride: DownloadFetch | undefined
  /** Minimum time between progress events. */
  progressIntervalMs: number
  retry: { maxAttempts?: number; backoffMs?: number }
}

export interface ModelDownloadProgress extends DownloadProgress {
  catalogId: string
  /** 1-based index of the file being downloaded, and how many files the model has. */
  fileIndex: number
  fileCount: number
  overallBytesDone: number
  overallBytesTotal: number
}

interface Expectation {
  file: CatalogFile
  sha256: string | null
  size: number | null
  gitOid: string | null
}

type FileResult = { size: number; sha256: string }

export async function downloadModel(
  folder: ModelFolder,
  hub: HubAccess,
  entry: CatalogEntry,
  signal: AbortSignal,
  onProgress?: (p: ModelDownloadProgress) => void,
): Promise<InstalledModel> {
  throwIfAborted(signal)
  if (!isSafeName(entry.installName) || !entry.files.every((f) => isSafeRelativePath(f.path))) {
    throw new ModelManagerError(`The catalog entry ${entry.id} has an unsafe file name.`)
  }
  let lock = await readLock(folder.lockFile)
  const locked = lock.revisions[entry.id]
  const knownRevision = entry.revision ?? (locked?.repo === entry.repo ? locked.revision : null)

  // 1. Already installed from this pin, files intact: nothing to do, no network.
  if (knownRevision !== null) {
    const installed = await readInstalled(folder.installedFile)
    const rec = installed.models.find((m) => m.role === entry.role && m.name === entry.installName)
    if (rec && (await isIntactInstall(folder, rec, entry, knownRevision, lock))) return folder.fromRecord(rec)
  }

  // 2. From here on the network is used: the person asked for this download.
  const fetchImpl = hub.fetchOverride ?? envProxyFetch(process.env)
  let revision = knownRevision
  if (revision === null) {
    revision = await resolveRevision(hub.endpoint, entry.repo, 'main', fetchImpl, signal)
    const resolved = revision
    lock = await folder.updateLock((l) => {
      l.revisions[entry.id] = { repo: entry.repo, revision: resolved, resolvedAt: new Date().toISOString() }
    })
  }

  // 3. What each file must be: catalog values first, then the lock, then the hub's tree (trust on first use).
  // The tree is skipped only when the catalog itself pins every file; otherwise it is read on every download, so a
  // hub that now publishes something else than pins.lock.json recorded is caught before any byte is fetched.
  const needsTree = entry.files.some((f) => f.sha256 === null || f.size === null)
  const tree = needsTree ? await listRepoFiles(hub.endpoint, entry.repo, revision, fetchImpl, signal) : null
  const expectations = expectedFiles(entry, revision, lock.pins[`${entry.repo}@${revision}`] ?? {}, tree)

  // 4. Download into .staging/<id>/, resuming what an earlier attempt left there.
  const stageDir = path.join(folder.dir, STAGING, entry.id)
  await prepareStaging(stageDir, entry, revision)
  const download = { hub, entry, revision, fetchImpl, signal, onProgress }
  const results = await downloadFiles(stageDir, expectations, download)
  throwIfAborted(signal)

  // 5. Everything verified: write docent.json and move the finished model into place in one rename.
  const finalPath = await installStaged(folder, entry, stageDir, expectations)

  // 6. Record: pins (first seen), the installation, and the active model if the role had none.
  return recordDownload(folder, entry, revision, expectations, results, finalPath)
}

/** Every file to fetch with the hashes and size it must have; throws when one is missing or cannot be checked. */
function expectedFiles(
  entry: CatalogEntry,
  revision: string,
  pinned: PinsLock['pins'][string],
  tree: Map<string, HubFile> | null,
): Expectation[] {
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
  return expectations
}

interface FileDownload {
  hub: HubAccess
  entry: CatalogEntry
  revision: string
  fetchImpl: DownloadFetch
  signal: AbortSignal
  onProgress: ((p: ModelDownloadProgress) => void) | undefined
}

/** Each file into stageDir, one after the other, reusing those an earlier run finished; size and hash by path. */
async function downloadFiles(stageDir: string, expectations: Expectation[], d: FileDownload): Promise<Map<string, FileResult>> {
  const { hub, entry, signal } = d
  const overallTotal = expectations.reduce((a, e) => a + (e.size ?? e.file.approxBytes), 0)
  let doneBefore = 0
  const results = new Map<string, FileResult>()
  for (const [i, e] of expectations.entries()) {
    throwIfAborted(signal)
    const target = path.join(stageDir, ...e.file.path.split('/'))
    const already = await verifyExisting(target, e)
    const result =
      already ??
      (await downloadFile({
        url: resolveUrl(hub.endpoint, entry.repo, d.revision, e.file.path),
        target,
        label: e.file.path,
        expectedSha256: e.sha256,
        expectedSize: e.size,
        expectedGitBlobSha1: e.sha256 === null ? e.gitOid : null,
        signal,
        fetchImpl: d.fetchImpl,
        progressIntervalMs: hub.progressIntervalMs,
        maxAttempts: hub.retry.maxAttempts,
        backoffMs: hub.retry.backoffMs,
        onProgress: (p) =>
          d.onProgress?.({
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
  return results
}

/** The verified staging folder becomes the installed model (an LLM is its one .gguf file); returns where it is. */
async function installStaged(
  folder: ModelFolder,
  entry: CatalogEntry,
  stageDir: string,
  expectations: Expectation[],
): Promise<string> {
  if (entry.role !== 'llm' && entry.docent) {
    await writeJsonAtomic(path.join(stageDir, 'docent.json'), entry.docent)
  }
  await unlink(path.join(stageDir, STAGING_META)).catch(() => undefined)
  const finalPath = folder.modelPath(entry.role, entry.installName)
  const firstFile = expectations[0]
  if (entry.role === 'llm') {
    if (!firstFile) throw new ModelManagerError(`${entry.id} has no .gguf file.`)
    await mkdir(path.dirname(finalPath), { recursive: true })
    await rename(path.join(stageDir, firstFile.file.path), finalPath)
    await rm(stageDir, { recursive: true, force: true })
  } else {
    await folder.moveIntoPlace(stageDir, finalPath)
  }
  return finalPath
}

/** Pins the files first seen at this revision (and optional files found absent), then records the installation. */
async function recordDownload(
  folder: ModelFolder,
  entry: CatalogEntry,
  revision: string,
  expectations: Expectation[],
  results: Map<string, FileResult>,
  finalPath: string,
): Promise<InstalledModel> {
  const files = expectations.map((e) => {
    const r = results.get(e.file.path) as FileResult
    return { path: entry.role === 'llm' ? entry.installName : e.file.path, size: r.size, sha256: r.sha256 }
  })
  await folder.updateLock((l) => {
    const pins = (l.pins[`${entry.repo}@${revision}`] ??= {})
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
  await folder.recordInstall(rec)
  return folder.fromRecord(rec)
}

/** Installed from this catalog entry at this revision, hashes agree with catalog/lock, files present with their sizes. */
async function isIntactInstall(
  folder: ModelFolder,
  rec: InstalledRecord,
  entry: CatalogEntry,
  revision: string,
  lock: PinsLock,
): Promise<boolean> {
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
  const root = folder.modelPath(rec.role, rec.name)
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

async function prepareStaging(stageDir: string, entry: CatalogEntry, revision: string): Promise<void> {
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
