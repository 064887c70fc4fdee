import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { decodeHTML } from 'entities'
import { Marked, type Token, type Tokens } from 'marked'
import { approximateTokenCounter } from '../../src/engine/core/model-ports'
import { chunkDocument } from '../../src/engine/ingest/chunker'
import { parsePdf } from '../../src/engine/ingest/parsers/pdf'
import type { ParsedDocument } from '../../src/engine/ingest/types'

/**
 * How much of a PDF's text Docent keeps, and whether its breadcrumbs are real headings.
 *
 *   tsx evals/parsers/pdf-recall.ts <folder-or-pdf>... [--verbose]
 *
 * Per PDF: the words poppler's pdftotext extracts, how many of them are not among the words Docent
 * stores (chunk text and breadcrumbs, after the real parser and chunker), and the recall. When the
 * folder has the Markdown sources in .sources/ (evals/corpora/build-pdf-folder.sh), also: how many
 * distinct breadcrumb texts are not a heading of the source, and how many h1-h3 headings of the
 * source no breadcrumb names. --verbose lists the missing words and the wrong headings.
 */

/**
 * Words of a text: NFKC, lower case, runs of letters and digits. A hyphen between two letters or
 * digits joins them ("100-continue" is one word): pdftotext drops such hyphens where a PDF draws
 * them as a separate glyph ("100continue"), and the word must count the same on both sides.
 */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .replace(/(?<=[\p{L}\p{N}])[-\u00ad\u2010\u2011](?=[\p{L}\p{N}])/gu, '')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  )
}

export interface PdfRecall {
  file: string
  pages: number
  /** Word occurrences pdftotext extracts. */
  reference: number
  /** Of those, occurrences not covered by the words Docent stores (chunk text + breadcrumb). */
  missing: number
  recall: number
  /** The first missing words in reading order, for a person to look at. */
  sample: string[]
}

export const PDFTOTEXT = process.env.PDFTOTEXT ?? '/usr/bin/pdftotext'

