import { constants } from 'node:fs'
import { open, opendir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'

/**
 * Lists the files of a folder to import. Hidden entries, node_modules and .git are skipped and
 * counted; symbolic links are followed once when they lead to somewhere inside the folder (a link
 * back into a folder already visited is reported as a loop, not walked forever) and skipped when
 * they lead outside it: a cloned repository or a synced folder may hold a link to a credentials
 * file, and importing it would make the secret searchable and hand it to MCP clients. Unreadable
 * folders are reported, and the rest is still listed.
 */

/** The reason given for a link whose target lies outside the imported folder. */
export const OUTSIDE_LINK_REASON = 'link points outside the folder'

export interface WalkFile {
  relativePath: string
  absolutePath: string
  size: number
  mtimeMs: number
}

export interface WalkIssue {
  relativePath: string
  reason: string
  /** A copy a documentation tool keeps of another version's file (sync/plan.ts): its stored document goes. */
  copy?: boolean
}

export interface WalkResult {
  /** The folder walked, through symlinks: every file listed is inside it, and reads check again against it. */
  root: string
  files: WalkFile[]
  /** Not imported on purpose (hidden, unsupported type, too large): counted, listed, not errors. */
  skipped: WalkIssue[]
  /** Could not be read (permission denied, symlink loop, vanished). */
  failed: WalkIssue[]
  /**
   * Folders and files (relative POSIX paths, '.' for the root) that could not be looked at: what is
   * stored at or under them was not seen, so it must not be taken for deleted.
   */
  unlisted: string[]
}

export interface WalkOptions {
  isSupported(relativePath: string): boolean
  /** Size limit per file in bytes, by relative path (formats differ). */
  maxBytes(relativePath: string): number
  signal?: AbortSignal
}

const IGNORED_DIRS = new Set(['node_modules', '.git', '__pycache__'])

function toPosix(p: string): string {
  return p.split(path.sep).join('/')
}

export function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied: Docent cannot read this file'
    case 'ENOENT':
      return 'the file was deleted or moved while importing'
    case 'ELOOP':
      return 'symbolic link loop'
    case 'EISDIR':
      return 'is a folder, not a file'
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files; try again'
    default:
      return err instanceof Error ? err.message : String(err)
  }
}

/** True when `candidate` is `root` itself or lies under it (both real paths). */
export function isInsideOrAt(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate)
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel))
}

