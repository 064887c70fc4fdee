import { inflateRawSync } from 'node:zlib'
import { ParseError } from '../types'

/**
 * Just enough ZIP reading to vet an archive before a library unpacks it: the central directory's
 * entries with their declared sizes, and inflating one entry with a hard output cap (so an entry
 * that lies about its size cannot blow up memory).
 */

export interface ZipEntry {
  name: string
  method: number
  compressedSize: number
  uncompressedSize: number
  localHeaderOffset: number
  encrypted: boolean
}

const EOCD_SIG = 0x06054b50
const ZIP64_LOCATOR_SIG = 0x07064b50
const ZIP64_EOCD_SIG = 0x06064b50
const CEN_SIG = 0x02014b50
const LOC_SIG = 0x04034b50

export function looksLikeZip(b: Uint8Array): boolean {
  return (
    b.length >= 4 &&
    b[0] === 0x50 &&
    b[1] === 0x4b &&
    (b[2] === 3 || b[2] === 5 || b[2] === 7) &&
    (b[3] === 4 || b[3] === 6 || b[3] === 8)
  )
}

/** Entries of the central directory; throws `fail(reason)` on a malformed archive. */
export function readZipDirectory(b: Uint8Array, fail: (reason: string) => ParseError, maxEntries = 20_000): ZipEntry[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const n = b.length
  if (n < 22) throw fail('too short to be a zip archive')
  // End of central directory: within the last 64 KiB + 22 bytes (comment length is 16-bit).
  let eocd = -1
  for (let i = n - 22; i >= Math.max(0, n - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === EOCD_SIG) {
      eocd = i
      break
    }
  }
  if (eocd === -1) throw fail('no zip end-of-directory record')
  let count = dv.getUint16(eocd + 10, true)
  let cdSize = dv.getUint32(eocd + 12, true)
  let cdOffset = dv.getUint32(eocd + 16, true)
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const loc = eocd - 20
    if (loc < 0 || dv.getUint32(loc, true) !== ZIP64_LOCATOR_SIG) throw fail('damaged zip64 directory')
    const z64 = Number(dv.getBigUint64(loc + 8, true))
    if (z64 < 0 || z64 + 56 > n || dv.getUint32(z64, true) !== ZIP64_EOCD_SIG) throw fail('damaged zip64 directory')
    count = Number(dv.getBigUint64(z64 + 32, true))
    cdSize = Number(dv.getBigUint64(z64 + 40, true))
    cdOffset = Number(dv.getBigUint64(z64 + 48, true))
  }
  if (count > maxEntries) throw fail(`too many entries in the archive (${count})`)
  if (cdOffset + cdSize > n) throw fail('the zip directory points outside the file')
  const entries: ZipEntry[] = []
  let p = cdOffset
  for (let k = 0; k < count; k++) {
    if (p + 46 > n || dv.getUint32(p, true) !== CEN_SIG) throw fail('damaged zip directory entry')
    const flags = dv.getUint16(p + 8, true)
    const method = dv.getUint16(p + 10, true)
    let compressedSize = dv.getUint32(p + 20, true)
    let uncompressedSize = dv.getUint32(p + 24, true)
    const nameLen = dv.getUint16(p + 28, true)
    const extraLen = dv.getUint16(p + 30, true)
    const commentLen = dv.getUint16(p + 32, true)
    let localHeaderOffset = dv.getUint32(p + 42, true)
    if (p + 46 + nameLen + extraLen > n) throw fail('damaged zip directory entry')
    const name = new TextDecoder('utf-8').decode(b.subarray(p + 46, p + 46 + nameLen))
    // Zip64 extended information in the extra field.
    let e = p + 46 + nameLen
    const eEnd = e + extraLen
    while (e + 4 <= eEnd) {
      const id = dv.getUint16(e, true)
      const size = dv.getUint16(e + 2, true)
      if (id === 0x0001) {
        let q = e + 4
        const readBig = () => {
          const v = q + 8 <= e + 4 + size ? Number(dv.getBigUint64(q, true)) : null
          q += 8
          return v
        }
        if (uncompressedSize === 0xffffffff) uncompressedSize = readBig() ?? uncompressedSize
        if (compressedSize === 0xffffffff) compressedSize = readBig() ?? compressedSize
        if (localHeaderOffset === 0xffffffff) localHeaderOffset = readBig() ?? localHeaderOffset
      }
      e += 4 + size
    }
    entries.push({ name, method, compressedSize, uncompressedSize, localHeaderOffset, encrypted: (flags & 1) === 1 })
    p += 46 + nameLen + extraLen + commentLen
  }
  return entries
}

/** Inflate one entry, refusing output beyond its declared size (or `cap`). */
export function readZipEntry(
  b: Uint8Array,
  entry: ZipEntry,
  fail: (reason: string) => ParseError,
  cap: number,
  label = 'archive',
): Uint8Array {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const p = entry.localHeaderOffset
  if (p + 30 > b.length || dv.getUint32(p, true) !== LOC_SIG) throw fail(`damaged entry ${entry.name}`)
  const start = p + 30 + dv.getUint16(p + 26, true) + dv.getUint16(p + 28, true)
  const end = start + entry.compressedSize
  if (end > b.length) throw fail(`entry ${entry.name} runs past the end of the file`)
  const data = b.subarray(start, end)
  if (entry.encrypted) throw fail(`entry ${entry.name} is encrypted`)
  const limit = Math.min(entry.uncompressedSize, cap)
  if (entry.method === 0) {
    if (data.length > limit)
      throw new ParseError(`${label} looks like a zip bomb (${entry.name} is larger than the ${limit} bytes it declares)`)
    return data
  }
  if (entry.method !== 8) throw fail(`entry ${entry.name} uses an unsupported compression method (${entry.method})`)
  try {
    // maxOutputLength makes zlib stop (with an error) instead of producing more than declared.
    return inflateRawSync(data, { maxOutputLength: Math.max(1, limit) })
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === 'ERR_BUFFER_TOO_LARGE' || /larger than|maxOutputLength|too large/i.test(String((err as Error).message))) {
      throw new ParseError(`${label} looks like a zip bomb (${entry.name} unpacks to more than the ${limit} bytes it declares)`)
    }
    throw fail(`entry ${entry.name} is damaged (${(err as Error).message})`)
  }
}
