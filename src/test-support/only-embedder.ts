import { existsSync } from 'node:fs'
import { mkdir, symlink } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import type { Engine } from '../engine/engine'
import { engineOverFiles } from './engine-over-files'
import { realModels, tempDir } from './paths'

/** A models folder under `root` holding only `dir` as its embedder, so the engine has no choice to make. */
export async function onlyEmbedder(dir: string, root: string): Promise<string> {
  const models = path.join(root, 'models-' + path.basename(dir))
  await mkdir(path.join(models, 'embedding'), { recursive: true })
  await symlink(dir, path.join(models, 'embedding', path.basename(dir)))
  return models
}

/** The real embedder models:dev installs (all-MiniLM-L6-v2 int8), for the real-model suite. */
export const realEmbedderDir = path.join(realModels, 'embedding', 'all-minilm-l6-v2-int8')

/**
 * An engine over `files` imported as `collection` with the real embedder only (no chat model, no
 * reranker); the real-model suite's tests build on it. Fails with the command that installs the
 * embedder when it is missing.
 */
export async function engineWithRealEmbedder(
  files: Record<string, string>,
  collection: string,
): Promise<{ engine: Engine; cleanup: () => Promise<void> }> {
  if (!existsSync(realEmbedderDir))
    throw new Error(`no real embedder at ${realEmbedderDir}: run npm run models:dev -- ${realModels} --only embedding`)
  const models = await tempDir()
  try {
    const { engine, cleanup } = await engineOverFiles(files, collection, {
      modelsDir: await onlyEmbedder(realEmbedderDir, models.dir),
    })
    return {
      engine,
      cleanup: async () => {
        await cleanup()
        await models.cleanup()
      },
    }
  } catch (e) {
    await models.cleanup()
    throw e
  }
}

/**
 * For a describe block of the real-model suite: the engine of `engineWithRealEmbedder`, opened
 * before its tests and closed after them; call the returned function inside a test.
 */
export function realEmbedderEngine(files: Record<string, string>, collection: string): () => Engine {
  let engine: Engine | undefined
  let cleanup: (() => Promise<void>) | undefined
  beforeAll(async () => {
    ;({ engine, cleanup } = await engineWithRealEmbedder(files, collection))
  })
  afterAll(async () => {
    await cleanup?.()
  })
  return () => {
    if (!engine) throw new Error('the engine opens in beforeAll: call this inside a test')
    return engine
  }
}
