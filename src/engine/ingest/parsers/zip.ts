import yauzl, { type Entry, type ZipFile } from 'yauzl'
import { ParseError } from '../types'

/**
 * Reading a ZIP archive (via yauzl) just enough to vet it before another library unpacks it: the
 * entries with their declared sizes, and unpacking one entry with a hard output cap, so that an
 * entry lying about its size cannot blow up memory.
 */

export interface ZipEntry {
  name: string
  compressedSize: number
  uncompressedSize: number
  encrypted: boolean
}

export interface ZipArchive {
  entries: ZipEntry[]
  /** Unpack one entry, refusing output beyond its declared size (or `cap`). */
  read(entry: ZipEntry, cap: number, label?: string): Promise<Uint8Array>
}

const MAX_TOTAL = 200 * 1024 * 1024
const MAX_RATIO = 200
const RATIO_MIN_SIZE = 10 * 1024 * 1024
const mb = (n: number) => `${Math.round(n / (1024 * 1024))} MB`

/** What a zip-based document (DOCX, EPUB) may unpack to in all: 200 MB. */
export const MAX_UNPACKED = MAX_TOTAL

/**
 * Refuses an archive whose declared sizes would unpack to far too much: over 200 MB in all, or a
 * large entry compressed more than 200:1 (a zip bomb). `what` names the format in the reason.
 */
export function checkUnpackedSizes(entries: ZipEntry[], what: string): void {
  let total = 0
  for (const e of entries) {
    total += e.uncompressedSize
    if (e.uncompressedSize > RATIO_MIN_SIZE && e.uncompressedSize / Math.max(1, e.compressedSize) > MAX_RATIO) {
      throw new ParseError(
        `${what} looks like a zip bomb (${e.name} would unpack ${mb(e.uncompressedSize)} from ${e.compressedSize} bytes)`,
      )
    }
  }
  if (total > MAX_TOTAL) throw new ParseError(`${what} is too large when unpacked (${mb(total)}; the limit is ${mb(MAX_TOTAL)})`)
}

export function looksLikeZip(b: Uint8Array): boolean {
  return (
    b.length >= 4 &&
    b[0] === 0x50 &&
    b[1] === 0x4b &&
    (b[2] === 3 || b[2] === 5 || b[2] === 7) &&
    (b[3] === 4 || b[3] === 6 || b[3] === 8)
  )
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** Open an archive and list its entries; a malformed archive throws `fail(reason)`. */
export async function openZip(b: Uint8Array, fail: (reason: string) => ParseError, maxEntries = 20_000): Promise<ZipArchive> {
  let zip: ZipFile
  try {
    // lazyEntries: the directory is walked one entry at a time, so maxEntries is checked before it is.
    // Entry sizes are validated by read() below rather than by yauzl, which would refuse a stored
    // entry's size mismatch while listing, before the caller's total-size check could name the problem.
    zip = await yauzl.fromBufferPromise(Buffer.from(b.buffer, b.byteOffset, b.byteLength), {
      lazyEntries: true,
      validateEntrySizes: false,
      strictFileNames: false,
    })
  } catch (e) {
    throw fail(message(e))
  }
  if (zip.entryCount > maxEntries) {
    zip.close()
    throw fail(`too many entries in the archive (${zip.entryCount})`)
  }
  const raw = await new Promise<Entry[]>((resolve, reject) => {
    const list: Entry[] = []
    zip.on('entry', (e: Entry) => {
      list.push(e)
      zip.readEntry()
    })
    zip.on('end', () => resolve(list))
    zip.on('error', (e: unknown) => reject(fail(message(e))))
    zip.readEntry()
  })
  const byEntry = new Map<ZipEntry, Entry>()
  const entries = raw.map((e) => {
    const entry: ZipEntry = {
      name: e.fileName,
      compressedSize: e.compressedSize,
      uncompressedSize: e.uncompressedSize,
      encrypted: e.isEncrypted(),
    }
    byEntry.set(entry, e)
    return entry
  })
  const read = (entry: ZipEntry, cap: number, label = 'archive'): Promise<Uint8Array> => {
    const e = byEntry.get(entry)
    if (!e) return Promise.reject(fail(`no entry ${entry.name}`))
    if (entry.encrypted) return Promise.reject(fail(`entry ${entry.name} is encrypted`))
    const limit = Math.min(entry.uncompressedSize, cap)
    if (entry.uncompressedSize > cap) {
      return Promise.reject(
        new ParseError(`${label} looks like a zip bomb (${entry.name} declares more than the ${cap} bytes allowed)`),
      )
    }
    return new Promise((resolve, reject) => {
      zip.openReadStream(e, (err, stream) => {
        if (err) return reject(fail(`entry ${entry.name} cannot be read (${err.message})`))
        const parts: Buffer[] = []
        let total = 0
        stream.on('data', (chunk: Buffer) => {
          total += chunk.length
          // Stop at the first chunk past the declared size: a lying entry never gets to fill memory.
          if (total > limit) {
            stream.destroy()
            reject(
              new ParseError(
                `${label} looks like a zip bomb (${entry.name} unpacks to more than the ${limit} bytes it declares)`,
              ),
            )
            return
          }
          parts.push(chunk)
        })
        stream.on('error', (se: Error) => reject(fail(`entry ${entry.name} is damaged (${se.message})`)))
        stream.on('end', () => {
          if (total !== entry.uncompressedSize) {
            reject(fail(`entry ${entry.name} is damaged (${total} bytes instead of the ${entry.uncompressedSize} declared)`))
          } else resolve(new Uint8Array(Buffer.concat(parts)))
        })
      })
    })
  }
  return { entries, read }
}
