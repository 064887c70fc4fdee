#!/usr/bin/env tsx
/**
 * What a sync costs a folder of failed files (issue 26: 15 s a sync for 350 failed PDFs). The
 * folder holds `--copies` copies of every PDF of the hostile corpus that fails (encrypted ones, and
 * scans with no text layer), as real files under distinct names; it is imported once, then synced
 * again unchanged, and the second sync's time and what it parsed are printed.
 *
 *   npx tsx evals/hostile/resync.ts .hostile/corpus [--copies 18]
 */
import { cp, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { tempDir } from '../../src/test-support/paths'

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const corpus = path.resolve(args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--copies') ?? '.hostile/corpus')
  const at = args.indexOf('--copies')
  const copies = at >= 0 ? Number(args[at + 1]) : 18
  const work = await tempDir('docent-resync-')
  try {
    const probe = await Engine.open({ dataDir: path.join(work.dir, 'probe'), modelsDir: path.join(work.dir, 'none') })
    let failing: string[]
    try {
      const r = await probe.importFolder(path.join(corpus, 'pypdf'), { collection: 'probe' })
      failing = r.failed.map((f) => f.path).filter((p) => p.endsWith('.pdf'))
    } finally {
      await probe.close()
    }
    const folder = path.join(work.dir, 'failed-pdfs')
    for (let c = 0; c < copies; c++) {
      await mkdir(path.join(folder, `copy-${c}`), { recursive: true })
      for (const f of failing) await cp(path.join(corpus, 'pypdf', f), path.join(folder, `copy-${c}`, f.replace(/\//g, '_')))
    }
    const engine = await Engine.open({ dataDir: path.join(work.dir, 'index'), modelsDir: path.join(work.dir, 'none') })
    try {
      const t0 = performance.now()
      const first = await engine.importFolder(folder, { collection: 'failed' })
      const firstMs = performance.now() - t0
      const t1 = performance.now()
      const second = await engine.importFolder(folder, { collection: 'failed' })
      const secondMs = performance.now() - t1
      const note = second.notices.find((n) => /not read again/.test(n)) ?? 'every failed file was read and parsed again'
      process.stdout.write(
        `${first.failed.length} failed PDFs (${failing.length} distinct, ${copies} copies each): first import ${(firstMs / 1000).toFixed(1)} s (parse ${(first.timings.parse / 1000).toFixed(1)} s); ` +
          `second sync ${(secondMs / 1000).toFixed(1)} s (parse ${(second.timings.parse / 1000).toFixed(1)} s, ${second.failed.length} listed as failed; ${note})\n`,
      )
    } finally {
      await engine.close()
    }
  } finally {
    await work.cleanup()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`resync: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
