import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import { repoRoot, tempDir } from '../../test-support/paths'
import type { ImportReport } from './importer'
import { makePdf } from './parsers/__fixtures__/generate'
import { ENGINE_STOPPED_REASON } from './sync/reading'

/**
 * A PDF whose reading takes the whole engine down (a native crash in pdf.js's canvas or
 * tesseract's wasm; here a parser worker that sends its own process SIGSEGV on files named
 * "segv", hang-worker.testutil.ts) must not stop the folder for good: imports are resumed by
 * importing again, and before this every resumed import read that file first and died again.
 * Each run is a real import in a process of its own (test-support/import-child.ts).
 */

const here = path.dirname(fileURLToPath(import.meta.url))
const ENTRY = path.join(here, 'parsers/hang-worker.testutil.ts')

interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  report: ImportReport | null
}

function importInChild(folder: string, data: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'src/test-support/import-child.ts'), folder, data, 'docs', ENTRY],
      { cwd: repoRoot, maxBuffer: 1 << 24 },
      (err, stdout) => {
        const e = err as (Error & { code?: number; signal?: NodeJS.Signals }) | null
        const line = stdout.trim().split('\n').at(-1)
        resolve({
          code: e ? (e.code ?? null) : 0,
          signal: e?.signal ?? null,
          report: line ? (JSON.parse(line) as ImportReport) : null,
        })
      },
    )
  })
}

async function documents(data: string): Promise<{ path: string; status: string; error: string | null }[]> {
  const engine = await Engine.open({ dataDir: data, modelsDir: path.join(data, 'no-models') })
  try {
    expect(await checkIndexConsistency(engine.db)).toEqual([])
    return (
      await engine.db.query<{ path: string; status: string; error: string | null }>(
        'SELECT path, status, error FROM documents ORDER BY path',
      )
    ).rows
  } finally {
    await engine.close()
  }
}

describe('a file whose reading kills the engine', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('is failed with a reason on the next import, which imports the rest; it is read again only when it changes', async () => {
    const folder = await tempDir()
    const data = await tempDir()
    cleanups.push(folder.cleanup, data.cleanup)
    const page = (text: string) => makePdf([[{ size: 11, y: 700, text }]])
    await writeFile(path.join(folder.dir, 'a.md'), '# Alpha\n\nThe first note.\n')
    await writeFile(path.join(folder.dir, 'b-segv.pdf'), page('the crashing scan'))
    await writeFile(path.join(folder.dir, 'c.md'), '# Gamma\n\nThe godwit note.\n')
    await writeFile(path.join(folder.dir, 'd.pdf'), page('the dunlin leaflet'))

    // The fault: the first import dies with the signal while the PDF is read (a.md, read before
    // it, was still waiting for its batch to be written).
    const first = await importInChild(folder.dir, data.dir)
    expect(first).toMatchObject({ signal: 'SIGSEGV', report: null })
    expect(await documents(data.dir)).toEqual([])

    // The next import (a resume) fails that file with the reason and imports the rest.
    const second = await importInChild(folder.dir, data.dir)
    expect(second.signal).toBeNull()
    expect(second.code).toBe(0)
    expect(second.report!.failed).toEqual([{ path: 'b-segv.pdf', reason: ENGINE_STOPPED_REASON }])
    expect(second.report!.imported).toBe(3)
    expect(second.report!.notices).toContainEqual(
      expect.stringMatching(/^b-segv\.pdf: the engine stopped while reading this file/),
    )
    expect(await documents(data.dir)).toEqual([
      { path: 'a.md', status: 'indexed', error: null },
      { path: 'b-segv.pdf', status: 'failed', error: ENGINE_STOPPED_REASON },
      { path: 'c.md', status: 'indexed', error: null },
      { path: 'd.pdf', status: 'indexed', error: null },
    ])

    // Unchanged, it is listed as failed without being read (reading it would kill this import too).
    const third = await importInChild(folder.dir, data.dir)
    expect(third.code).toBe(0)
    expect(third.report!.failed).toEqual(second.report!.failed)
    expect(third.report!.notices).toContainEqual(expect.stringMatching(/^1 file that failed before was not read again/))

    // Changed, it is read again: here it still kills the engine, which proves it was read.
    await writeFile(path.join(folder.dir, 'b-segv.pdf'), page('the crashing scan, saved again'))
    const changed = await importInChild(folder.dir, data.dir)
    expect(changed.signal).toBe('SIGSEGV')
  }, 600_000)
})
