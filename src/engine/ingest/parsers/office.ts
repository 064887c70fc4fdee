import path from 'node:path'
import { ParseError } from '../types'
import { xmlWalk } from './xml'
import { checkUnpackedSizes, looksLikeZip, MAX_UNPACKED, openZip, type ZipArchive, type ZipEntry } from './zip'

/**
 * What the office formats (PPTX, XLSX: Office Open XML; ODT, ODS: OpenDocument) share: refusing
 * what is not the format with a reason (old binary Office files, password-protected ones, a zip
 * that is another format), the zip vetting of DOCX and EPUB (declared sizes, capped reads), and
 * reading a part as text.
 */

export interface OfficeKind {
  /** 'PPTX', 'XLSX', 'ODT', 'ODS'. */
  label: string
  /** The part every file of the kind has. */
  main: string
  /** For Office Open XML: the old binary format, e.g. { app: 'PowerPoint presentation', ext: '.ppt' }. */
  old?: { app: string; ext: string }
  /** For OpenDocument: the media type of its `mimetype` entry. */
  mimetype?: string
}

const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]
/** The stream an encrypted Office Open XML file keeps its package in (its name is UTF-16 in the OLE directory). */
const ENCRYPTED_PACKAGE = Buffer.from('EncryptedPackage', 'utf16le')

/** What a zip is, from the parts that identify each format (for "it is a ..." reasons). */
const SIGNATURES: [string, string][] = [
  ['word/document.xml', 'a Word document (DOCX)'],
  ['ppt/presentation.xml', 'a PowerPoint presentation (PPTX)'],
  ['xl/workbook.xml', 'an Excel workbook (XLSX)'],
  ['META-INF/container.xml', 'an EPUB book'],
]
const ODF_TYPES: Record<string, string> = {
  'application/vnd.oasis.opendocument.text': 'an OpenDocument text (ODT)',
  'application/vnd.oasis.opendocument.spreadsheet': 'an OpenDocument spreadsheet (ODS)',
  'application/vnd.oasis.opendocument.presentation': 'an OpenDocument presentation (ODP)',
  'application/vnd.oasis.opendocument.graphics': 'an OpenDocument drawing (ODG)',
  // EPUB borrowed the stored `mimetype` entry from OpenDocument.
  'application/epub+zip': 'an EPUB book',
}

export const decodeText = (b: Uint8Array) => new TextDecoder('utf-8').decode(b).replace(/^\uFEFF/, '')

/** A part's text (capped at what the whole archive may unpack to); null when the archive has no such part. */
export async function readPart(zip: ZipArchive, name: string, label: string): Promise<string | null> {
  const entry = findEntry(zip, name)
  return entry ? decodeText(await zip.read(entry, MAX_UNPACKED, label)) : null
}

/**
 * What a part read whole into a tree (a slide, an ODT's content.xml) may unpack to: a tree takes
 * several times its text in memory. Spreadsheets' sheets are streamed and need no such limit.
 */
export const MAX_TREE_PART = 64 * 1024 * 1024

/** A part for xmlTree: as readPart, refused with a reason beyond MAX_TREE_PART. */
export async function readTreePart(zip: ZipArchive, name: string, label: string): Promise<string | null> {
  const entry = findEntry(zip, name)
  if (!entry) return null
  if (entry.uncompressedSize > MAX_TREE_PART)
    throw new ParseError(
      `${label} part ${name} is too large to read (${Math.round(entry.uncompressedSize / (1024 * 1024))} MB unpacked; the limit is ${MAX_TREE_PART / (1024 * 1024)} MB)`,
    )
  return decodeText(await zip.read(entry, MAX_TREE_PART, label))
}

export function findEntry(zip: ZipArchive, name: string): ZipEntry | undefined {
  return zip.entries.find((e) => e.name === name)
}

async function odfMimetype(zip: ZipArchive): Promise<string | null> {
  const entry = findEntry(zip, 'mimetype')
  if (!entry || entry.uncompressedSize > 200) return null
  return decodeText(await zip.read(entry, 200)).trim()
}

