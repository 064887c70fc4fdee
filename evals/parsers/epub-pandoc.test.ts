import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { approximateTokenCounter } from '../../src/engine/core/model-ports'
import { chunkDocument } from '../../src/engine/ingest/chunker'
import { parseFile } from '../../src/engine/ingest/parsers/index'
import { epubHtml } from '../../src/engine/ingest/parsers/epub'
import { makeZip } from '../../src/engine/ingest/parsers/__fixtures__/generate'
import { repoRoot, tempDir } from '../../src/test-support/paths'
import { words } from './pdf-recall'
import { recall } from './word-recall'

/**
 * EPUB fidelity (issue 26): books made by pandoc from this repository's own Markdown, read by
 * Docent, against pandoc's own plain text of the same EPUB (the reference extractor from Debian's
 * packages). Recall counts occurrences: every word pandoc reads must be among the words Docent
 * stores (chunk text and breadcrumbs, after the real parser and chunker) as often as pandoc has it.
 * In CI pandoc is installed by .ci/run; elsewhere the test says it needs it.
 */
const PANDOC = process.env['PANDOC'] ?? '/usr/bin/pandoc'
const SOURCES = [
  'docs/architecture.md',
  'docs/postgres.md',
  'docs/adr/0011-permissions-in-postgres.md',
  'evals/corpora/README.md',
]

describe.skipIf(!existsSync(PANDOC) && !process.env['CI'])('EPUB made by pandoc, read as pandoc reads it', () => {
  it('keeps at least 99% of the words pandoc extracts, with the book title and chapter headings', async () => {
    expect(existsSync(PANDOC), `${PANDOC} is missing: apt-get install -y pandoc`).toBe(true)
    const t = await tempDir('docent-epub-')
    const rows: string[] = ['| book (pandoc from) | pandoc words | missing | recall |', '| --- | ---: | ---: | ---: |']
    try {
      for (const src of SOURCES) {
        const epub = path.join(t.dir, path.basename(src, '.md') + '.epub')
        execFileSync(PANDOC, [
          path.join(repoRoot, src),
          '-f',
          'gfm',
          '-t',
          'epub3',
          '--metadata',
          `title=Book of ${src}`,
          '-o',
          epub,
        ])
        const reference = words(execFileSync(PANDOC, [epub, '-f', 'epub', '-t', 'plain', '--wrap=none'], { encoding: 'utf8' }))
        const bytes = new Uint8Array(readFileSync(epub))
        const doc = await parseFile(bytes, path.basename(epub))
        expect(doc.title).toBe(`Book of ${src}`)
        const firstHeading = /^#\s+(.+)$/m.exec(readFileSync(path.join(repoRoot, src), 'utf8'))![1]!.replace(/`/g, '')
        expect(
          doc.sections.some((s) => s.headings.join(' ').includes(firstHeading)),
          `${src}: a section under "${firstHeading}"`,
        ).toBe(true)
        const stored = chunkDocument(doc, approximateTokenCounter).flatMap((c) => words(c.breadcrumb.join(' ') + ' ' + c.text))
        const r = recall(stored, reference)
        rows.push(`| ${src} | ${reference.length} | ${r.missing.length} | ${r.recall.toFixed(4)} |`)
        expect(reference.length, src).toBeGreaterThan(200)
        expect(r.recall, `${src}: missing ${r.missing.slice(0, 30).join(' ')}`).toBeGreaterThanOrEqual(0.99)
        // The viewer shows the same book as HTML, chapters in order.
        expect(await epubHtml(bytes)).toContain(firstHeading.split(' ')[0]!)
      }
      console.log(
        `EPUB word recall against pandoc -t plain (pandoc ${execFileSync(PANDOC, ['--version'], { encoding: 'utf8' }).split('\n')[0]}):\n${rows.join('\n')}`,
      )
    } finally {
      await t.cleanup()
    }
  })
})

describe('EPUB that is not one', () => {
  it('a zip without a package, and a DRM-locked book, fail with their reasons', async () => {
    const zip = (files: Record<string, string>) => makeZip(Object.entries(files).map(([name, data]) => ({ name, data })))
    await expect(parseFile(zip({ mimetype: 'application/epub+zip' }), 'a.epub')).rejects.toThrow(/no META-INF\/container\.xml/)
    const container = '<?xml version="1.0"?><container><rootfiles><rootfile full-path="p.opf"/></rootfiles></container>'
    const locked = zip({
      'META-INF/container.xml': container,
      'META-INF/encryption.xml':
        '<encryption><EncryptedData><EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/></EncryptedData></encryption>',
      'p.opf':
        '<package><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine></package>',
    })
    await expect(parseFile(locked, 'b.epub')).rejects.toThrow(/DRM-protected/)
    await expect(parseFile(new TextEncoder().encode('plain text'), 'c.epub')).rejects.toThrow(
      /not a valid EPUB \(not a zip archive\)/,
    )
  })
})
