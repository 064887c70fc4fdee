import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { approximateTokenCounter } from '../../src/engine/core/model-ports'
import { chunkDocument } from '../../src/engine/ingest/chunker'
import { documentHtml } from '../../src/engine/ingest/parsers/doc-html'
import { parseFile } from '../../src/engine/ingest/parsers/index'
import type { ParsedDocument } from '../../src/engine/ingest/types'
import { repoRoot, tempDir } from '../../src/test-support/paths'
import { words } from './pdf-recall'

/**
 * Office formats' fidelity (issue 26): every word the reference extractor reads must be among the
 * words Docent stores (chunk text and breadcrumbs, after the real parser and chunker), as often as
 * the reference has it; the bar is 0.99.
 * - ODT: made by pandoc from this repository's Markdown; the reference is pandoc's own reader.
 * - PPTX: made by pandoc from the same Markdown. pandoc has no PPTX reader, so the reference is
 *   pandoc's plain text of the Markdown source the deck was made from.
 * - XLSX, ODS: made by LibreOffice Calc from CSV sources; the reference is Calc's own CSV export of
 *   the made file. CI has no LibreOffice: the files and their reference are committed
 *   (fixtures/office, make.sh regenerates both); where soffice exists, the reference is made again
 *   from the committed file and must equal the committed one.
 * - Files saved by LibreOffice itself (the pandoc-made handbook re-saved by Impress and Writer)
 *   must read as well: real files come from office suites, not only from pandoc.
 */
const PANDOC = process.env['PANDOC'] ?? '/usr/bin/pandoc'
const SOFFICE = process.env['SOFFICE'] ?? '/usr/bin/soffice'
// Regenerating the committed references needs LibreOffice, which CI does not install (the readings
// above compare with the committed ones); say so rather than skip in silence.
if (!existsSync(SOFFICE))
  console.log(`office-fidelity: ${SOFFICE} not found: the check that the committed references are what LibreOffice exports today is skipped`)
const FIXTURES = path.join(repoRoot, 'evals/parsers/fixtures/office')
const SOURCES = ['docs/architecture.md', 'docs/parsers.md', 'docs/adr/0011-permissions-in-postgres.md']

function recall(stored: string[], reference: string[]): { recall: number; missing: string[] } {
  const have = new Map<string, number>()
  for (const w of stored) have.set(w, (have.get(w) ?? 0) + 1)
  const missing: string[] = []
  for (const w of reference) {
    const n = have.get(w) ?? 0
    if (n > 0) have.set(w, n - 1)
    else missing.push(w)
  }
  return { recall: reference.length ? (reference.length - missing.length) / reference.length : 1, missing }
}

const storedWords = (doc: ParsedDocument) =>
  chunkDocument(doc, approximateTokenCounter).flatMap((c) => words(c.breadcrumb.join(' ') + ' ' + c.text))

