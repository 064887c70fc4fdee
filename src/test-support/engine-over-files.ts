import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Engine } from '../engine/engine'
import { tempDir } from './paths'

/**
 * An engine over a folder of `files` (relative path -> text), imported as one collection; the
 * import must not fail a file. With no `modelsDir` it has no models. `cleanup` closes the engine
 * and removes both folders.
 */
export async function engineOverFiles(
  files: Record<string, string>,
  collection: string,
  opts: { modelsDir?: string } = {},
): Promise<{ engine: Engine; cleanup: () => Promise<void> }> {
  const corpus = await tempDir()
  const data = await tempDir()
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(corpus.dir, rel)), { recursive: true })
    await writeFile(path.join(corpus.dir, rel), text)
  }
  const engine = await Engine.open({ dataDir: data.dir, modelsDir: opts.modelsDir ?? path.join(data.dir, 'no-models') })
  const cleanup = async () => {
    await engine.close()
    await corpus.cleanup()
    await data.cleanup()
  }
  const { failed } = await engine.importFolder(corpus.dir, { collection })
  if (failed.length) {
    await cleanup()
    throw new Error(`the test files did not import: ${JSON.stringify(failed)}`)
  }
  return { engine, cleanup }
}
