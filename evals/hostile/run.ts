#!/usr/bin/env tsx
/**
 * Imports the hostile-folder corpus (fetch.ts) whole into a fresh library and checks what
 * issue 26 asks of it: every file imported, or failed or skipped with a reason; no crash; search
 * results and stored chunks free of control characters; the peak memory of the import; and a
 * second sync that reads no failed file again. Prints a table per source and the failures by
 * reason; --json writes everything for hostile.test.ts.
 *
 *   npx tsx evals/hostile/fetch.ts .hostile
 *   npx tsx evals/hostile/run.ts .hostile/corpus [--json out.json]
 *   npx tsx evals/hostile/run.ts --baseline      # peak RSS of importing one small Markdown file, for comparison
 *
 * Keyword only (no models): the suite is about reading files, not about embedding them.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { formatTable } from '../../src/apps/cli/table'
import { tempDir } from '../../src/test-support/paths'
import type { ImportReport } from '../../src/shared/api'
import { manifestOf, type Manifest } from './fetch'

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/

/** Words the corpus holds in every part (Markdown examples, PDFs, DOCX, HTML), searched to look at the results. */
export const QUERIES = [
  'emphasis',
  'link reference definition',
  'code block',
  'heading',
  'list item',
  'table',
  'font',
  'page',
  'form field',
  'encrypted',
  'image',
  'paragraph',
  'footnote',
  'hyperlink',
  'style',
  'section',
  'soup',
  'parser',
  'the',
  'crazy ones',
]

export interface SourceCounts {
  source: string
  files: number
  imported: number
  failed: number
  skipped: number
}

export interface HostileRun {
  corpus: string
  sources: Manifest['sources']
  files: number
  imported: number
  failed: number
  skipped: number
  /** Files on disk that the import neither stored (indexed or failed) nor listed as skipped. */
  unaccounted: string[]
  /** Failed or skipped entries with no reason. */
  withoutReason: string[]
  bySource: SourceCounts[]
  /** Failure reasons with their particulars (numbers, quoted names) taken out, and how many files each. */
  failedByReason: { reason: string; files: number }[]
  skippedByReason: { reason: string; files: number }[]
  chunks: number
  /** Stored chunks whose text or heading holds a control character. */
  chunksWithControls: number
  searches: number
  searchResults: number
  /** Search results whose text or heading holds a control character. */
  resultsWithControls: number
  /** Per-file notices of pages left out (unreadable text layers). */
  unreadablePageNotices: string[]
  importMs: number
  peakRssMb: number
  second: { ms: number; imported: number; unchanged: number; failed: number; notices: string[] }
  /** The CommonMark spec's source, whose front matter ends in `...` (issue 26, defect 2). */
  spec: { title: string | null; whatIsMarkdown: string | null }
}

async function filesOnDisk(root: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
  }
  return out.sort()
}

/** "could not read the PDF: Invalid XRef stream header at 1234" -> "could not read the PDF: Invalid XRef stream header at N". */
export function reasonKind(reason: string): string {
  return reason
    .replace(/"[^"]*"|'[^']*'|\([^)]*\d[^)]*\)/g, '…')
    .replace(/(?<!UTF-)\d+(?:\.\d+)?/g, 'N')
    .replace(/\s+/g, ' ')
    .trim()
}

function tally(reasons: string[]): { reason: string; files: number }[] {
  const m = new Map<string, number>()
  for (const r of reasons) m.set(reasonKind(r), (m.get(reasonKind(r)) ?? 0) + 1)
  return [...m]
    .map(([reason, files]) => ({ reason, files }))
    .sort((a, z) => z.files - a.files || a.reason.localeCompare(z.reason))
}

