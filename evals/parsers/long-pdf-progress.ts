#!/usr/bin/env tsx
/**
 * Progress inside one long file (issue 26: a 61-second parse of a 5,000-page PDF emitted no
 * progress). Imports a generated PDF of `--pages` pages (a "Chapter N" heading and two lines of
 * body per page, no title in its metadata) and counts the progress events sent while it was the
 * current file, and those that said how far into it the parse was; also checks the breadcrumbs
 * (equal chapters are siblings, not "Chapter 1 > Chapter N").
 *
 *   npx tsx evals/parsers/long-pdf-progress.ts [--pages 5000]
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { makePdf, type PdfText } from '../../src/engine/ingest/parsers/__fixtures__/generate'
import { tempDir } from '../../src/test-support/paths'
import type { ImportProgress } from '../../src/shared/api'

async function main(): Promise<void> {
  const at = process.argv.indexOf('--pages')
  const pages = at >= 0 ? Number(process.argv[at + 1]) : 5000
  const work = await tempDir('docent-long-pdf-')
  try {
    const folder = path.join(work.dir, 'docs')
    const content: PdfText[][] = Array.from({ length: pages }, (_, i) => [
      { size: 18, y: 720, text: `Chapter ${i + 1}` },
      { size: 11, y: 690, text: `This is the body of page ${i + 1}, with enough words to be the body size.` },
      { size: 11, y: 676, text: `A second line on page ${i + 1} continues the paragraph.` },
    ])
    await mkdir(folder)
    await writeFile(path.join(folder, 'long.pdf'), makePdf(content))
    const engine = await Engine.open({ dataDir: path.join(work.dir, 'index'), modelsDir: path.join(work.dir, 'none') })
    try {
      const seen: ImportProgress[] = []
      const report = await engine.importFolder(folder, { collection: 'long', onProgress: (p) => seen.push(p) })
      const during = seen.filter((p) => p.currentFile === 'long.pdf')
      const withPages = during.filter((p) => p.fileProgress?.stage === 'pages')
      const { rows } = await engine.db.query<{ nested: number; headings: number }>(
        `SELECT count(*) FILTER (WHERE heading LIKE '% > %')::int AS nested, count(DISTINCT heading)::int AS headings
           FROM chunks WHERE collection_id = 'long'`,
      )
      process.stdout.write(
        `${pages}-page PDF: parse ${(report.timings.parse / 1000).toFixed(1)} s; ${during.length} progress events while it was the current file, ` +
          `${withPages.length} of them with its pages (${withPages
            .map((p) => p.fileProgress!.done)
            .slice(0, 12)
            .join(', ')}${withPages.length > 12 ? ', …' : ''}); ` +
          `${rows[0]!.headings} distinct breadcrumbs, ${rows[0]!.nested} chunks under a nested one\n`,
      )
    } finally {
      await engine.close()
    }
  } finally {
    await work.cleanup()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`long-pdf-progress: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
