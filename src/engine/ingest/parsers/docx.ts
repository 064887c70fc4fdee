import { Parser } from 'htmlparser2'
import mammoth from 'mammoth'
import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { walkHtml } from './html'
import { checkUnpackedSizes, looksLikeZip, MAX_UNPACKED, openZip, type ZipArchive } from './zip'

/**
 * DOCX via mammoth (to HTML) and the HTML walker, so Word headings (Heading 1..6, Title) become
 * sections, tables Markdown rows and numbered/bulleted paragraphs lists. Before mammoth sees the
 * file, the zip is vetted: declared sizes (total and ratio) and the XML parts are inflated with a
 * hard cap, so a zip bomb is refused quickly and without using much memory. Images are not read.
 *
 * Not handled: text boxes and shapes (mammoth drops them), headers/footers, comments, tracked
 * changes beyond what mammoth applies, embedded objects.
 */

const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]

const invalid = (reason: string) => new ParseError(`file is not a valid DOCX (${reason})`)

/** Refuse archives that are not a DOCX or would unpack to far too much. Returns the opened archive. */
export async function vetDocxZip(bytes: Uint8Array): Promise<ZipArchive> {
  if (OLE_MAGIC.every((v, i) => bytes[i] === v)) {
    throw new ParseError(
      'file is an old-format Word document (.doc) or a password-protected DOCX; save it as an unprotected .docx',
    )
  }
  if (!looksLikeZip(bytes)) throw invalid('not a zip archive')
  const zip = await openZip(bytes, invalid)
  const { entries } = zip
  checkUnpackedSizes(entries, 'DOCX')
  if (!entries.some((e) => e.name === 'word/document.xml')) {
    if (entries.some((e) => e.name === 'xl/workbook.xml')) throw invalid('it is an Excel workbook')
    if (entries.some((e) => e.name === 'ppt/presentation.xml')) throw invalid('it is a PowerPoint presentation')
    throw invalid('no word/document.xml in the archive')
  }
  // The parts mammoth reads must really unpack to their declared sizes (a lying header is a bomb).
  for (const e of entries) {
    if (/\.(xml|rels)$/i.test(e.name)) await zip.read(e, MAX_UNPACKED, 'DOCX')
  }
  return zip
}

/** Core properties element -> meta key. */
const CORE_FIELDS: Record<string, string> = {
  'dc:title': 'title',
  'dc:subject': 'subject',
  'dc:creator': 'author',
  'cp:keywords': 'keywords',
  'dc:description': 'description',
  'cp:version': 'version',
  'cp:revision': 'revision',
  'dcterms:created': 'created',
  'dcterms:modified': 'modified',
}

export async function coreProperties(zip: ZipArchive): Promise<Record<string, string>> {
  const core = zip.entries.find((e) => e.name === 'docProps/core.xml')
  if (!core) return {}
  let xml: string
  try {
    xml = new TextDecoder('utf-8').decode(await zip.read(core, 1024 * 1024))
  } catch {
    return {}
  }
  const out: Record<string, string> = {}
  // Text of each known element that is a direct child of the root; nested markup is read as text.
  let field: string | null = null
  let depth = 0
  let text = ''
  const parser = new Parser(
    {
      onopentag(name) {
        depth++
        if (depth === 2 && CORE_FIELDS[name]) {
          field = CORE_FIELDS[name]
          text = ''
        }
      },
      ontext(t) {
        if (field) text += t
      },
      onclosetag() {
        if (depth === 2 && field) {
          const v = text.replace(/\s+/g, ' ').trim()
          if (v && !out[field]) out[field] = v
          field = null
        }
        depth--
      },
    },
    { xmlMode: true, decodeEntities: true },
  )
  parser.write(xml)
  parser.end()
  return out
}

export const parseDocx: ParserFn = guarded('DOCX', async (bytes) => {
  const zip = await vetDocxZip(bytes)
  const meta: Record<string, unknown> = await coreProperties(zip)
  let html: string
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        styleMap: ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => p:fresh"],
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
        externalFileAccess: false,
        ignoreEmptyParagraphs: true,
      },
    )
    html = result.value
  } catch (e) {
    throw new ParseError(`could not read the DOCX: ${e instanceof Error ? e.message : String(e)}`)
  }
  const b = new DocBuilder()
  try {
    walkHtml(html, b, { recognizeSelfClosing: true })
  } catch (e) {
    throw new ParseError(`could not read the DOCX: ${e instanceof Error ? e.message : String(e)}`)
  }
  const title = (typeof meta.title === 'string' ? meta.title : null) ?? b.firstH1
  const doc: ParsedDocument = { title, meta, sections: b.finish() }
  return doc
})
