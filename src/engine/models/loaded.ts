import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import type { Db } from '../store/db'
import { ensureVectorIndex } from '../store/vector-index'
import { approximateTokenCounter, type Embedder, type Loaded, type TokenCounter } from '../core/model-ports'
import {
  modelFolderOf,
  readIndexModel,
  switchIndexModel,
  writeIndexModel,
  type SwitchProgress,
  type SwitchReport,
} from '../ingest/embedding-switch'
import { MODEL_ROLES, type ModelRole } from '../../shared/models'
import { activeModelPath } from './active'
import type { GgufChatModel } from './runtime/llm'
import type { OnnxReranker } from './runtime/reranker'

interface Disposable {
  dispose(): unknown
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/**
 * The engine's models, one per role, each loaded on first use and shared until reload() or
 * dispose(). A failed load is remembered with its reason rather than retried on every question:
 * reload() after the models on disk change.
 */
export class LoadedModels {
  private embedderP: Promise<Loaded<Embedder>> | null = null
  private rerankerP: Promise<Loaded<OnnxReranker>> | null = null
  private chatP: Promise<Loaded<GgufChatModel>> | null = null
  /** Models replaced while a search may still hold them: freed at reload or dispose. */
  private retired: Disposable[] = []

  constructor(
    private readonly db: Db,
    readonly modelsDir: string,
  ) {}

  /**
   * The embedding model the index answers with. Usually the selected one; after another model is
   * selected it stays the one the index was built with (if still on disk) until switchEmbedding()
   * completes, so vector search never goes blind in between (ADR 0007).
   */
  embedder(): Promise<Loaded<Embedder>> {
    this.embedderP ??= this.loadEmbedder()
    return this.embedderP
  }

  private async loadEmbedder(): Promise<Loaded<Embedder>> {
    const dir = activeModelPath(this.modelsDir, 'embedding')
    if (!dir) return { model: null, problem: `no embedding model is installed in ${this.modelsDir}` }
    try {
      // The model runs in a worker thread: its inference would otherwise stall searches meanwhile.
      const { loadEmbedderThreaded: loadEmbedder } = await import('./runtime/embedder-thread')
      const index = await readIndexModel(this.db)
      const indexDir = index ? path.join(this.modelsDir, 'embedding', modelFolderOf(index.id)) : null
      if (index && indexDir && indexDir !== dir && existsSync(indexDir)) {
        const old = await loadEmbedder(indexDir).catch(() => null)
        if (old && old.id === index.id) {
          await ensureVectorIndex(this.db, old.id, old.dims)
          return { model: old, problem: null }
        }
        await old?.dispose()
      }
      // The index model is this one, or gone (its vectors are re-embedded in place by the next import).
      const model = await loadEmbedder(dir)
      await ensureVectorIndex(this.db, model.id, model.dims)
      if (index?.id !== model.id) await writeIndexModel(this.db, { id: model.id, dims: model.dims })
      return { model, problem: null }
    } catch (err) {
      return { model: null, problem: `the embedding model could not be loaded (${message(err)})` }
    }
  }

  /**
   * The selected embedding model when it is not the one the index answers with (a switch is due),
   * else null. Compares folders: the ids carry the folder name.
   */
  async embeddingSwitchPending(): Promise<{ from: string; to: string } | null> {
    const dir = activeModelPath(this.modelsDir, 'embedding')
    const { model } = await this.embedder()
    if (!dir || !model || modelFolderOf(model.id) === path.basename(dir)) return null
    return { from: model.id, to: path.basename(dir) }
  }