export function pdftotext(file: string): string {
  return execFileSync(PDFTOTEXT, ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8', maxBuffer: 256 << 20 })
}

export async function parsePdfFile(file: string): Promise<ParsedDocument> {
  return parsePdf(new Uint8Array(readFileSync(file)), path.basename(file))
}

/**
 * Recall of the words Docent stores for a PDF against poppler's pdftotext, counting occurrences:
 * a word pdftotext finds 5 times must appear 5 times among the stored words (chunk text and
 * breadcrumbs, as the search index sees them), so a vanished paragraph is missed even when its
 * words occur elsewhere.
 */
export async function pdfRecall(file: string, doc?: ParsedDocument): Promise<PdfRecall> {
  const parsed = doc ?? (await parsePdfFile(file))
  const stored = new Map<string, number>()
  for (const c of chunkDocument(parsed, approximateTokenCounter)) {
    for (const w of words(c.breadcrumb.join(' ') + ' ' + c.text)) stored.set(w, (stored.get(w) ?? 0) + 1)
  }
  const ref = words(pdftotext(file))
  let missing = 0
  const sample: string[] = []
  for (const w of ref) {
    const n = stored.get(w) ?? 0
    if (n > 0) stored.set(w, n - 1)
    else {
      missing++
      if (sample.length < 40) sample.push(w)
    }
  }
  return {
    file: path.basename(file),
    pages: parsed.pageCount ?? 0,
    reference: ref.length,
    missing,
    recall: ref.length ? (ref.length - missing) / ref.length : 1,
    sample,
  }
}

export function recallTable(rows: PdfRecall[]): string {
  const out = ['| PDF | pages | pdftotext words | missing | recall |', '| --- | ---: | ---: | ---: | ---: |']
  for (const r of rows) out.push(`| ${r.file} | ${r.pages} | ${r.reference} | ${r.missing} | ${r.recall.toFixed(3)} |`)
  return out.join('\n')
}

export interface SourceHeading {
  depth: number
  /** Its words, joined by spaces (see words()). */
  text: string
  /** Words of the paragraph right under the heading, when one follows it. */
  next: string | null
}

/** The headings of a Markdown source, as md-to-html.mjs renders them (an image is its alt text). */
export function sourceHeadings(markdownFile: string): SourceHeading[] {
  const marked = new Marked({ gfm: true }, { renderer: { image: ({ text }) => text } })
  const plain = (inline: string) => {
    const html = (marked.parseInline(inline) as string).replace(/<br\s*\/?>/gi, ' ').replace(/<[^>]+>/g, '')
    return words(decodeHTML(html)).join(' ')
  }
  const out: SourceHeading[] = []
  let last: SourceHeading | null = null
  const visit = (tokens: Token[]) => {
    for (const t of tokens) {
      if (t.type === 'space') continue
      if (t.type === 'heading') {
        last = { depth: (t as Tokens.Heading).depth, text: plain((t as Tokens.Heading).text), next: null }
        out.push(last)
        continue
      }
      if (last && t.type === 'paragraph') last.next = plain((t as Tokens.Paragraph).text)
      last = null
      if (t.type === 'blockquote') visit((t as Tokens.Blockquote).tokens)
    }
  }
  visit(marked.lexer(readFileSync(markdownFile, 'utf8')))
  return out
}

export interface HeadingCheck {
  /** Distinct breadcrumb texts the parser produced. */
  breadcrumbs: number
  /** Of those, the ones that are no heading of the source (a body sentence taken for a heading). */
  notHeadings: string[]
  /** Source headings of level 1-3. */
  major: number
  /** Of those, the ones no breadcrumb names. */
  notFound: string[]
}

export function checkHeadings(doc: ParsedDocument, heads: SourceHeading[]): HeadingCheck {
  const known = new Set(heads.map((h) => h.text))
  const crumbs = new Map<string, string>()
  for (const s of doc.sections) for (const h of s.headings) crumbs.set(words(h).join(' '), h)
  const major = heads.filter((h) => h.depth <= 3)
  return {
    breadcrumbs: crumbs.size,
    notHeadings: [...crumbs].filter(([w]) => !known.has(w)).map(([, h]) => h),
    major: major.length,
    notFound: major.filter((h) => !crumbs.has(h.text)).map((h) => h.text),
  }
}

/** The Markdown source build-pdf-folder.sh keeps beside a PDF, if any. */
export function sourceOf(pdf: string): string | null {
  const md = path.join(path.dirname(pdf), '.sources', path.basename(pdf).replace(/\.pdf$/i, '.md'))
  return existsSync(md) ? md : null
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const verbose = args.includes('--verbose')
  const dirs = args.filter((a) => !a.startsWith('--'))
  if (dirs.length === 0 || !existsSync(PDFTOTEXT)) {
    console.error(
      'usage: tsx evals/parsers/pdf-recall.ts <folder-or-pdf>... [--verbose]   (needs pdftotext: apt-get install -y poppler-utils)',
    )
    process.exit(2)
  }
  const files: string[] = []
  for (const d of dirs) {
    if (d.toLowerCase().endsWith('.pdf')) files.push(d)
    else for (const f of readdirSync(d).sort()) if (f.toLowerCase().endsWith('.pdf')) files.push(path.join(d, f))
  }
  const rows: PdfRecall[] = []
  const heads: [string, HeadingCheck][] = []
  for (const f of files) {
    const doc = await parsePdfFile(f)
    rows.push(await pdfRecall(f, doc))
    const md = sourceOf(f)
    if (md) heads.push([path.basename(f), checkHeadings(doc, sourceHeadings(md))])
  }
  console.log(recallTable(rows))
  if (verbose) for (const r of rows) if (r.missing) console.log(`\n${r.file} misses: ${r.sample.join(' ')}`)
  if (heads.length === 0) return
  console.log('\n| PDF | breadcrumb texts | not a heading of the source | source h1-h3 | not found |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const [f, h] of heads) {
    console.log(`| ${f} | ${h.breadcrumbs} | ${h.notHeadings.length} | ${h.major} | ${h.notFound.length} |`)
  }
  if (verbose) {
    for (const [f, h] of heads) {
      for (const t of h.notHeadings) console.log(`${f}: not a heading: ${JSON.stringify(t)}`)
      for (const t of h.notFound) console.log(`${f}: heading not found: ${JSON.stringify(t)}`)
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) await main()
