import { sha256Hex } from '../../store/ids'
import { parseIsolated, type ParsePool, type ParseProgress } from '../parsers/worker-pool'
import type { ParsedDocument } from '../types'
import { detectKind, detectVersion } from '../versions'
import { describeFsError, ReadRefused, readInsideRoot } from '../walk'
import { maxBytesFor, type PlannedFile } from './plan'

// Tests and callers that read through the folder guard name it from here, where reads happen.
export { readInsideRoot }
import type { StageTimer } from './timings'

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
    return { status: 'unreadable', reason: err instanceof ReadRefused ? err.message : describeFsError(err) }
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
  isolation: {
    signal?: AbortSignal | undefined
    pool?: ParsePool | undefined
    onProgress?: ParseProgress
    ocr?: boolean
    deferOcrOver?: number | undefined
  } = {},
): Promise<ParsedFile> {
  const rel = item.file.relativePath
  // Off the engine's thread, with a time limit: a hostile PDF cannot stall searches meanwhile.
  const parsed = await timer.time('parse', () => parseIsolated(read.bytes, rel, isolation))
  return {
    sha: read.sha,
    parsed,
    version: detectVersion(rel, parsed.meta, item.layout),
    kind: detectKind(rel, kinds, item.layout.base),
  }
}
