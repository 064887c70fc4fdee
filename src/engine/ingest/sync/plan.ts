import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { Db } from '../../store/db'
import { documentId } from '../../store/ids'
import { documentStates, type DocumentState } from '../../store/writer'
import { formatSignature, isSupportedFile } from '../parsers/formats'
import { groupsVersions } from '../version-folders'
import { isLayoutMarker, layoutKey, NO_LAYOUT, VersionLayouts, type LayoutVerdict } from '../version-layouts'
import { normaliseRelativePaths, OUTSIDE_LINK_REASON, walkFolder, walkPaths, type WalkFile, type WalkResult } from '../walk'
import type { StageTimer } from './timings'

const MB = 1024 * 1024
/** Text formats above this are refused with a reason rather than read into memory whole. */
export const MAX_TEXT_BYTES = 20 * MB
export const MAX_BINARY_BYTES = 300 * MB

/**
 * The size limit of a file by its type: checked by the walk, and again when the file is read.
 * Office files are zips that carry pictures (a deck of 30 MB is ordinary); what they may unpack
 * to is bounded separately (zip.ts).
 */
export function maxBytesFor(rel: string): number {
  return /\.(pdf|docx|pptx|odt|ods|xlsx)$/i.test(rel) ? MAX_BINARY_BYTES : MAX_TEXT_BYTES
}

/**
 * What to do with a file found by the walk:
 * - `new`: not stored yet; import it.
 * - `changed`: stored, but chunked or parsed differently, or failed without a record of what failed; import it again.
 * - `verify`: stored and current (or failed with this build) but its size or time differs; import it
 *   unless the content hash matches, and a failed one stays failed when it does.
 * - `unchanged`: stored and current with the same size and time; not even read.
 * - `failed`: it failed with this build, and its size and time are those it failed with: not read
 *   or parsed again (a folder of 350 broken PDFs cost 15 s a sync), still listed as failed.
 */
export type FileDecision = 'new' | 'changed' | 'verify' | 'unchanged' | 'failed'

export interface PlannedFile {
  file: WalkFile
  docId: string
  decision: FileDecision
  /** The stored document's content hash, to compare a `verify` file's against. */
  storedSha: string | null
  /** What the tree's documentation layout says of the file (its version, the folder of that version). */
  layout: LayoutVerdict
  /** Stored with the document: the chunker's signature and the layout's verdict; a change of either re-imports it. */
  signature: string
  /** Why a stored failed document failed, to list it again without reading it. */
  storedError: string | null
  /** The stored document is a failure (so a `verify` whose content matches is still failed). */
  storedFailed: boolean
}

/**
 * The signature a document is stored with. A layout change (a `versions.json` added, an
 * `antora.yml` edited) changes a file's version without touching the file: its signature changes,
 * so the next sync imports it again (its front matter, which may override the layout, is read then).
 * So does a new version of the parser of the file's format (parsers/index.ts, FORMAT_VERSIONS).
 */
export function documentSignature(chunker: string, layout: LayoutVerdict, relativePath: string): string {
  const key = layoutKey(layout)
  return `${chunker}${formatSignature(relativePath)}${key ? `;layout=${key}` : ''}`
}

export interface SyncPlan {
  walk: WalkResult
  files: PlannedFile[]
  /** Stored documents no longer in the folder (within the paths synced), pruned once the import completes. */
  deleted: { path: string; id: string }[]
  /** How many documents the collection holds before this sync: a plan that deletes them all is held back. */
  stored: number
  /** Stored documents kept because the folder they are in could not be listed (not seen is not gone). */
  kept: number
}

export interface PlanOptions {
  collection: string
  /** The chunker signature documents must have been chunked with to count as current. */
  signature: string
  onlyPaths?: readonly string[] | undefined
  signal?: AbortSignal | undefined
}

/** The plan stage: walks the folder (or only the paths given) and compares what it finds with what is stored. */
export async function planSync(db: Db, root: string, opts: PlanOptions, timer: StageTimer): Promise<SyncPlan> {
  const states = await documentStates(db, opts.collection)
  const given = opts.onlyPaths ? widenForMarkers(normaliseRelativePaths(opts.onlyPaths)) : null
  const onlyPaths = given ? await widenForVersionFolders(root, given, states) : null
  const walkOptions = { isSupported: isSupportedFile, maxBytes: maxBytesFor, signal: opts.signal }
  const walk = await timer.time('walk', () =>
    onlyPaths ? walkPaths(root, onlyPaths, walkOptions) : walkFolder(root, walkOptions),
  )
  const layouts = await timer.time('walk', () => readLayouts(walk))
  const files = walk.files.map((file): PlannedFile => {
    const layout = layouts.get(file.relativePath)!
    const signature = documentSignature(opts.signature, layout, file.relativePath)
    const state = states.get(file.relativePath)
    return {
      file,
      docId: documentId(opts.collection, file.relativePath),
      decision: decide(state, file, signature),
      storedSha: state?.sha256 ?? null,
      layout,
      signature,
      storedError: state?.error ?? null,
      storedFailed: state?.status === 'failed',
    }
  })
  // A file now replaced by a link leading outside the folder is not in the folder any more: its
  // document goes, as for a deleted file; so does a copy a documentation tool keeps under an alias.
  // Other skipped files keep theirs (they are still there).
  const seen = new Set<string>([
    ...walk.files.map((f) => f.relativePath),
    ...walk.skipped.filter((s) => s.reason !== OUTSIDE_LINK_REASON && !s.copy).map((s) => s.relativePath),
  ])
  const inScope = scopeOf(onlyPaths)
  const unseen = scopeOf(walk.unlisted.includes('.') ? null : walk.unlisted)
  const deleted: SyncPlan['deleted'] = []
  let kept = 0
  for (const [p, state] of states) {
    if (seen.has(p) || !inScope(p)) continue
    // A file or folder that could not be looked at: not seen, which is not the same as gone.
    if (walk.unlisted.length > 0 && unseen(p)) kept++
    else deleted.push({ path: p, id: state.id })
  }
  return { walk, files, deleted, stored: states.size, kept }
}

