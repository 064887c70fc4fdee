import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { approximateTokenCounter } from '../../src/engine/core/model-ports'
import { chunkDocument } from '../../src/engine/ingest/chunker'
import { parseFile } from '../../src/engine/ingest/parsers/index'
import type { ParsedDocument } from '../../src/engine/ingest/types'
import { repoRoot } from '../../src/test-support/paths'
import { words } from './pdf-recall'
import { recall } from './word-recall'

/**
 * Fidelity of the text formats of issue 26 against pandoc (the reference extractor from Debian's
 * packages), by word recall counted by occurrence over what Docent stores (chunk text and
 * breadcrumbs, after the real parser and chunker):
 *
 * - reStructuredText made by pandoc (`-f gfm -t rst`) from this repository's Markdown, and real
 *   RST from docutils' own documentation (test-fixtures/rst, see its README); reference: pandoc's
 *   `-f rst -t plain` of the same RST.
 * - AsciiDoc made by pandoc (`-t asciidoc`) from the same Markdown. pandoc has no AsciiDoc reader,
 *   so the reference is pandoc's `-t plain` of the Markdown the AsciiDoc was made from.
 * - CSV (test-fixtures/csv): quoted commas, quotes and line breaks in cells, accents, a
 *   semicolon-delimited file; reference: pandoc's `-f csv -t plain`. pandoc reads commas only, so
 *   for the semicolon file it reads the comma version Python's csv module wrote of it (README).
 *
 * In CI pandoc is installed by .ci/run; elsewhere the test says it needs it.
 */
const PANDOC = process.env['PANDOC'] ?? '/usr/bin/pandoc'
const FIXTURES = path.join(repoRoot, 'evals/parsers/test-fixtures')
const SOURCES = [
  'docs/architecture.md',
  'docs/postgres.md',
  'docs/parsers.md',
  'docs/security.md',
  'docs/adr/0011-permissions-in-postgres.md',
  'evals/corpora/README.md',
]
const rows: string[] = []

const pandoc = (args: string[], input?: string) =>
  execFileSync(PANDOC, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'ignore'] })

async function check(label: string, bytes: Uint8Array, name: string, reference: string[]): Promise<ParsedDocument> {
  const doc = await parseFile(bytes, name)
  const stored = chunkDocument(doc, approximateTokenCounter).flatMap((c) => words(c.breadcrumb.join(' ') + ' ' + c.text))
  const r = recall(stored, reference)
  rows.push(`| ${label} | ${reference.length} | ${r.missing.length} | ${r.recall.toFixed(4)} |`)
  expect(reference.length, label).toBeGreaterThan(30)
  expect(r.recall, `${label}: missing ${r.missing.slice(0, 200).join(' ')}`).toBeGreaterThanOrEqual(0.99)
  return doc
}

/** The first h1/h2 heading of a Markdown source, as text. */
function firstHeading(md: string): string {
  return /^##?\s+(.+)$/m.exec(md)![1]!.replace(/[`*]/g, '').trim()
}

const headingsOf = (doc: ParsedDocument) => doc.sections.flatMap((s) => s.headings).join('\n')

describe.skipIf(!existsSync(PANDOC) && !process.env['CI'])('text formats read as pandoc reads them', () => {
  afterAll(() => {
    if (rows.length === 0) return
    const version = pandoc(['--version']).split('\n')[0]
    console.log(
      `Text-format word recall against pandoc -t plain (${version}):\n| file | pandoc words | missing | recall |\n| --- | ---: | ---: | ---: |\n${rows.join('\n')}`,
    )
  })

  it('reStructuredText made by pandoc from the repository Markdown: >= 99% of the words, headings as sections', async () => {
    expect(existsSync(PANDOC), `${PANDOC} is missing: apt-get install -y pandoc`).toBe(true)
    for (const src of SOURCES) {
      const md = readFileSync(path.join(repoRoot, src), 'utf8')
      const rst = pandoc(['-f', 'gfm', '-t', 'rst'], md)
      const reference = words(pandoc(['-f', 'rst', '-t', 'plain', '--wrap=none'], rst))
      const doc = await check(`rst (pandoc from ${src})`, new TextEncoder().encode(rst), 'doc.rst', reference)
      expect(headingsOf(doc), src).toContain(firstHeading(md))
    }
  })

  it('real reStructuredText (docutils documentation): >= 99% of the words', async () => {
    const dir = path.join(FIXTURES, 'rst')
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.rst'))) {
      const file = path.join(dir, name)
      const reference = words(pandoc(['-f', 'rst', '-t', 'plain', '--wrap=none', file]))
      const doc = await check(`rst (${name}, docutils)`, new Uint8Array(readFileSync(file)), name, reference)
      expect(doc.sections.length, name).toBeGreaterThan(5)
    }
  })

  it('AsciiDoc made by pandoc from the repository Markdown: >= 99% of the words, headings as sections', async () => {
    for (const src of SOURCES) {
      const md = readFileSync(path.join(repoRoot, src), 'utf8')
      const adoc = pandoc(['-f', 'gfm', '-t', 'asciidoc'], md)
      // No AsciiDoc reader in pandoc: the reference is its plain text of the Markdown source.
      const reference = words(pandoc(['-f', 'gfm', '-t', 'plain', '--wrap=none'], md))
      const doc = await check(`asciidoc (pandoc from ${src})`, new TextEncoder().encode(adoc), 'doc.adoc', reference)
      expect(headingsOf(doc), src).toContain(firstHeading(md))
    }
  })

  it('CSV: >= 99% of the words, in tables with their header', async () => {
    const dir = path.join(FIXTURES, 'csv')
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.csv') && !f.endsWith('.reference.csv'))) {
      const ref = name.replace(/\.csv$/, '.reference.csv')
      const refFile = path.join(dir, existsSync(path.join(dir, ref)) ? ref : name)
      const reference = words(pandoc(['-f', 'csv', '-t', 'plain', '--wrap=none', refFile]))
      const doc = await check(`csv (${name})`, new Uint8Array(readFileSync(path.join(dir, name))), name, reference)
      const header = readFileSync(refFile, 'utf8').split('\n')[0]!.replace(/"/g, '').split(',')
      expect(doc.sections[0]!.blocks[0]!.text.split('\n')[0], name).toBe(`| ${header.join(' | ')} |`)
    }
  })
})
