import path from 'node:path'
import type { ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { walkHtml } from './html'
import { xmlElements } from './xml'
import { checkUnpackedSizes, looksLikeZip, MAX_UNPACKED, openZip, type ZipArchive, type ZipEntry } from './zip'

/**
 * EPUB (2 and 3): the book's own reading order. META-INF/container.xml names the package file
 * (OPF); its spine lists the chapters (XHTML) in order, and each goes through the HTML walker into
 * one document, so a chapter's headings become sections and its tables Markdown rows. The title and
 * author come from the package's Dublin Core metadata. Before anything is unpacked the archive is
 * vetted as a DOCX is: declared sizes in all and per entry, each part inflated with a hard cap.
 *
 * Not read: images, the navigation document as such (its links repeat the headings), DRM-protected
 * books (their chapters are encrypted: refused with a reason), fixed-layout pages' positions.
 */

const XHTML = new Set(['application/xhtml+xml', 'text/html', 'application/x-dtbook+xml'])

const invalid = (reason: string) => new ParseError(`file is not a valid EPUB (${reason})`)

async function vet(bytes: Uint8Array): Promise<ZipArchive> {
  if (!looksLikeZip(bytes)) throw invalid('not a zip archive')
  const zip = await openZip(bytes, invalid)
  checkUnpackedSizes(zip.entries, 'EPUB')
  if (zip.entries.some((e) => e.name === 'META-INF/encryption.xml' && e.uncompressedSize > 0)) {
    const enc = await readText(
      zip,
      zip.entries.find((e) => e.name === 'META-INF/encryption.xml')!,
    )
    // Font obfuscation (IDPF / Adobe) encrypts fonts only; anything else means the chapters are locked.
    const algorithms = [...enc.matchAll(/Algorithm\s*=\s*"([^"]+)"/g)].map((m) => m[1]!)
    if (algorithms.some((a) => !/idpf\.org\/2008\/embedding|ns\.adobe\.com\/pdf\/enc#RC/.test(a)))
      throw new ParseError(
        'EPUB is DRM-protected (its chapters are encrypted); remove the protection with the tool that bought it',
      )
  }
  return zip
}

async function readText(zip: ZipArchive, entry: ZipEntry): Promise<string> {
  return new TextDecoder('utf-8').decode(await zip.read(entry, MAX_UNPACKED, 'EPUB')).replace(/^\uFEFF/, '')
}

interface Package {
  dir: string
  meta: Record<string, string>
  chapters: string[]
}

async function readPackage(zip: ZipArchive): Promise<Package> {
  const container = zip.entries.find((e) => e.name === 'META-INF/container.xml')
  if (!container) throw invalid('no META-INF/container.xml')
  let opfPath: string | null = null
  xmlElements(await readText(zip, container), (name, attrs) => {
    if (!opfPath && name === 'rootfile' && attrs['full-path']) opfPath = attrs['full-path']
  })
  if (!opfPath) throw invalid('its container names no package file')
  const opf = zip.entries.find((e) => e.name === opfPath)
  if (!opf) throw invalid(`its package file ${opfPath} is missing`)
  const items = new Map<string, { href: string; type: string }>()
  const spine: string[] = []
  const meta: Record<string, string> = {}
  xmlElements(await readText(zip, opf), (name, attrs, text) => {
    const local = name.replace(/^.*:/, '')
    if (local === 'item' && attrs['id'] && attrs['href'])
      items.set(attrs['id'], { href: attrs['href'], type: attrs['media-type'] ?? '' })
    else if (local === 'itemref' && attrs['idref'] && attrs['linear'] !== 'no') spine.push(attrs['idref'])
    else if (name.startsWith('dc:') && ['title', 'creator', 'language', 'publisher', 'date', 'description'].includes(local)) {
      const key = local === 'creator' ? 'author' : local
      if (!meta[key] && text()) meta[key] = text()
    }
  })
  const dir = path.posix.dirname(opfPath)
  const chapters = spine
    .map((id) => items.get(id))
    .filter((i): i is { href: string; type: string } => !!i && XHTML.has(i.type))
    .map((i) => path.posix.normalize(path.posix.join(dir === '.' ? '' : dir, decodeURIComponent(i.href.replace(/#.*$/, '')))))
  if (chapters.length === 0) throw invalid('its spine lists no chapters')
  return { dir, meta, chapters }
}

/**
 * The book as one HTML page for the source viewer: each chapter's <body>, in reading order (the
 * renderer sanitizes it, as every HTML source). Vetted as at import: the file may have changed.
 */
export async function epubHtml(bytes: Uint8Array): Promise<string> {
  const zip = await vet(bytes)
  const pkg = await readPackage(zip)
  const out: string[] = []
  for (const chapter of new Set(pkg.chapters)) {
    const entry = zip.entries.find((e) => e.name === chapter)
    if (!entry) continue
    const xhtml = await readText(zip, entry)
    const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(xhtml)
    out.push(`<section>${body ? body[1] : xhtml}</section>`)
  }
  return out.join('\n')
}

export const parseEpub: ParserFn = guarded('EPUB', async (bytes) => {
  const zip = await vet(bytes)
  const pkg = await readPackage(zip)
  const b = new DocBuilder()
  const seen = new Set<string>()
  for (const chapter of pkg.chapters) {
    if (seen.has(chapter)) continue
    seen.add(chapter)
    const entry = zip.entries.find((e) => e.name === chapter)
    if (!entry) continue
    try {
      walkHtml(await readText(zip, entry), b, { recognizeSelfClosing: true })
    } catch (e) {
      if (e instanceof ParseError) throw e
      throw new ParseError(`could not read the chapter ${chapter}: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  const meta: Record<string, unknown> = { ...pkg.meta }
  const title = pkg.meta['title'] ?? b.firstH1
  const doc: ParsedDocument = { title, meta, sections: b.finish() }
  return doc
})
