import { readFile } from 'node:fs/promises'
import { sha256Hex } from '../../store/ids'
import { parseFile } from '../parsers/index'
import type { ParsedDocument } from '../types'
import { detectKind, detectVersion } from '../versions'
import { describeFsError } from '../walk'
import type { PlannedFile } from './plan'
import type { StageTimer } from './timings'

export type ReadResult =
  | { status: 'unreadable'; reason: string }
  /** A `verify` file whose content hash matches the stored one: only its time changed. */
  | { status: 'same' }
  | { status: 'read'; bytes: Uint8Array; sha: string }

/** Reads a planned file whole; an unreadable one comes back with the reason in words, not as an error. */
export async function readPlanned(item: PlannedFile, timer: StageTimer): Promise<ReadResult> {
  let bytes: Uint8Array
  try {
    bytes = await timer.time('read', () => readFile(item.file.absolutePath))
  } catch (err) {
    return { status: 'unreadable', reason: describeFsError(err) }
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
): Promise<ParsedFile> {
  const rel = item.file.relativePath
  const parsed = await timer.time('parse', () => parseFile(read.bytes, rel))
  return { sha: read.sha, parsed, version: detectVersion(rel, parsed.meta), kind: detectKind(rel, kinds) }
}
