import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { repoRoot, tempDir } from '../../src/test-support/paths'
import { SOURCES } from './fetch'
import type { HostileRun } from './run'

/**
 * The hostile-folder suite (issue 26): the real test files of pypdf, pikepdf, OCRmyPDF (its hostile
 * PDFs), python-docx, mammoth, the CommonMark spec and Beautiful Soup's fuzzer, fetched by `npx tsx evals/hostile/fetch.ts .hostile`
 * (CI runs it in .ci/run), imported whole in a process of its own (evals/hostile/run.ts) so that
 * its peak memory is the import's. Every file must end imported, failed with a reason or skipped
 * with a reason; nothing may crash; no stored chunk and no search result may hold a control
 * character; a second sync reads no failed file again. Without the corpus it skips here, saying
 * so, and fails in CI.
 */

const run = promisify(execFile)
const corpus = path.resolve(process.env['DOCENT_HOSTILE_CORPUS'] ?? path.join(repoRoot, '.hostile/corpus'))
const missing = existsSync(corpus) ? null : `no hostile corpus at ${corpus}: run npx tsx evals/hostile/fetch.ts .hostile first`
if (missing && !process.env['CI']) console.warn(`evals/hostile/hostile.test.ts: ${missing}; skipped`)

/** Generous, and not a matter of speed: about 1 GB was measured (docs/benchmarks.md, "Hostile folder"). */
const PEAK_RSS_CEILING_MB = 2048

describe.skipIf(missing !== null && !process.env['CI'])('the hostile folder', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('imports every real test file or fails it with a reason, never crashes, and keeps control characters out of results', async () => {
    expect(missing, missing ?? '').toBeNull()
    const out = await tempDir('docent-hostile-report-')
    cleanups.push(out.cleanup)
    const json = path.join(out.dir, 'hostile.json')
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'evals/hostile/run.ts', corpus, '--json', json], {
      cwd: repoRoot,
      maxBuffer: 1 << 24,
    })
    console.log(stdout)
    const r = JSON.parse(await readFile(json, 'utf8')) as HostileRun

    // The corpus is the pinned one, all of it.
    expect(r.sources.map((s) => `${s.name}@${s.version}`)).toEqual(SOURCES.map((s) => `${s.name}@${s.version}`))
    for (const s of r.sources) expect(r.bySource.find((b) => b.source === s.id)?.files, s.id).toBe(s.files)
    expect(r.files).toBeGreaterThan(1400)

    // Every file accounted for, each failure and skip with a reason.
    expect(r.unaccounted).toEqual([])
    expect(r.withoutReason).toEqual([])
    expect(r.imported + r.failed + r.skipped).toBe(r.files)
    expect(r.imported).toBeGreaterThan(1000)

    // No control character in the index or in what a search shows.
    expect(r.chunks).toBeGreaterThan(1000)
    expect(r.chunksWithControls).toBe(0)
    expect(r.searchResults).toBeGreaterThan(100)
    expect(r.resultsWithControls).toBe(0)

    // The spec whose front matter ends in `...` is read from its first section on.
    expect(r.spec.title).toBe('CommonMark Spec')
    expect(r.spec.whatIsMarkdown).toMatch(/Introduction > What is Markdown\?$/)

    // The second sync reads no failed file again, and lists every one of them.
    expect(r.second).toMatchObject({ imported: 0, unchanged: r.imported, failed: r.failed })
    expect(r.second.notices).toContainEqual(
      expect.stringMatching(new RegExp(`^${r.failed} files that failed before were not read again`)),
    )

    expect(r.peakRssMb).toBeLessThan(PEAK_RSS_CEILING_MB)
  }, 900_000)
})
