import { constants } from 'node:fs'
import { open, realpath, stat } from 'node:fs/promises'
import { sha256Hex } from '../../store/ids'
import { parseIsolated, type ParsePool } from '../parsers/worker-pool'
import type { ParsedDocument } from '../types'
import { detectKind, detectVersion } from '../versions'
import { describeFsError, formatBytes, isInsideOrAt, OUTSIDE_LINK_REASON } from '../walk'
import { maxBytesFor, type PlannedFile } from './plan'
import type { StageTimer } from './timings'

/** A file that must not be read; the message is the reason the person sees. */
class Refused extends Error {}

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
    if (!st.isFile()) throw new Refused('not a regular file')
    const real = await realpath(file)
    if (!isInsideOrAt(root, real)) throw new Refused(OUTSIDE_LINK_REASON)
    // The path could have been swapped between open and realpath: the file opened must be the one
    // the real path names now.
    const atReal = await stat(real)
    if (atReal.dev !== st.dev || atReal.ino !== st.ino)
      throw new Refused('the file changed while it was being read; import again')
    if (st.size > cap) throw new Refused(`larger than the ${formatBytes(cap)} limit for this type (${formatBytes(st.size)})`)
    // One byte over the cap tells a file that grew past it from one that fits exactly.
    // Not from the shared pool: the bytes are handed over (transferred) to the parse worker.
    const buf = Buffer.allocUnsafeSlow(Math.min(st.size, cap) + 1)
    let n = 0
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n)
      if (bytesRead === 0) break
      n += bytesRead
    }
    if (n > cap) throw new Refused(`larger than the ${formatBytes(cap)} limit for this type (it grew while importing)`)
    return new Uint8Array(buf.buffer, buf.byteOffset, n)
  } finally {
    await fh.close()
  }
}

export type ReadResult =
  | { status: 'unreadable'; reason: string }
  /** A `verify` file whose content hash matches the stored one: only its time changed. */
  | { status: 'same' }
  | { status: 'read'; bytes: Uint8Array; sha: string }

/** Reads a planned file whole; an unreadable one comes back with the reason in words, not as an error. */
export async function readPlanned(root: string, item: PlannedFile, timer: StageTimer): Promise<ReadResult> {
  let bytes: Uint8Array
  try {
    bytes = await timer.time('read', () => readInsideRoot(root, item.file.absolutePath, maxBytesFor(item.file.relativePath)))
  } catch (err) {
    return { status: 'unreadable', reason: err instanceof Refused ? err.message : describeFsError(err) }
  }
  const sha = sha256Hex(bytes)
  if (item.decision === 'verify' && item.storedSha === sha) return { status: 'same' }
  return { status: 'read', bytes, sha }
}

export interface ParsedFile {
  sha: string
  parsed: ParsedDocument
  version: string | null
  kind: string | null
}

/** The parse stage: the document's structure, version and source kind. Throws with a reason for the person when the format cannot be read. */
export async function parsePlanned(
  item: PlannedFile,
  read: { bytes: Uint8Array; sha: string },
  kinds: Record<string, string> | undefined,
  timer: StageTimer,
  isolation: { signal?: AbortSignal | undefined; pool?: ParsePool | undefined } = {},
): Promise<ParsedFile> {
  const rel = item.file.relativePath
  // Off the engine's thread, with a time limit: a hostile PDF cannot stall searches meanwhile.
  const parsed = await timer.time('parse', () => parseIsolated(read.bytes, rel, isolation))
  return { sha: read.sha, parsed, version: detectVersion(rel, parsed.meta), kind: detectKind(rel, kinds) }
}
