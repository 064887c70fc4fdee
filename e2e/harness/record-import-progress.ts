import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { ImportProgress } from '../../src/shared/api'
import { Engine } from '../../src/engine/engine'

/**
 * Records the progress events of one real import, as the app's window receives them, for the
 * import estimate's test on real data (e2e/import-eta-real.test.ts):
 *
 *   npx tsx e2e/harness/record-import-progress.ts <folder> <embedding-model-dir> <out.json>
 *
 * The embedding model folder (e.g. all-minilm-l6-v2 from `npm run models:dev`) is copied into a
 * temporary models folder, so nothing is written beside it. Only the fields the estimate reads are
 * kept, one row per event: [elapsedMs, phase, filesDone, bytesDone, bytesTotal, chunksWritten, textsEmbedded, etaMs].
 */
async function main(): Promise<void> {
  const [folder, model, out] = process.argv.slice(2)
  if (!folder || !model || !out) throw new Error('usage: record-import-progress.ts <folder> <embedding-model-dir> <out.json>')
  const temp = await mkdtemp(path.join(os.tmpdir(), 'docent-record-'))
  try {
    const models = path.join(temp, 'models')
    await mkdir(path.join(models, 'embedding'), { recursive: true })
    await cp(model, path.join(models, 'embedding', path.basename(model)), { recursive: true })
    const engine = await Engine.open({ dataDir: path.join(temp, 'index'), modelsDir: models })
    const rows: (string | number | null)[][] = []
    const t0 = Date.now()
    const row = (p: ImportProgress) => [
      p.elapsedMs,
      p.phase,
      p.filesDone,
      p.bytesDone,
      p.bytesTotal,
      p.chunksWritten,
      p.textsEmbedded,
      p.etaMs,
    ]
    const report = await engine.importFolder(folder, { collection: 'recorded', onProgress: (p) => rows.push(row(p)) })
    const ms = Date.now() - t0
    await engine.close()
    const meta = {
      recorded_with: `npx tsx e2e/harness/record-import-progress.ts ${folder} ${model} ${out}`,
      recorded_at: new Date().toISOString(),
      cores: os.cpus().length,
      load_1m_at_end: Number(os.loadavg()[0]!.toFixed(2)),
      import_ms: ms,
      files: report.imported,
      texts_embedded: report.texts_embedded,
      columns: ['elapsedMs', 'phase', 'filesDone', 'bytesDone', 'bytesTotal', 'chunksWritten', 'textsEmbedded', 'etaMs'],
    }
    await writeFile(out, `${JSON.stringify({ ...meta, events: rows })}\n`)
    console.log(
      `${rows.length} progress events over ${(ms / 1000).toFixed(1)} s, ${report.imported} files, ${report.texts_embedded} passages embedded -> ${out}`,
    )
  } finally {
    await rm(temp, { recursive: true, force: true })
  }
}

await main()