  /**
   * Loads the selected embedding model and builds the index's vectors with it (ingest/embedding-switch.ts).
   * When the switch completes it becomes the embedder and the previous one is retired; otherwise
   * it is freed again. Null when no switch is due.
   */
  async switchEmbedding(opts: {
    signal?: AbortSignal | undefined
    onProgress?: ((p: SwitchProgress) => void) | undefined
    exclusive: <T>(fn: () => Promise<T>) => Promise<T>
  }): Promise<SwitchReport | null> {
    const pending = await this.embeddingSwitchPending()
    const dir = activeModelPath(this.modelsDir, 'embedding')
    if (!pending || !dir) return null
    // The model runs in a worker thread: its inference would otherwise stall searches meanwhile.
    const { loadEmbedderThreaded: loadEmbedder } = await import('./runtime/embedder-thread')
    const target = await loadEmbedder(dir)
    let report: SwitchReport
    try {
      report = await switchIndexModel(this.db, target, {
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
    const old = await this.embedderP
    if (old?.model) this.retired.push(old.model)
    this.embedderP = Promise.resolve({ model: target, problem: null })
    return report
  }

  reranker(): Promise<Loaded<OnnxReranker>> {
    this.rerankerP ??= (async () => {
      const dir = activeModelPath(this.modelsDir, 'reranker')
      if (!dir) return { model: null, problem: `no reranker model is installed in ${this.modelsDir}` }
      try {
        const { loadReranker } = await import('./runtime/reranker')
        return { model: await loadReranker(dir), problem: null }
      } catch (err) {
        return { model: null, problem: `the reranker could not be loaded (${message(err)})` }
      }
    })()
    return this.rerankerP
  }

  /** The active answer model (GGUF); null (with the reason) when none is installed: ask then runs search-only. */
  chatModel(): Promise<Loaded<GgufChatModel>> {
    this.chatP ??= this.loadChat()
    return this.chatP
  }

  private async loadChat(): Promise<Loaded<GgufChatModel>> {
    const file = activeModelPath(this.modelsDir, 'llm')
    if (!file) return { model: null, problem: `no language model is installed in ${this.modelsDir}` }
    const { loadChatModel } = await import('./runtime/llm')
    let firstError: string | null = null
    // The chosen model first; if it cannot load (truncated download, too little memory), the
    // other installed ones in name order, so answers keep working; the notice says what happened.
    const others = readdirSync(path.dirname(file))
      .filter((f) => f.endsWith('.gguf') && path.join(path.dirname(file), f) !== file)
      .sort()
      .map((f) => path.join(path.dirname(file), f))
    for (const candidate of [file, ...others]) {
      try {
        const model = await loadChatModel(candidate)
        const problem = firstError
          ? `the chosen language model could not be loaded (${firstError}); using ${path.basename(candidate)} instead`
          : null
        return { model, problem }
      } catch (err) {
        firstError ??= message(err)
      }
    }
    return { model: null, problem: `the language model could not be loaded (${firstError})` }
  }

  /** Counts tokens the way the embedding model does, so chunks fit it; an estimate when there is none. */
  async tokenCounter(): Promise<TokenCounter> {
    const { model } = await this.embedder()
    if (!model) return approximateTokenCounter
    return { id: `tokens:${model.id}`, count: (t) => model.countTokens(t) }
  }

  /**
   * Forgets the loaded models of some roles (all by default) and frees them, with any retired
   * ones, so the next use loads what is active now.
   */
  async reload(roles: readonly ModelRole[] = MODEL_ROLES): Promise<void> {
    const old: (Promise<Loaded<Disposable>> | null)[] = []
    if (roles.includes('embedding')) {
      old.push(this.embedderP)
      this.embedderP = null
    }
    if (roles.includes('reranker')) {
      old.push(this.rerankerP)
      this.rerankerP = null
    }
    if (roles.includes('llm')) {
      old.push(this.chatP)
      this.chatP = null
    }
    for (const loaded of await Promise.all(old)) await loaded?.model?.dispose()
    for (const m of this.retired.splice(0)) await m.dispose()
  }

  /** Frees every loaded and retired model at once (the engine is closing). */
  async dispose(): Promise<void> {
    const [e, r, c] = await Promise.all([this.embedderP, this.rerankerP, this.chatP])
    await Promise.all([
      e?.model?.dispose(),
      r?.model?.dispose(),
      c?.model?.dispose(),
      ...this.retired.splice(0).map((m) => m.dispose()),
    ])
  }
}