export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${Math.round(n / 1024)} KB`
}

export async function walkFolder(root: string, opts: WalkOptions): Promise<WalkResult> {
  const rootReal = await realpath(root)
  return walkInside(rootReal, rootReal, opts)
}

/** Walks `start` (a real path at or under `rootReal`), refusing links that lead out of `rootReal`. */
async function walkInside(rootReal: string, start: string, opts: WalkOptions): Promise<WalkResult> {
  const result: WalkResult = { root: rootReal, files: [], skipped: [], failed: [], unlisted: [] }
  const visited = new Set<string>([start])

  async function visit(dirAbs: string, dirRel: string): Promise<void> {
    if (opts.signal?.aborted) return
    let dir
    try {
      dir = await opendir(dirAbs)
    } catch (err) {
      result.failed.push({ relativePath: dirRel || '.', reason: `folder could not be opened: ${describeFsError(err)}` })
      result.unlisted.push(toPosix(dirRel) || '.')
      return
    }
    const entries: { name: string; isDir: boolean; isLink: boolean; isFile: boolean }[] = []
    for await (const e of dir)
      entries.push({ name: e.name, isDir: e.isDirectory(), isLink: e.isSymbolicLink(), isFile: e.isFile() })
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const e of entries) {
      const rel = dirRel ? `${dirRel}/${e.name}` : e.name
      const abs = path.join(dirAbs, e.name)
      if (e.name.startsWith('.') || IGNORED_DIRS.has(e.name)) {
        result.skipped.push({ relativePath: rel, reason: e.isDir ? 'hidden or tool folder' : 'hidden file' })
        continue
      }
      let isDir = e.isDir
      let isFile = e.isFile
      if (e.isLink) {
        try {
          const real = await realpath(abs)
          if (!isInsideOrAt(rootReal, real)) {
            result.skipped.push({ relativePath: toPosix(rel), reason: OUTSIDE_LINK_REASON })
            continue
          }
          const st = await stat(real)
          isDir = st.isDirectory()
          isFile = st.isFile()
          if (isDir) {
            if (visited.has(real) || start.startsWith(real + path.sep) || real === rootReal) {
              result.failed.push({
                relativePath: rel,
                reason: 'symbolic link loop: it points back into a folder already imported',
              })
              continue
            }
            visited.add(real)
          }
        } catch (err) {
          result.failed.push({ relativePath: rel, reason: `broken symbolic link (${describeFsError(err)})` })
          continue
        }
      } else if (isDir) {
        try {
          visited.add(await realpath(abs))
        } catch {
          // Reported when opening it.
        }
      }
      if (isDir) {
        await visit(abs, rel)
        continue
      }
      if (!isFile) {
        result.skipped.push({ relativePath: rel, reason: 'not a regular file' })
        continue
      }
      await addFile(result, toPosix(rel), abs, opts)
    }
  }

  await visit(start, '')
  return result
}

/** Sorts a regular file into files or skipped (type, size limit), as a full walk would. */
async function addFile(result: WalkResult, posixRel: string, abs: string, opts: WalkOptions): Promise<void> {
  if (!opts.isSupported(posixRel)) {
    result.skipped.push({ relativePath: posixRel, reason: 'unsupported file type' })
    return
  }
  try {
    const st = await stat(abs)
    const limit = opts.maxBytes(posixRel)
    if (st.size > limit) {
      result.skipped.push({
        relativePath: posixRel,
        reason: `larger than the ${formatBytes(limit)} limit for this type (${formatBytes(st.size)})`,
      })
      return
    }
    result.files.push({ relativePath: posixRel, absolutePath: abs, size: st.size, mtimeMs: Math.floor(st.mtimeMs) })
  } catch (err) {
    result.failed.push({ relativePath: posixRel, reason: describeFsError(err) })
    if ((err as NodeJS.ErrnoException)?.code !== 'ENOENT') result.unlisted.push(posixRel)
  }
}

/** True for a relative path a full walk never enters or lists (a hidden or tool segment anywhere). */
export function isIgnoredPath(relativePath: string): boolean {
  return relativePath.split('/').some((seg) => seg.startsWith('.') || IGNORED_DIRS.has(seg))
}

/**
 * Normalises relative paths given by a caller (a file watcher): POSIX separators, no "./", no
 * empty or escaping paths ("..", absolute), no duplicates, and none inside another one given.
 */
export function normaliseRelativePaths(paths: readonly string[]): string[] {
  const clean = new Set<string>()
  for (const raw of paths) {
    const p = path.posix
      .normalize(raw.split(path.sep).join('/'))
      .replace(/^\.\/+/, '')
      .replace(/\/+$/, '')
    if (!p || p === '.' || p.startsWith('../') || p === '..' || path.posix.isAbsolute(p)) continue
    clean.add(p)
  }
  // A folder given whole covers the paths inside it.
  const insideAnother = (p: string) => {
    const segs = p.split('/')
    for (let i = 1; i < segs.length; i++) if (clean.has(segs.slice(0, i).join('/'))) return true
    return false
  }
  return [...clean].filter((p) => !insideAnother(p)).sort()
}

export interface PathsWalkResult extends WalkResult {
  /** Given paths that no longer exist: their documents, and any under them as a folder, are gone. */
  gone: string[]
}

/**
 * Lists only some paths of a folder (relative, POSIX): each is a file, a folder (walked like a
 * full import) or gone. Hidden and tool paths are left out silently, as a full walk never lists
 * what is inside them.
 */
export async function walkPaths(root: string, relativePaths: readonly string[], opts: WalkOptions): Promise<PathsWalkResult> {
  const rootReal = await realpath(root)
  const result: PathsWalkResult = { root: rootReal, files: [], skipped: [], failed: [], unlisted: [], gone: [] }
  for (const rel of normaliseRelativePaths(relativePaths)) {
    if (opts.signal?.aborted) break
    if (isIgnoredPath(rel)) continue
    const abs = path.join(rootReal, ...rel.split('/'))
    let st
    let real
    try {
      // Through every link on the way (the path itself or a folder above it): it must end inside.
      real = await realpath(abs)
      st = await stat(real)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException)?.code
      if (code === 'ENOENT' || code === 'ENOTDIR') result.gone.push(rel)
      else {
        result.failed.push({ relativePath: rel, reason: describeFsError(err) })
        result.unlisted.push(rel)
      }
      continue
    }
    if (!isInsideOrAt(rootReal, real)) {
      result.skipped.push({ relativePath: rel, reason: OUTSIDE_LINK_REASON })
      continue
    }
    if (st.isDirectory()) {
      const sub = await walkInside(rootReal, real, opts)
      const prefix = <T extends { relativePath: string }>(r: T): T => ({
        ...r,
        relativePath: r.relativePath === '.' ? rel : `${rel}/${r.relativePath}`,
      })
      result.files.push(...sub.files.map(prefix))
      result.skipped.push(...sub.skipped.map(prefix))
      result.failed.push(...sub.failed.map(prefix))
      result.unlisted.push(...sub.unlisted.map((u) => (u === '.' ? rel : `${rel}/${u}`)))
    } else if (st.isFile()) {
      await addFile(result, rel, abs, opts)
    } else {
      result.skipped.push({ relativePath: rel, reason: 'not a regular file' })
    }
  }
  result.files.sort((a, b) => (a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : 0))
  return result
}

/** A file that must not be read; the message is the reason the person sees. */
export class ReadRefused extends Error {}

// O_NONBLOCK: a file swapped for a FIFO after the walk must not block the import on open (the
// handle is refused as not a regular file right after). Windows has no such flag.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)

/**
 * Reads a file of the folder `root` (a real path) through one file handle, checking again what the
 * walk checked, because the file may have been swapped since (for a link leading outside the
 * folder, a FIFO, or a much larger file): the handle must be a regular file, the path must resolve
 * inside the root to that same file (device and inode), and no more than `cap` bytes are read
 * whatever size the file claims.
 */
export async function readInsideRoot(root: string, file: string, cap: number): Promise<Uint8Array> {
  const fh = await open(file, OPEN_FLAGS)
  try {
    const st = await fh.stat()
    if (!st.isFile()) throw new ReadRefused('not a regular file')
    const real = await realpath(file)
    if (!isInsideOrAt(root, real)) throw new ReadRefused(OUTSIDE_LINK_REASON)
    // The path could have been swapped between open and realpath: the file opened must be the one
    // the real path names now.
    const atReal = await stat(real)
    if (atReal.dev !== st.dev || atReal.ino !== st.ino)
      throw new ReadRefused('the file changed while it was being read; import again')
    if (st.size > cap) throw new ReadRefused(`larger than the ${formatBytes(cap)} limit for this type (${formatBytes(st.size)})`)
    // One byte over the cap tells a file that grew past it from one that fits exactly.
    // Not from the shared pool: the bytes are handed over (transferred) to the parse worker.
    const buf = Buffer.allocUnsafeSlow(Math.min(st.size, cap) + 1)
    let n = 0
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n)
      if (bytesRead === 0) break
      n += bytesRead
    }
    if (n > cap) throw new ReadRefused(`larger than the ${formatBytes(cap)} limit for this type (it grew while importing)`)
    return new Uint8Array(buf.buffer, buf.byteOffset, n)
  } finally {
    await fh.close()
  }
}