function bySource(all: string[], report: ImportReport, indexed: Set<string>): SourceCounts[] {
  const top = (p: string) => p.split('/')[0] ?? p
  const sources = [...new Set(all.map(top))].sort()
  const failed = new Set(report.failed.map((f) => f.path))
  const skipped = new Set(report.skipped_files.map((f) => f.path))
  return sources.map((source) => {
    const mine = all.filter((p) => top(p) === source)
    return {
      source,
      files: mine.length,
      imported: mine.filter((p) => indexed.has(p)).length,
      failed: mine.filter((p) => failed.has(p)).length,
      skipped: mine.filter((p) => skipped.has(p)).length,
    }
  })
}

async function controlsInStore(engine: Engine): Promise<{ chunks: number; withControls: number }> {
  let chunks = 0
  let withControls = 0
  for (let offset = 0; ; offset += 2000) {
    const { rows } = await engine.db.query<{ text: string; heading: string }>(
      `SELECT text, heading FROM chunks WHERE collection_id = 'hostile' ORDER BY id LIMIT 2000 OFFSET ${offset}`,
    )
    if (rows.length === 0) break
    chunks += rows.length
    withControls += rows.filter((r) => CONTROL.test(r.text) || CONTROL.test(r.heading)).length
  }
  return { chunks, withControls }
}

async function searchAll(engine: Engine): Promise<{ results: number; withControls: number }> {
  let results = 0
  let withControls = 0
  for (const q of QUERIES) {
    const found = await engine.search(q, { mode: 'keyword', k: 20, scope: { collections: ['hostile'], version: 'all' } })
    results += found.results.length
    withControls += found.results.filter((h) => CONTROL.test(h.text) || CONTROL.test(h.heading)).length
  }
  return { results, withControls }
}

async function specCheck(engine: Engine): Promise<HostileRun['spec']> {
  const { rows } = await engine.db.query<{ title: string | null }>(
    `SELECT title FROM documents WHERE collection_id = 'hostile' AND path = 'commonmark-spec/spec.md'`,
  )
  const found = await engine.search('What is Markdown', {
    mode: 'keyword',
    k: 10,
    scope: { collections: ['hostile'], version: 'all' },
  })
  const hit = found.results.find((h) => h.path === 'commonmark-spec/spec.md' && /What is Markdown\?/.test(h.heading))
  return { title: rows[0]?.title ?? null, whatIsMarkdown: hit?.heading ?? null }
}

export async function runHostile(corpus: string): Promise<HostileRun> {
  const manifest = JSON.parse(await readFile(manifestOf(corpus), 'utf8')) as Manifest
  const data = await tempDir('docent-hostile-')
  const engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'no-models') })
  try {
    const t0 = performance.now()
    const report = await engine.importFolder(corpus, { collection: 'hostile' })
    const importMs = Math.round(performance.now() - t0)
    const all = await filesOnDisk(corpus)
    const { rows: docs } = await engine.db.query<{ path: string; status: string }>(
      `SELECT path, status FROM documents WHERE collection_id = 'hostile'`,
    )
    const indexed = new Set(docs.filter((d) => d.status === 'indexed').map((d) => d.path))
    const stored = new Set(docs.map((d) => d.path))
    const skipped = new Set(report.skipped_files.map((f) => f.path))
    const store = await controlsInStore(engine)
    const search = await searchAll(engine)
    const spec = await specCheck(engine)
    const t1 = performance.now()
    const again = await engine.importFolder(corpus, { collection: 'hostile' })
    return {
      corpus,
      sources: manifest.sources,
      files: all.length,
      imported: indexed.size,
      failed: report.failed.length,
      skipped: report.skipped_files.length,
      unaccounted: all.filter((p) => !stored.has(p) && !skipped.has(p)),
      withoutReason: [...report.failed, ...report.skipped_files].filter((f) => !f.reason.trim()).map((f) => f.path),
      bySource: bySource(all, report, indexed),
      failedByReason: tally(report.failed.map((f) => f.reason)),
      skippedByReason: tally(report.skipped_files.map((f) => f.reason)),
      chunks: store.chunks,
      chunksWithControls: store.withControls,
      searches: QUERIES.length,
      searchResults: search.results,
      resultsWithControls: search.withControls,
      unreadablePageNotices: report.notices.filter((n) => /no readable text/.test(n)),
      importMs,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      second: {
        ms: Math.round(performance.now() - t1),
        imported: again.imported,
        unchanged: again.unchanged,
        failed: again.failed.length,
        notices: again.notices,
      },
      spec,
    }
  } finally {
    await engine.close()
    await data.cleanup()
  }
}

