import { ParseError, type ParsedDocument } from '../types'

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

/**
 * Characters that carry no readable text: C0 and C1 controls (but tab, line feed and carriage
 * return), DEL, private-use code points (BMP and planes 15-16), U+FFFD and the non-characters
 * U+FFFE/U+FFFF. A PDF font without a usable ToUnicode map gives these for its glyphs: its glyph
 * codes themselves (C0 controls) or the private-use code points of a symbol font.
 */
// eslint-disable-next-line no-control-regex
const NO_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ue000-\uf8ff\ufffd\ufffe\uffff\u{f0000}-\u{10ffff}]/gu
/** White space but the vertical tab and form feed, which a PDF text layer of glyph codes is full of. */
// eslint-disable-next-line no-control-regex
const BLANK = /[^\S\u000b\u000c]/g
const PAIRS = /[\ud800-\udbff][\udc00-\udfff]/g

/** Share (0..1) of a text's non-blank characters that carry no readable text (see NO_TEXT); 0 for a blank text. */
export function unreadableShare(text: string): number {
  const bad = text.match(NO_TEXT)?.length ?? 0
  if (bad === 0) return 0
  const all = text.length - (text.match(PAIRS)?.length ?? 0) - (text.match(BLANK)?.length ?? 0)
  return all > 0 ? bad / all : 0
}

/**
 * Whether a page's (or any) text is mostly characters that carry no readable text: more than half
 * of its non-blank characters. Such a text layer is not text at all, and only text recognition of
 * the page image can read it. A few stray ones in real text (an icon, a ligature without a
 * mapping) do not make a page unreadable; they are removed (stripControls).
 */
export function isUnreadableText(text: string): boolean {
  return unreadableShare(text) > 0.5
}

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/g

/**
 * Removes control characters (C0 but tab, line feed and carriage return; DEL; C1) from text on its
 * way to the index: PostgreSQL refuses U+0000 outright, and the others are noise in search
 * results. A form feed or vertical tab (a page or line break in plain text) becomes a line feed.
 */
export function stripControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(CONTROLS, '').replace(/[\u000b\u000c]/g, '\n')
}

// eslint-disable-next-line no-control-regex
const HAS_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/

/**
 * The document with control characters removed from its title, headings and block text (see
 * stripControls), whichever parser read it. Parsers may pass them on from the file (an HTML
 * `&#1;`, a YAML `"\0"` title, a PDF glyph without a mapping); this is where they stop.
 */
export function withoutControls(doc: ParsedDocument): ParsedDocument {
  const dirty = (s: string | null) => s !== null && HAS_CONTROLS.test(s)
  const needs = dirty(doc.title) || doc.sections.some((s) => s.headings.some(dirty) || s.blocks.some((b) => dirty(b.text)))
  if (!needs) return doc
  const clean = (s: string) => (HAS_CONTROLS.test(s) ? stripControls(s) : s)
  return {
    ...doc,
    title: doc.title === null ? null : clean(doc.title).trim() || null,
    sections: doc.sections.map((s) => ({
      ...s,
      headings: s.headings.map((h) => clean(h).replace(/\s+/g, ' ').trim()).filter(Boolean),
      blocks: s.blocks.map((b) => ({ ...b, text: clean(b.text) })).filter((b) => b.text.trim() !== ''),
    })),
  }
}