/** Open a file of `kind`, or refuse it saying what it is instead. */
export async function openOffice(bytes: Uint8Array, kind: OfficeKind): Promise<ZipArchive> {
  const invalid = (reason: string) => new ParseError(`file is not a valid ${kind.label} (${reason})`)
  if (OLE_MAGIC.every((v, i) => bytes[i] === v)) {
    // Both old binary Office files and password-protected new ones are OLE compound files; only
    // the encrypted ones hold an EncryptedPackage stream.
    if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(ENCRYPTED_PACKAGE))
      throw new ParseError(
        `file is a password-protected ${kind.label} (it is encrypted); remove the password and import it again`,
      )
    if (kind.old)
      throw new ParseError(`file is an old-format ${kind.old.app} (${kind.old.ext}); save it as .${kind.label.toLowerCase()}`)
    throw invalid('it is an old binary Office file')
  }
  if (!looksLikeZip(bytes)) throw invalid('not a zip archive')
  const zip = await openZip(bytes, invalid)
  checkUnpackedSizes(zip.entries, kind.label)
  const mimetype = await odfMimetype(zip)
  if (kind.mimetype && mimetype && mimetype !== kind.mimetype)
    throw invalid(`it is ${ODF_TYPES[mimetype] ?? `a file of type ${mimetype}`}`)
  if (!findEntry(zip, kind.main)) {
    const other = SIGNATURES.find(([part]) => findEntry(zip, part))
    if (other) throw invalid(`it is ${other[1]}`)
    if (mimetype && !kind.mimetype && ODF_TYPES[mimetype]) throw invalid(`it is ${ODF_TYPES[mimetype]}`)
    throw invalid(`no ${kind.main}`)
  }
  if (kind.mimetype) await refuseEncryptedOdf(zip, kind.label)
  return zip
}

/** An OpenDocument file saved with a password keeps its manifest readable and marks each encrypted part there. */
async function refuseEncryptedOdf(zip: ZipArchive, label: string): Promise<void> {
  const manifest = await readPart(zip, 'META-INF/manifest.xml', label)
  if (manifest && /<manifest:encryption-data\b/.test(manifest))
    throw new ParseError(`${label} is password-protected (its content is encrypted); remove the password and import it again`)
}

/** An Office Open XML part's relationships: id -> target part name (resolved against the part's folder). */
export async function relationships(
  zip: ZipArchive,
  part: string,
  label: string,
): Promise<Map<string, { target: string; type: string }>> {
  const dir = path.posix.dirname(part)
  const xml = await readPart(zip, path.posix.join(dir, '_rels', path.posix.basename(part) + '.rels'), label)
  const out = new Map<string, { target: string; type: string }>()
  if (!xml) return out
  xmlWalk(xml, {
    open(name, attrs) {
      if (name.replace(/^.*:/, '') !== 'Relationship' || !attrs['Id'] || !attrs['Target']) return
      if (attrs['TargetMode'] === 'External') return
      const t = attrs['Target']
      const target = t.startsWith('/') ? t.slice(1) : path.posix.normalize(path.posix.join(dir, t))
      out.set(attrs['Id'], { target, type: attrs['Type'] ?? '' })
    },
  })
  return out
}

/** Dublin Core and OpenDocument metadata of meta.xml (title, author, ...), for ODT and ODS. */
export async function odfMeta(zip: ZipArchive, label: string): Promise<Record<string, string>> {
  const xml = await readPart(zip, 'meta.xml', label).catch(() => null)
  const out: Record<string, string> = {}
  if (!xml) return out
  const fields: Record<string, string> = {
    'dc:title': 'title',
    'dc:subject': 'subject',
    'dc:description': 'description',
    'dc:creator': 'author',
    'meta:initial-creator': 'author',
    'dc:language': 'language',
    'meta:creation-date': 'created',
    'dc:date': 'modified',
  }
  let field: string | null = null
  let text = ''
  xmlWalk(xml, {
    open(name) {
      field = fields[name] ?? null
      text = ''
    },
    text(t) {
      if (field) text += t
    },
    close() {
      const v = text.replace(/\s+/g, ' ').trim()
      if (field && v && !out[field]) out[field] = v
      field = null
    },
  })
  return out
}
