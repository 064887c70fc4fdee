import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Embedder, Loaded } from './core/model-ports'
import type { Db } from './store/db'
import { ensureVectorIndex } from './store/vector-index'
import {
  modelFolderOf,
  readIndexModel,
  switchIndexModel,
  writeIndexModel,
  type SwitchProgress,
  type SwitchReport,
} from './ingest/embedding-switch'
import { activeModelPath } from './models/active'
import { loadEmbedderAt, type LoadedModels } from './models/loaded'

/**
 * The embedding model the index answers with, and the switch to another (ADR 0007). This is the
 * engine's: it reads and records the index's model and creates vector indexes. The model cache
 * (models/loaded.ts) only loads, keeps and frees what it is given.
 */

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/**
 * The embedding model the index answers with. Usually the selected one; after another model is
 * selected it stays the one the index was built with (if still on disk) until switchEmbedding()
 * completes, so vector search never goes blind in between.
 */
export async function loadIndexEmbedder(db: Db, modelsDir: string): Promise<Loaded<Embedder>> {
  const dir = activeModelPath(modelsDir, 'embedding')
  if (!dir) return { model: null, problem: `no embedding model is installed in ${modelsDir}` }
  try {
    const index = await readIndexModel(db)
    const indexDir = index ? path.join(modelsDir, 'embedding', modelFolderOf(index.id)) : null
    if (index && indexDir && indexDir !== dir && existsSync(indexDir)) {
      const old = await loadEmbedderAt(indexDir).catch(() => null)
      if (old && old.id === index.id) {
        await ensureVectorIndex(db, old.id, old.dims)
        return { model: old, problem: null }
      }
      await old?.dispose()
    }
    // The index model is this one, or gone (its vectors are re-embedded in place by the next import).
    const model = await loadEmbedderAt(dir)
    await ensureVectorIndex(db, model.id, model.dims)
    if (index?.id !== model.id) await writeIndexModel(db, { id: model.id, dims: model.dims })
    return { model, problem: null }
  } catch (err) {
    return { model: null, problem: `the embedding model could not be loaded (${message(err)})` }
  }
}

/**
 * The selected embedding model when it is not the one the index answers with (a switch is due),
 * else null. Compares folders: the ids carry the folder name.
 */
export async function embeddingSwitchPending(models: LoadedModels): Promise<{ from: string; to: string } | null> {
  const dir = activeModelPath(models.modelsDir, 'embedding')
  const { model } = await models.embedder()
  if (!dir || !model || modelFolderOf(model.id) === path.basename(dir)) return null
  return { from: model.id, to: path.basename(dir) }
}

/**
 * Loads the selected embedding model and builds the index's vectors with it (ingest/embedding-switch.ts).
 * When the switch completes it becomes the embedder and the previous one is retired; otherwise
 * it is freed again. Null when no switch is due.
 */
export async function switchEmbedding(
  db: Db,
  models: LoadedModels,
  opts: {
    signal?: AbortSignal | undefined
    onProgress?: ((p: SwitchProgress) => void) | undefined
    exclusive: <T>(fn: () => Promise<T>) => Promise<T>
  },
): Promise<SwitchReport | null> {
  const pending = await embeddingSwitchPending(models)
  const dir = activeModelPath(models.modelsDir, 'embedding')
  if (!pending || !dir) return null
  const target = await loadEmbedderAt(dir)
  let report: SwitchReport
  try {
    report = await switchIndexModel(db, target, {
      from: pending.from,
      exclusive: opts.exclusive,
      signal: opts.signal,
      onProgress: opts.onProgress,
    })
  } catch (err) {
    await target.dispose()
    throw err
  }
  if (!report.switched) {
    await target.dispose()
    return report
  }
  await models.replaceEmbedder(target)
  return report
}
