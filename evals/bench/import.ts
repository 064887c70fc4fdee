import { rm } from 'node:fs/promises'
import path from 'node:path'
import { Engine } from '../../src/engine/engine'
import { fixtureModels, mcpCorpus, tempDir } from '../../src/test-support/paths'
import { dirBytes, dirSizeMb, peakMemory, printTable, r1 } from './machine'
import { writeMarkdownCorpus } from './synthetic'

/**
 * Import throughput on the MCP docs and on a generated 10,000-document corpus, with the fixture
 * models (a tiny random BERT: the embedding share here is far below a real model's) and with no
 * model (keyword-only import) as the baseline in the same run.
 */
export async function benchImport(opts: { docs: number }): Promise<Record<string, unknown>> {
  const synthetic = await tempDir('docent-bench-corpus-')
  const { bytes } = await writeMarkdownCorpus(synthetic.dir, opts.docs)
  const corpora = [
    { name: 'MCP docs', dir: mcpCorpus },
    { name: `synthetic ${opts.docs.toLocaleString('en-US')} docs (${r1(bytes / 2 ** 20)} MB)`, dir: synthetic.dir },
  ]
  const rows: (string | number)[][] = []
  const results: Record<string, unknown>[] = []
  for (const corpus of corpora) {
    for (const models of [
      { label: 'fixture models', dir: fixtureModels },
      { label: 'no model', dir: null },
    ]) {
      const data = await tempDir('docent-bench-db-')
      const engine = await Engine.open({ dataDir: data.dir, modelsDir: models.dir ?? path.join(data.dir, 'none') })
      const mem = peakMemory()
      const report = await engine.importFolder(corpus.dir, { collection: 'bench' })
      const peak = mem.stop()
      await engine.close()
      const size = await dirSizeMb(data.dir)
      await data.cleanup()
      const secs = report.ms / 1000
      const t = report.timings
      const total = Object.values(t).reduce((a, b) => a + b, 0) || 1
      const mb = (await dirBytes(corpus.dir, true)) / 2 ** 20
      const row = {
        corpus: corpus.name,
        models: models.label,
        files: report.imported,
        chunks: report.chunks_written,
        seconds: r1(secs),
        files_per_s: r1(report.imported / secs),
        mb_per_s: r1(mb / secs),
        chunks_per_s: r1(report.chunks_written / secs),
        peak_rss_mb: peak,
        db_mb: size,
        embed_share: `${Math.round((100 * t.embed) / total)}%`,
        parse_share: `${Math.round((100 * (t.parse + t.read + t.walk)) / total)}%`,
        chunk_share: `${Math.round((100 * t.chunk) / total)}%`,
        write_share: `${Math.round((100 * t.write) / total)}%`,
        timings_ms: t,
      }
      results.push(row)
      rows.push([
        row.corpus,
        row.models,
        row.files,
        row.chunks,
        row.seconds,
        row.files_per_s,
        row.mb_per_s,
        row.chunks_per_s,
        row.peak_rss_mb,
        row.db_mb,
        row.embed_share,
        row.parse_share,
        row.chunk_share,
        row.write_share,
      ])
    }
  }
  await rm(synthetic.dir, { recursive: true, force: true })
  printTable(
    "Import (one process; fixture embedder is a 2-layer random BERT, so its share is far below a real model's)",
    [
      'corpus',
      'models',
      'files',
      'chunks',
      's',
      'files/s',
      'MB/s',
      'chunks/s',
      'peak RSS MB',
      'DB MB',
      'embed',
      'read+parse',
      'chunk',
      'write',
    ],
    rows,
  )
  return { import: results }
}
