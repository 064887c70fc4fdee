/**
 * A real import in a process of its own, through a parser worker entry the test names, for fault
 * tests where the parse must take the whole process down (a native crash):
 *
 *   node --import tsx src/test-support/import-child.ts <folder> <data dir> <collection> <worker entry>
 *
 * Prints the import report as JSON on stdout when the import ends; a process that dies first
 * prints nothing. Keyword only (no models), approximate token counts: the fault is in reading.
 */
import path from 'node:path'
import { Engine } from '../engine/engine'
import { approximateTokenCounter } from '../engine/core/model-ports'
import { importFolder } from '../engine/ingest/importer'
import { ParsePool } from '../engine/ingest/parsers/worker-pool'

const [folder, data, collection, entry] = process.argv.slice(2)
if (!folder || !data || !collection || !entry) throw new Error('usage: import-child.ts <folder> <data> <collection> <entry>')
const engine = await Engine.open({ dataDir: data, modelsDir: path.join(data, 'no-models') })
const pool = new ParsePool({ entry })
try {
  const report = await importFolder(engine.db, folder, {
    collection,
    embedder: null,
    tokenCounter: approximateTokenCounter,
    parsePool: pool,
  })
  process.stdout.write(JSON.stringify(report) + '\n')
} finally {
  await pool.close()
  await engine.close()
}