const pandoc = (args: string[]) => execFileSync(PANDOC, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
const plainOfMarkdown = (file: string) => pandoc([file, '-f', 'gfm', '-t', 'plain', '--wrap=none'])

const rows: string[] = ['| file (made by, from) | reference words | missing | recall |', '| --- | ---: | ---: | ---: |']
function check(label: string, doc: ParsedDocument, reference: string[]): void {
  const r = recall(storedWords(doc), reference)
  rows.push(`| ${label} | ${reference.length} | ${r.missing.length} | ${r.recall.toFixed(4)} |`)
  expect(r.recall, `${label}: missing ${r.missing.slice(0, 30).join(' ')}`).toBeGreaterThanOrEqual(0.99)
}

async function parsePath(file: string): Promise<ParsedDocument> {
  return parseFile(new Uint8Array(readFileSync(file)), path.basename(file))
}

describe.skipIf(!existsSync(PANDOC) && !process.env['CI'])('ODT and PPTX made by pandoc, read as pandoc reads them', () => {
  it('keeps at least 99% of the reference words, with the title and the first heading', async () => {
    expect(existsSync(PANDOC), `${PANDOC} is missing: apt-get install -y pandoc`).toBe(true)
    const t = await tempDir('docent-office-')
    try {
      for (const src of SOURCES) {
        const source = path.join(repoRoot, src)
        const firstHeading = /^#\s+(.+)$/m.exec(readFileSync(source, 'utf8'))![1]!.replace(/`/g, '')
        const base = path.join(t.dir, path.basename(src, '.md'))
        pandoc([source, '-f', 'gfm', '-t', 'odt', '--metadata', `title=Text of ${src}`, '-o', base + '.odt'])
        pandoc([source, '-f', 'gfm', '-t', 'pptx', '--metadata', `title=Deck of ${src}`, '-o', base + '.pptx'])

        const odt = await parsePath(base + '.odt')
        expect(odt.title).toBe(`Text of ${src}`)
        expect(odt.sections.some((s) => s.headings.join(' ').includes(firstHeading))).toBe(true)
        check(`${src} (pandoc ODT)`, odt, words(pandoc([base + '.odt', '-f', 'odt', '-t', 'plain', '--wrap=none'])))

        const pptx = await parsePath(base + '.pptx')
        expect(pptx.title).toBe(`Deck of ${src}`)
        expect(pptx.sections.some((s) => s.headings[0] === firstHeading)).toBe(true)
        // The deck's title slide adds "Deck of <src>", which the Markdown has not: extra words do not count against recall.
        check(`${src} (pandoc PPTX)`, pptx, words(plainOfMarkdown(source)))
        expect(documentHtml(pptx)).toContain(`<h1>${firstHeading.split(' ')[0]}`)
      }
    } finally {
      await t.cleanup()
    }
  })
})

describe('spreadsheets made by LibreOffice Calc, read as Calc exports them', () => {
  const files = ['parts.xlsx', 'parts.ods', 'releases.xlsx', 'releases.ods']

  it('keeps at least 99% of the words of Calc CSV export, header row first', async () => {
    for (const f of files) {
      const doc = await parsePath(path.join(FIXTURES, f))
      const reference = readFileSync(path.join(FIXTURES, f + '.ref.csv'), 'utf8')
      expect(doc.sections).toHaveLength(1)
      const table = doc.sections[0]!.blocks.map((b) => b.text).join('\n')
      const header = reference.split('\n')[0]!.replace(/"/g, '').split(',').join(' | ')
      expect(table.startsWith(`| ${header} |\n| --- |`), f).toBe(true)
      expect(words(reference).length, f).toBeGreaterThan(150)
      check(`${f} (LibreOffice Calc, from ${f.replace(/\.\w+$/, '.csv')})`, doc, words(reference))
    }
  })

  it.skipIf(!existsSync(SOFFICE))(
    'the committed reference is what LibreOffice exports today',
    () => {
      for (const f of files) {
        const fresh = execFileSync('bash', [path.join(FIXTURES, 'reference.sh'), path.join(FIXTURES, f)], {
          encoding: 'utf8',
          env: { ...process.env, SOFFICE },
        })
        expect(fresh, f).toBe(readFileSync(path.join(FIXTURES, f + '.ref.csv'), 'utf8'))
      }
    },
    60_000,
  )
})

describe.skipIf(!existsSync(PANDOC) && !process.env['CI'])('PPTX and ODT saved by LibreOffice', () => {
  it('read with the same recall as pandoc-made ones', async () => {
    const source = path.join(FIXTURES, 'handbook.md')
    const pptx = await parsePath(path.join(FIXTURES, 'handbook.pptx'))
    expect(pptx.title).toBe('Workshop handbook')
    expect(pptx.sections.map((s) => s.headings[0])).toEqual(['Workshop handbook', 'Getting started', 'Materials', 'Maintenance'])
    expect(pptx.sections.flatMap((s) => s.blocks).filter((b) => b.text.startsWith('Speaker notes:'))).toHaveLength(2)
    // pandoc's plain text writes the front matter's title and author nowhere; the deck has them on its title slide.
    check('handbook.pptx (pandoc, re-saved by LibreOffice Impress)', pptx, words(plainOfMarkdown(source)))
    const odtFile = path.join(FIXTURES, 'handbook.odt')
    const odt = await parsePath(odtFile)
    expect(odt.title).toBe('Workshop handbook')
    expect(odt.sections.find((s) => s.headings.join(' > ') === 'Maintenance > Weekly')?.blocks[0]?.kind).toBe('list')
    check(
      'handbook.odt (pandoc, re-saved by LibreOffice Writer)',
      odt,
      words(pandoc([odtFile, '-f', 'odt', '-t', 'plain', '--wrap=none'])),
    )
    console.log(`Office formats' word recall (pandoc ${pandoc(['--version']).split('\n')[0]}):\n${rows.join('\n')}`)
  })
})
