import { readdirSync } from 'node:fs'
import path from 'node:path'
import { approximateTokenCounter, type Embedder, type Loaded, type TokenCounter } from '../core/model-ports'
import { MODEL_ROLES, type ModelRole } from '../../shared/models'
import { activeModelPath } from './active'
import type { GgufChatModel } from './runtime/llm'
import type { OnnxReranker } from './runtime/reranker'

interface Disposable {
  dispose(): unknown
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/** Loads an embedding model's folder. It runs in a worker thread: its inference would otherwise stall searches meanwhile. */
export async function loadEmbedderAt(dir: string): Promise<Embedder> {
  const { loadEmbedderThreaded } = await import('./runtime/embedder-thread')
  return loadEmbedderThreaded(dir)
}

/**
 * The engine's models, one per role, each loaded on first use and shared until reload() or
 * dispose(). A failed load is remembered with its reason rather than retried on every question:
 * reload() after the models on disk change. The cache only loads, keeps and frees models: which
 * embedding model the index answers with, and switching it, are the engine's (index-embedder.ts).
 */
export class LoadedModels {
  private embedderP: Promise<Loaded<Embedder>> | null = null
  private rerankerP: Promise<Loaded<OnnxReranker>> | null = null
  private chatP: Promise<Loaded<GgufChatModel>> | null = null
  /** Models replaced while a search may still hold them: freed at reload or dispose. */
  private retired: Disposable[] = []

  constructor(
    readonly modelsDir: string,
    /** Loads the embedding model to use (the engine decides which: the one its index answers with). */
    private readonly chooseEmbedder: () => Promise<Loaded<Embedder>>,
  ) {}

  /** The embedding model, loaded once by the engine's choice (index-embedder.ts) and kept until reload(). */
  embedder(): Promise<Loaded<Embedder>> {
    this.embedderP ??= this.chooseEmbedder()
    return this.embedderP
  }

  /** Makes `model` the embedder; the previous one is retired (a search may still hold it) and freed at reload or dispose. */
  async replaceEmbedder(model: Embedder): Promise<void> {
    const old = await this.embedderP
    if (old?.model) this.retired.push(old.model)
    this.embedderP = Promise.resolve({ model, problem: null })
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
    return { id: `tokens:${model.id}`, count: (t) => model.countTokens(t), additive: true }
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
