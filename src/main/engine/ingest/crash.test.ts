import { spawn } from 'node:child_process'
import { cp } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { checkIndexConsistency } from '../store/consistency'
import { mcpCorpus, repoRoot, tempDir } from '../../../test-support/paths'

/**
 * Runs a real `docent ingest` in a child process and SIGKILLs it once it has written
 * `killAfterDocs` documents (read from its JSON-lines progress on stderr).
 */
function ingestAndKill(folder: string, data: string, killAfterDocs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(repoRoot, 'src/cli/main.ts'),
        'ingest',
        folder,
        '--collection',
        'mcp',
        '--data',
        data,
        '--models',
        path.join(data, 'none'),
        '--json',
      ],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, DOCENT_PROGRESS: 'jsonl' },
      },
    )
    let buffer = ''
    let imported = 0
    child.stderr.on('data', (d: Buffer) => {
      buffer += d.toString()
      const lines = buffer.split('\n')
      buffer = lines.pop() ?? ''
      for (const line of lines) {
        try {
          imported = Math.max(imported, (JSON.parse(line) as { imported: number }).imported)
        } catch {
          continue
        }
        if (imported >= killAfterDocs) child.kill('SIGKILL')
      }
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0) resolve(imported)
      else reject(new Error(`ingest exited with ${code}`))
    })
  })
}

describe('killing the process mid-import', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  it('leaves a database that opens, with no half-written document, and a re-run completes it', async () => {
    const corpus = await tempDir()
    const data = await tempDir()
    cleanups.push(corpus.cleanup, data.cleanup)
    // One release of the spec and its guides: enough files to be mid-write when killed.
    await cp(path.join(mcpCorpus, 'specification/2025-06-18'), path.join(corpus.dir, 'specification/2025-06-18'), {
      recursive: true,
    })
    await cp(path.join(mcpCorpus, 'docs/2025-06-18'), path.join(corpus.dir, 'docs/2025-06-18'), { recursive: true })

    const before = await ingestAndKill(corpus.dir, data.dir, 10)
    expect(before).toBeGreaterThanOrEqual(10)

    const engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'none') })
    try {
      expect(await checkIndexConsistency(engine.db)).toEqual([])
      const resumed = await engine.ingest(corpus.dir, { collection: 'mcp' })
      expect(resumed.failed).toEqual([])
      expect(await checkIndexConsistency(engine.db)).toEqual([])
      const ids = (await engine.db.query<{ id: string; text: string }>('SELECT id, text FROM chunks ORDER BY id')).rows

      const clean = await tempDir()
      cleanups.push(clean.cleanup)
      const fresh = await Engine.open({ dataDir: clean.dir, modelsDir: path.join(clean.dir, 'none') })
      try {
        await fresh.ingest(corpus.dir, { collection: 'mcp' })
        const freshIds = (await fresh.db.query<{ id: string; text: string }>('SELECT id, text FROM chunks ORDER BY id')).rows
        expect(ids).toEqual(freshIds)
      } finally {
        await fresh.close()
      }
    } finally {
      await engine.close()
    }
  })
})
