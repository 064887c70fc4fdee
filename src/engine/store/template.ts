import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import type { PGlite } from '@electric-sql/pglite'

/**
 * A new library starts from a template: an empty data folder that PGlite made and the migrations
 * brought up to date once, kept as a tarball. PGlite's own `initdb` (inside its WebAssembly build)
 * is most of a new library's first seconds (docs/benchmarks.md, "Opening a library"); unpacking the
 * tarball (PGlite's `loadDataDir`) skips it. The first new library on a machine runs `initdb` and
 * the migrations as before and then leaves the template behind, before anything is written to it;
 * every later new library unpacks it. The name says what made it (the PGlite and pgvector
 * releases, the newest migration), so another release never unpacks a template it did not make.
 * It lives beside the app's data (paths.ts templatesDir; DOCENT_TEMPLATE_DIR overrides it, `off`
 * turns templates off).
 */

// Bumped with package.json's pins: a template holds the on-disk format of exactly these releases.
export const PGLITE = '0.5.14'
export const PGVECTOR = '0.0.15'

/** Where new libraries' templates are kept, and the schema they must hold (migrations.ts SCHEMA_MARK). */
export interface TemplatePlace {
  dir: string
  schema: string
}

export function templateFile(dir: string, schema: string): string {
  return path.join(dir, `library-pglite-${PGLITE}-pgvector-${PGVECTOR}-${schema}.tar.gz`)
}

/** The template for a new library of this release, when one was left behind; null otherwise. */
export async function readTemplate(dir: string, schema: string): Promise<Blob | null> {
  const file = templateFile(dir, schema)
  if (!existsSync(file)) return null
  try {
    return new Blob([await readFile(file)])
  } catch {
    return null
  }
}

/** A template that failed to unpack is removed, so the next new library makes a good one. */
export async function dropTemplate(dir: string, schema: string): Promise<void> {
  await rm(templateFile(dir, schema), { force: true })
}

/**
 * Leaves the template behind: called on a new library right after its migrations, before anything
 * else is written. Written to a temporary name and renamed, so two processes making their first
 * library at once never leave half a file. A failure only costs the next library its head start.
 */
export async function saveTemplate(pg: PGlite, dir: string, schema: string): Promise<boolean> {
  const file = templateFile(dir, schema)
  if (existsSync(file)) return false
  try {
    await pg.exec('CHECKPOINT')
    const tar = Buffer.from(await (await pg.dumpDataDir('none')).arrayBuffer())
    await mkdir(dir, { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    // Compressed off the event loop (zlib's thread pool): the tarball is tens of MB.
    await writeFile(tmp, await promisify(gzip)(postgresFilesOnly(tar)))
    await rename(tmp, file)
    return true
  } catch {
    return false
  }
}

/**
 * The cluster's own files of a data folder's tarball (ustar: 512-byte headers, data padded to 512).
 * Docent's own files there (the owner's lock and socket, docent.*) and postmaster.pid/opts belong to
 * one library's running process: a new library unpacking them would look open by another.
 */
export function postgresFilesOnly(tar: Buffer): Buffer {
  const keep: Buffer[] = []
  let at = 0
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512)
    if (header.every((b) => b === 0)) break
    const field = (from: number, len: number) =>
      header
        .subarray(from, from + len)
        .toString('utf8')
        .replace(/\0.*$/s, '')
    const size = parseInt(field(124, 12).trim() || '0', 8)
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join('/')
    const span = 512 + Math.ceil(size / 512) * 512
    // Entries are named from the folder's root ("/PG_VERSION", "/base/1/112").
    const top = name.split('/').filter(Boolean)[0] ?? ''
    if (!/^(docent\..*|postmaster\.(pid|opts))$/.test(top)) keep.push(tar.subarray(at, at + span))
    at += span
  }
  keep.push(Buffer.alloc(1024))
  return Buffer.concat(keep)
}

/** The names in a folder now, to remove what a failed unpack left there and nothing else. */
export async function entriesOf(dir: string): Promise<Set<string>> {
  return new Set(await readdir(dir).catch(() => [] as string[]))
}

export async function removeNewEntries(dir: string, before: Set<string>): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[]))
    if (!before.has(name)) await rm(path.join(dir, name), { recursive: true, force: true })
}
