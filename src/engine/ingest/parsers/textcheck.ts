import { ParseError } from '../types'

/**
 * Decode the bytes of a text-format file (Markdown, plain text, HTML) to a string, refusing files
 * that are not text: NUL bytes mean binary content, and the bytes must be valid UTF-8 (or UTF-16
 * with a byte-order mark). A UTF-8 byte-order mark is stripped. Line endings are left as they are.
 */
export function checkText(bytes: Uint8Array): string {
  // UTF-16 with a BOM: decode strictly; NUL checks happen on the decoded text.
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    const le = bytes[0] === 0xff
    let text: string
    try {
      text = new TextDecoder(le ? 'utf-16le' : 'utf-16be', { fatal: true, ignoreBOM: false }).decode(bytes)
    } catch {
      throw new ParseError(
        `not valid UTF-16 text (the file starts with a UTF-16 byte-order mark but its content does not decode)`,
      )
    }
    if (text.includes('\u0000')) throw new ParseError('binary content in a text file (it contains NUL characters)')
    return text
  }
  const nul = bytes.indexOf(0)
  if (nul !== -1) throw new ParseError(`binary content in a text file (NUL byte at byte ${nul})`)
  try {
    // ignoreBOM: false (the default) strips a leading UTF-8 BOM.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    const at = firstInvalidUtf8(bytes)
    throw new ParseError(`not valid UTF-8 text (byte ${at}); save the file as UTF-8 and try again`)
  }
}

/** Offset (0-based) of the first byte that starts an invalid UTF-8 sequence; bytes.length if none. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0
  const n = b.length
  while (i < n) {
    const c = b[i]!
    if (c < 0x80) {
      i++
      continue
    }
    let need: number
    let min: number
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1
      min = 0x80
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2
      min = 0x800
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3
      min = 0x10000
    } else return i
    let cp = c & (need === 1 ? 0x1f : need === 2 ? 0x0f : 0x07)
    for (let k = 1; k <= need; k++) {
      const cc = b[i + k]
      if (cc === undefined || (cc & 0xc0) !== 0x80) return i
      cp = (cp << 6) | (cc & 0x3f)
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i
    i += need + 1
  }
  return n
}
