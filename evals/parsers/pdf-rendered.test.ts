import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ParsedDocument } from '../../src/engine/ingest/types'
import { checkHeadings, parsePdfFile, PDFTOTEXT, pdfRecall, recallTable, sourceHeadings, sourceOf, words } from './pdf-recall'

/**
 * PDFs that Chromium renders from Markdown (evals/corpora/build-pdf-folder.sh: a long manual whose
 * code outweighs its prose, and five package READMEs), read by Docent's PDF parser and checked
 * against two references: poppler's pdftotext for the text (every word it extracts must be stored),
 * and the Markdown source for the headings (every breadcrumb is a real heading, every real h1-h3
 * heading is found, and the paragraph under each one is in its section).
 *
 * Needs Debian's chromium and poppler-utils. CI installs both (.ci/run) and a missing one fails
 * the test there; elsewhere the tests are skipped with the reason printed.
 */

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const IN_CI = Boolean(process.env.CI)

const noChromium = existsSync(CHROMIUM) ? null : `${CHROMIUM} not found (apt-get install -y chromium)`
const noPdftotext = existsSync(PDFTOTEXT) ? null : `${PDFTOTEXT} not found (apt-get install -y poppler-utils)`
if (!IN_CI) {
  if (noChromium) console.warn(`pdf-rendered.test.ts: every test skipped: ${noChromium}`)
  else if (noPdftotext) console.warn(`pdf-rendered.test.ts: the pdftotext recall test skipped: ${noPdftotext}`)
}

/** In CI a missing tool is a failure, not a skip. */
function requireTools(...missing: (string | null)[]): void {
  const m = missing.filter(Boolean)
  if (m.length > 0) throw new Error(`CI must install the PDF tools: ${m.join('; ')} (see .ci/run)`)
}

let dir = ''
let pdfs: string[] = []
const parsed = new Map<string, ParsedDocument>()

beforeAll(async () => {
  if (noChromium) return
  dir = mkdtempSync(path.join(tmpdir(), 'docent-pdf-text-'))
  execFileSync('bash', [path.join(REPO, 'evals/corpora/build-pdf-folder.sh'), dir], {
    cwd: REPO,
    env: { ...process.env, CHROMIUM, PKG_DOCS_CACHE: path.join(dir, '.npm-pack') },
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 170_000,
  })
  pdfs = readdirSync(dir)
    .filter((f) => f.endsWith('.pdf'))
    .sort()
  for (const f of pdfs) parsed.set(f, await parsePdfFile(path.join(dir, f)))
})

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

function headingsOf(pdf: string) {
  const md = sourceOf(path.join(dir, pdf))
  if (!md) throw new Error(`build-pdf-folder.sh kept no Markdown source for ${pdf}`)
  return sourceHeadings(md)
}

describe.skipIf(!IN_CI && noChromium)('PDFs rendered by Chromium', () => {
  it.skipIf(!IN_CI && noPdftotext)('stores every word that pdftotext extracts (recall >= 0.99 per PDF)', async () => {
    requireTools(noChromium, noPdftotext)
    const rows = []
    for (const f of pdfs) rows.push(await pdfRecall(path.join(dir, f), parsed.get(f)))
    console.log(`words pdftotext extracts that Docent stores (chunk text and breadcrumbs):\n${recallTable(rows)}`)
    expect(rows.map((r) => r.file)).toContain('tern-manual.pdf')
    expect(rows.length).toBe(6)
    for (const r of rows) {
      expect(r.reference, r.file).toBeGreaterThan(3000)
      expect(r.recall, `${r.file} misses: ${r.sample.join(' ')}`).toBeGreaterThanOrEqual(0.99)
    }
  })

  it('takes only real headings for breadcrumbs, and finds every h1-h3 heading', () => {
    requireTools(noChromium)
    for (const f of pdfs) {
      const check = checkHeadings(parsed.get(f)!, headingsOf(f))
      expect(check.notHeadings, `${f}: breadcrumbs that are not headings`).toEqual([])
      expect(check.major, f).toBeGreaterThan(10)
      expect(check.notFound, `${f}: h1-h3 headings not found`).toEqual([])
    }
  })

  it('keeps the paragraph under each heading in that heading’s section', () => {
    requireTools(noChromium)
    let checked = 0
    for (const f of pdfs) {
      const sections = parsed.get(f)!.sections
      for (const h of headingsOf(f)) {
        if (h.depth > 3 || !h.next) continue
        const own = sections.filter((s) => s.headings.length > 0 && words(s.headings.at(-1)!).join(' ') === h.text)
        expect(own.length, `${f}: a section for "${h.text}"`).toBeGreaterThan(0)
        const first = own.map((s) => words(s.blocks.map((b) => b.text).join(' ')).join(' '))
        expect(
          first.some((t) => t.startsWith(h.next!)),
          `${f}: "${h.text}" starts with "${h.next}"; got "${first[0]?.slice(0, 200)}"`,
        ).toBe(true)
        checked++
      }
    }
    // The manual alone has over forty headings followed by a paragraph.
    expect(checked).toBeGreaterThan(100)
  })
})