/**
 * Reads the documentation layout of every file found, and takes out of the walk what the layout
 * says is not a document of its own (a copy under an alias, a redirect page): listed as skipped,
 * with the reason. A folder link the walk refused as a loop may be such an alias (mike links
 * `latest/` to its version): skipped as the copy it is, not failed.
 */
async function readLayouts(walk: WalkResult): Promise<Map<string, LayoutVerdict>> {
  const layouts = new VersionLayouts(walk.root)
  const verdicts = new Map<string, LayoutVerdict>()
  const files: WalkFile[] = []
  for (const f of walk.files) {
    const v = await layouts.verdict(f.relativePath)
    if (v.skip) walk.skipped.push({ relativePath: f.relativePath, reason: v.skip, copy: true })
    else {
      verdicts.set(f.relativePath, v)
      files.push(f)
    }
  }
  walk.files = files
  const failed = []
  for (const f of walk.failed) {
    // Only a link loop can be an alias; a folder that failed to open is not looked into again.
    const loop = f.reason.startsWith('symbolic link loop')
    const v = loop ? await layouts.verdict(`${f.relativePath}/index.html`) : NO_LAYOUT
    if (v.skip) walk.skipped.push({ relativePath: f.relativePath, reason: v.skip, copy: true })
    else failed.push(f)
  }
  walk.failed = failed
  return verdicts
}

/** A changed layout marker changes the versions of the files around it: its whole folder is synced. */
function widenForMarkers(paths: string[]): string[] | null {
  if (!paths.some(isLayoutMarker)) return paths
  const widened = paths.map((p) => (isLayoutMarker(p) ? p.split('/').slice(0, -1).join('/') : p))
  // A marker at the top of the folder: every file may change version, as in a full sync.
  return widened.includes('') ? null : normaliseRelativePaths(widened)
}

/**
 * A version folder that appears or goes (`v2/` saved beside `v1/`, `9.6/` beside `16/`) changes
 * the versions of the folders beside it (version-folders.ts): its parent folder is synced. Only a
 * folder new to the index or gone from the disk widens the sync, so saving a page inside an
 * existing version folder syncs that page alone.
 */
async function widenForVersionFolders(
  root: string,
  paths: string[],
  states: Map<string, DocumentState>,
): Promise<string[] | null> {
  let stored: Set<string> | null = null
  const present = new Map<string, Promise<boolean>>()
  const widened: string[] = []
  for (const p of paths) {
    const segs = p.split('/')
    let wide = p
    // Every segment: the watcher may name a new folder itself (api/v2) rather than its files.
    for (let i = 0; i < segs.length; i++) {
      if (!groupsVersions(segs[i]!)) continue
      const folder = segs.slice(0, i + 1).join('/')
      stored ??= storedFolders(states)
      if (!present.has(folder))
        present.set(
          folder,
          stat(path.join(root, ...folder.split('/'))).then(
            (st) => st.isDirectory(),
            () => false,
          ),
        )
      if (stored.has(folder) && (await present.get(folder))) continue
      wide = segs.slice(0, i).join('/')
      break
    }
    if (wide === '') return null
    widened.push(wide)
  }
  return normaliseRelativePaths(widened)
}

/** Every folder that holds a stored document, at any depth. */
function storedFolders(states: Map<string, DocumentState>): Set<string> {
  const folders = new Set<string>()
  for (const p of states.keys()) {
    const segs = p.split('/')
    for (let i = 1; i < segs.length; i++) folders.add(segs.slice(0, i).join('/'))
  }
  return folders
}

function decide(state: DocumentState | undefined, file: WalkFile, signature: string): FileDecision {
  if (!state) return 'new'
  const same = state.size === file.size && state.mtime_ms === file.mtimeMs
  // A failure is remembered with the content that failed and the build it failed with; one
  // without them (the file could not be read, or the failure may pass) is tried again each sync.
  if (state.status === 'failed') return state.chunker === signature && state.sha256 ? (same ? 'failed' : 'verify') : 'changed'
  if (state.chunker !== signature) return 'changed'
  return same ? 'unchanged' : 'verify'
}

/** Whether this run may prune a stored document: any in a full sync, else the paths given and what is under them. */
function scopeOf(onlyPaths: string[] | null): (rel: string) => boolean {
  if (!onlyPaths) return () => true
  const only = new Set(onlyPaths)
  return (rel) => {
    if (only.has(rel)) return true
    const segs = rel.split('/')
    for (let i = 1; i < segs.length; i++) if (only.has(segs.slice(0, i).join('/'))) return true
    return false
  }
}