/** The same import of a folder with one small Markdown file: the engine's own peak memory, to read the corpus's against. */
export async function runBaseline(): Promise<{ importMs: number; peakRssMb: number }> {
  const data = await tempDir('docent-hostile-baseline-')
  try {
    const folder = path.join(data.dir, 'docs')
    await mkdir(folder)
    await writeFile(path.join(folder, 'one.md'), '# One\n\nA single small page.\n')
    const engine = await Engine.open({ dataDir: path.join(data.dir, 'index'), modelsDir: path.join(data.dir, 'no-models') })
    try {
      const t0 = performance.now()
      await engine.importFolder(folder, { collection: 'baseline' })
      return { importMs: Math.round(performance.now() - t0), peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }
    } finally {
      await engine.close()
    }
  } finally {
    await data.cleanup()
  }
}

export function formatRun(r: HostileRun): string {
  const lines = [
    formatTable(
      ['source', 'package', 'files', 'imported', 'failed', 'skipped'],
      r.bySource.map((s) => {
        const src = r.sources.find((x) => x.id === s.source)
        return [s.source, src ? `${src.registry} ${src.name}@${src.version}` : '-', s.files, s.imported, s.failed, s.skipped]
      }),
    ),
    `total: ${r.files} files, ${r.imported} imported, ${r.failed} failed, ${r.skipped} skipped; ${r.unaccounted.length} unaccounted, ${r.withoutReason.length} without a reason`,
    '',
    formatTable(
      ['failed files', 'reason (particulars as N or …)'],
      r.failedByReason.map((f) => [f.files, f.reason]),
    ),
    '',
    formatTable(
      ['skipped files', 'reason'],
      r.skippedByReason.map((f) => [f.files, f.reason]),
    ),
    '',
    `chunks: ${r.chunks}, with a control character: ${r.chunksWithControls}`,
    `searches: ${r.searches}, results: ${r.searchResults}, with a control character: ${r.resultsWithControls}`,
    `pages left out as unreadable: ${r.unreadablePageNotices.length} files (${r.unreadablePageNotices.join('; ') || 'none'})`,
    `CommonMark spec: title ${JSON.stringify(r.spec.title)}, "What is Markdown" found under ${JSON.stringify(r.spec.whatIsMarkdown)}`,
    `import: ${(r.importMs / 1000).toFixed(1)} s, peak RSS ${r.peakRssMb} MB (this process, parser thread included)`,
    `second sync: ${(r.second.ms / 1000).toFixed(1)} s, ${r.second.imported} imported, ${r.second.unchanged} unchanged, ${r.second.failed} failed (${r.second.notices.find((n) => /not read again/.test(n)) ?? 'no failed file skipped'})`,
  ]
  return lines.join('\n')
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)
if (isMain) {
  const args = process.argv.slice(2)
  const jsonAt = args.indexOf('--json')
  const json = jsonAt >= 0 ? args[jsonAt + 1] : undefined
  const corpus = path.resolve(args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--json') ?? '.hostile/corpus')
  if (args.includes('--baseline')) {
    void runBaseline().then((b) =>
      process.stdout.write(`baseline: one Markdown file imported in ${b.importMs} ms, peak RSS ${b.peakRssMb} MB\n`),
    )
  } else
    runHostile(corpus).then(
      async (r) => {
        process.stdout.write(formatRun(r) + '\n')
        if (json) await writeFile(json, JSON.stringify(r, null, 2) + '\n')
      },
      (err: unknown) => {
        process.stderr.write(`hostile run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
        process.exitCode = 1
      },
    )
}
