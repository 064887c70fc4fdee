import { opendir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'

/**
 * Lists the files of a folder to import. Hidden entries, node_modules and .git are skipped and
 * counted; symbolic links are followed once (a link back into a folder already visited is reported
 * as a loop, not walked forever); unreadable folders are reported, and the rest is still listed.
 */

export interface WalkFile {
  relativePath: string
  absolutePath: string
  size: number
  mtimeMs: number
}

export interface WalkIssue {
  relativePath: string
  reason: string
}

export interface WalkResult {
  files: WalkFile[]
  /** Not imported on purpose (hidden, unsupported type, too large): counted, listed, not errors. */
  skipped: WalkIssue[]
  /** Could not be read (permission denied, symlink loop, vanished). */
  failed: WalkIssue[]
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

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${Math.round(n / 1024)} KB`
}

export async function walkFolder(root: string, opts: WalkOptions): Promise<WalkResult> {
  const result: WalkResult = { files: [], skipped: [], failed: [] }
  const rootReal = await realpath(root)
  const visited = new Set<string>([rootReal])

  async function visit(dirAbs: string, dirRel: string): Promise<void> {
    if (opts.signal?.aborted) return
    let dir
    try {
      dir = await opendir(dirAbs)
    } catch (err) {
      result.failed.push({ relativePath: dirRel || '.', reason: describeFsError(err) })
      return
    }
    const entries: { name: string; isDir: boolean; isLink: boolean; isFile: boolean }[] = []
    for await (const e of dir) entries.push({ name: e.name, isDir: e.isDirectory(), isLink: e.isSymbolicLink(), isFile: e.isFile() })
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
          const st = await stat(abs)
          isDir = st.isDirectory()
          isFile = st.isFile()
          if (isDir) {
            const real = await realpath(abs)
            if (visited.has(real) || rootReal.startsWith(real + path.sep)) {
              result.failed.push({ relativePath: rel, reason: 'symbolic link loop: it points back into a folder already imported' })
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
      const posixRel = toPosix(rel)
      if (!opts.isSupported(posixRel)) {
        result.skipped.push({ relativePath: posixRel, reason: 'unsupported file type' })
        continue
      }
      try {
        const st = await stat(abs)
        const limit = opts.maxBytes(posixRel)
        if (st.size > limit) {
          result.skipped.push({ relativePath: posixRel, reason: `larger than the ${formatBytes(limit)} limit for this type (${formatBytes(st.size)})` })
          continue
        }
        result.files.push({ relativePath: posixRel, absolutePath: abs, size: st.size, mtimeMs: Math.floor(st.mtimeMs) })
      } catch (err) {
        result.failed.push({ relativePath: posixRel, reason: describeFsError(err) })
      }
    }
  }

  await visit(rootReal, '')
  return result
}
