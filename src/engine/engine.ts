import { existsSync } from 'node:fs'
import type { Embedder, Loaded, TokenCounter } from './core/model-ports'
import { SerialQueue } from './core/serial-queue'
import type { Db } from './store/db'
import { leaveTemplate, openPGlite } from './store/db'
import type { TemplatePlace } from './store/template'
import { NO_PGVECTOR, openPostgres, redactUrl, vectorAtLeast } from './store/pg'
import { acquireLock, type OwnerLock, type OwnerRole } from './store/lock'
import { SCHEMA_MARK, migrate } from './store/migrations'
import { HNSW_SETTINGS } from './store/vector-index'
import { collectionSlug } from './store/ids'
import { CollectionCatalog, deleteCollection } from './store/collections'
import { PassageReader, type ChunkSource, type PassageInContext } from './store/passages'
import { importFolder, embedMissing, type ImportProgress, type ImportReport } from './ingest/importer'
import { resolveSearchScope, searchWithModels } from './retrieve/search'
import { scopeInfo } from './retrieve/scope'
import type { FusionRule } from './retrieve/fuse'
import { defaultDataDir, defaultModelsDir, templatesDir } from './paths'
import { LoadedModels } from './models/loaded'
import { embeddingSwitchPending, loadIndexEmbedder, switchEmbedding } from './index-embedder'
import type { GgufChatModel } from './models/runtime/llm'
import type { OnnxReranker } from './models/runtime/reranker'
import type { Scope, ScopeInfo, SearchMode, SearchResult } from '../shared/search'
import type { ModelRole } from '../shared/models'
import type { AskRequest, AskResult } from '../shared/answer'
import type { RetrievalTrace } from '../shared/trace'
import { askWithEngine, type EngineAskOptions } from './answer/ask'
import { AnswerStore } from './answer/store'
import { unfinishedImports, type UnfinishedImport } from './ingest/jobs'
import type { SwitchProgress, SwitchReport } from './ingest/embedding-switch'
import { watchCollection, type CollectionWatch, type WatchOptions } from './watch/collection-watcher'

export interface EngineOptions {
  /** Database folder; null for an in-memory database (tests). Ignored with `database`. */
  dataDir?: string | null
  /**
   * A PostgreSQL server's URL (postgres://user@host:5432/db?sslmode=require) instead of a data
   * folder: a team library (docs/postgres.md). Every process connects directly; there is no lock.
   * Any number of engines may open one URL at once.
   */
  database?: string
  /**
   * Never migrate (a store whose schema is behind is an error, SchemaBehindError) and never write
   * on open: for a read-only role. Writes the caller asks for later still fail on the server's grants.
   */
  readOnly?: boolean
  /** Server connections this engine may hold (default 8). */
  poolSize?: number
  modelsDir?: string
  /**
   * The data folder's lock (store/lock.ts), already taken by the caller (host/owner.ts takes it
   * before it listens on the folder's socket). Without it open() takes the lock itself, as `role`,
   * and throws LibraryInUseError while another live process owns the folder. close() releases it.
   */
  lock?: OwnerLock
  role?: OwnerRole
  /**
   * Where a new data folder's template is kept (store/template.ts); null: a new folder always
   * runs initdb. Default: the app's templates folder (paths.ts templatesDir).
   */
  templates?: TemplatePlace | null
}

/** The templates of new libraries where paths.ts keeps them, for this release's migrations. */
function defaultTemplates(): EngineOptions['templates'] {
  const dir = templatesDir()
  return dir ? { dir, schema: SCHEMA_MARK } : null
}

export type { ChunkSource, PassageInContext }

/**
 * The engine: store, import, retrieval and models behind one object. It imports nothing from
 * Electron; the app runs it in a utility process, and the CLI, MCP server, evals and tests run it
 * in plain Node.
 */
export class Engine {
  /** Writers (imports, watcher syncs, the embedding switch's last step) take turns: see exclusive(). */
  private readonly writes = new SerialQueue()
  private readonly watches = new Map<string, CollectionWatch>()
  private readonly models: LoadedModels
  /** Conversation threads and the trace of every answer (answer/store.ts). */
  readonly answers: AnswerStore
  /** The collections the index holds, their folders, settings and failed files (store/collections.ts). */
  readonly catalog: CollectionCatalog
  /** Passages by chunk id: where one came from, and one in its context (store/passages.ts). */
  readonly passages: PassageReader

  private constructor(
    readonly db: Db,
    readonly modelsDir: string,
    private readonly lock: OwnerLock | null,
    /** Opened read-only (EngineOptions.readOnly): answers keep no trace, thread or cache entry. */
    readonly readOnly = false,
  ) {
    this.models = new LoadedModels(modelsDir, () => loadIndexEmbedder(db, modelsDir))
    this.answers = new AnswerStore(db, { readOnly })
    this.catalog = new CollectionCatalog(db)
    this.passages = new PassageReader(db)
  }

  static async open(opts: EngineOptions = {}): Promise<Engine> {
    if (opts.database) return Engine.openServer(opts.database, opts)
    const dataDir = opts.dataDir === undefined ? defaultDataDir() : opts.dataDir
    // One owner per data folder: a second PGlite on the same files destroys the first one's writes.
    const lock = dataDir === null ? null : (opts.lock ?? acquireLock(dataDir, { role: opts.role ?? 'engine', socket: null }))
    let db: Db | null = null
    try {
      const templates = opts.templates === undefined ? defaultTemplates() : opts.templates
      db = await openPGlite(dataDir, { templates })
      await migrate(db)
      await leaveTemplate(db, templates)
      await db.exec(`SET hnsw.ef_search = ${HNSW_SETTINGS.efSearch}; SET hnsw.iterative_scan = relaxed_order;`)
    } catch (err) {
      await db?.close().catch(() => undefined)
      lock?.release()
      throw err
    }
    return new Engine(db, opts.modelsDir ?? defaultModelsDir(), lock)
  }

  private static async openServer(url: string, opts: EngineOptions): Promise<Engine> {
    const db = await openPostgres(url, {
      max: opts.poolSize,
      settings: (vector) => ({
        'hnsw.ef_search': HNSW_SETTINGS.efSearch,
        // Iterative scans (a narrow scope still gets its k neighbours) came with pgvector 0.8.
        ...(vectorAtLeast(vector, '0.8.0') ? { 'hnsw.iterative_scan': 'relaxed_order' } : {}),
      }),
    })
    try {
      await migrate(db, { readOnly: opts.readOnly })
    } catch (err) {
      await db.close().catch(() => undefined)
      if (err instanceof Error && /extension "vector"|"vector" extension|type "vector"/.test(err.message))
        throw new Error(`CREATE EXTENSION vector failed on ${redactUrl(url)} (${err.message}): the server ${NO_PGVECTOR}`, {
          cause: err,
        })
      throw err
    }
    return new Engine(db, opts.modelsDir ?? defaultModelsDir(), null, !!opts.readOnly)
  }

  /**
   * The embedding model the index answers with, loaded once; null (with the reason) when none is
   * installed or it fails to load. Until switchEmbeddingModel() completes it stays the model the
   * index was built with, even after another is selected (ADR 0007).
   */
  async embedder(): Promise<Loaded<Embedder>> {
    return this.models.embedder()
  }

  /** The selected embedding model when it is not the one the index answers with (a switch is due), else null. */
  async embeddingSwitchPending(): Promise<{ from: string; to: string } | null> {
    return embeddingSwitchPending(this.models)
  }

  /**
   * Re-embeds the whole index with the selected embedding model beside the current vectors and
   * switches to it in one transaction when complete (ADR 0007). Search keeps answering with the
   * old model meanwhile. Cancelling keeps the old index; vectors built so far stay cached, so the
   * next attempt resumes. Returns null when no switch is due.
   */
  async switchEmbeddingModel(
    opts: { signal?: AbortSignal; onProgress?: (p: SwitchProgress) => void } = {},
  ): Promise<SwitchReport | null> {
    return switchEmbedding(this.db, this.models, { ...opts, exclusive: (fn) => this.exclusive(fn) })
  }

  /** Runs writers one at a time: PGlite has one connection, and a sync must not race an import of the same documents. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.writes.run(fn)
  }

  /**
   * Imports whose last run did not finish (the process died, or it was cancelled or quit). Import
   * the same folder into the same collection to resume: finished documents are skipped as
   * unchanged and their embeddings come from the cache.
   */
  async unfinishedImports(): Promise<UnfinishedImport[]> {
    return unfinishedImports(this.db)
  }

  /**
   * Keeps a collection in step with its folder until stop(): a catch-up sync first, then one
   * path-limited sync per burst of file changes (watch/). Watching a collection already watched
   * returns the running watch.
   */
  async watch(collection: string, opts: WatchOptions = {}): Promise<CollectionWatch> {
    const id = collectionSlug(collection)
    const running = this.watches.get(id)
    if (running) return running
    const source = await this.catalog.root(id)
    if (!source)
      throw new Error(
        `there is no collection "${collection}"; import it first: docent ingest <folder> --collection ${collection}`,
      )
    if (!existsSync(source.root))
      throw new Error(`the folder of collection "${id}" (${source.root}) is missing; reconnect the drive or import it again`)
    const w = await watchCollection(
      id,
      source.root,
      ({ paths, signal, onDocument }) =>
        this.exclusive(async () => {
          const { model: embedder } = await this.embedder()
          return importFolder(this.db, source.root, {
            collection: id,
            embedder,
            tokenCounter: await this.tokenCounter(),
            signal,
            onDocument,
            onlyPaths: paths ?? undefined,
            kinds: source.kinds,
          })
        }),
      opts,
    )
    const handle: CollectionWatch = {
      ...w,
      stop: async () => {
        this.watches.delete(id)
        await w.stop()
      },
    }
    this.watches.set(id, handle)
    return handle
  }

  async reranker(): Promise<Loaded<OnnxReranker>> {
    return this.models.reranker()
  }

  /** The active answer model (GGUF), loaded once; null (with the reason) when none is installed: ask then runs search-only. */
  async chatModel(): Promise<Loaded<GgufChatModel>> {
    return this.models.chatModel()
  }

  /**
   * Forgets the loaded models of some roles (all by default) and frees them, so the next use loads
   * what is active now (after a download, an import or a change of active model). Call it when no
   * import or question is using them: the host waits for its jobs to finish first.
   */
  async reloadModels(roles?: readonly ModelRole[]): Promise<void> {
    await this.models.reload(roles)
  }

  async tokenCounter(): Promise<TokenCounter> {
    return this.models.tokenCounter()
  }

  async importFolder(
    folder: string,
    opts: {
      collection?: string
      signal?: AbortSignal
      onProgress?: (p: ImportProgress) => void
      kinds?: Record<string, string>
      /** Go on with a sync that removes every document of the collection (ImportOptions.allowEmpty). */
      allowEmpty?: boolean
    } = {},
  ): Promise<ImportReport> {
    const name = opts.collection ?? folder.split(/[\\/]/).filter(Boolean).at(-1) ?? 'docs'
    const collection = collectionSlug(name)
    // Another embedding model was selected: build its vectors beside the current ones and switch
    // first, so this import chunks and embeds with the new model (mostly from the cache).
    const sw = (await this.embeddingSwitchPending()) ? await this.switchEmbeddingModel({ signal: opts.signal }) : null
    if (sw && !sw.switched) {
      throw new Error(
        `the switch to embedding model ${sw.to} was cancelled; search still uses ${sw.from ?? 'the previous model'}. Import again to continue it`,
      )
    }
    const report = await this.exclusive(async () => {
      const { model: embedder } = await this.embedder()
      const r = await importFolder(this.db, folder, {
        collection,
        embedder,
        tokenCounter: await this.tokenCounter(),
        signal: opts.signal,
        onProgress: opts.onProgress,
        kinds: opts.kinds,
        allowEmpty: opts.allowEmpty,
      })
      if (embedder && !r.cancelled) {
        // Chunks imported before this model was installed (or whose model is gone) get embedded now.
        const filled = await embedMissing(this.db, embedder, { collection, signal: opts.signal })
        r.texts_embedded += filled.embedded
      }
      return r
    })
    if (sw) {
      report.texts_embedded += sw.texts_embedded
      report.notices.push(`Vector search switched to ${sw.to}: ${sw.texts_embedded} passages were re-embedded before the switch.`)
    }
    return report
  }

  async search(
    query: string,
    opts: {
      scope?: Partial<Scope>
      mode?: SearchMode
      rerank?: boolean
      k?: number
      signal?: AbortSignal
      fusion?: FusionRule
    } = {},
  ): Promise<SearchResult & { trace: RetrievalTrace; scope_label: string; scope: ScopeInfo }> {
    const scope = await resolveSearchScope(this.db, opts.scope ?? {}, query)
    const { result } = await searchWithModels(this.db, this.models, query, scope, {
      mode: opts.mode ?? 'hybrid',
      rerank: !!opts.rerank,
      k: opts.k ?? 10,
      signal: opts.signal,
      ...(opts.fusion ? { fusion: opts.fusion } : {}),
    })
    return { ...result, scope_label: scope.label, scope: scopeInfo(scope) }
  }

  /** Answers a question from the collections in scope, with verified citations (answer/pipeline.ts). */
  async ask(request: AskRequest, opts: EngineAskOptions = {}): Promise<AskResult> {
    return askWithEngine({ db: this.db, readOnly: this.readOnly, models: this.models }, request, opts)
  }

  /**
   * Deletes a collection with its documents, chunks and term statistics, in one transaction.
   * Cached embeddings stay: they are keyed by text, not by collection. False when there was none.
   */
  async removeCollection(id: string): Promise<boolean> {
    await this.watches.get(id)?.stop()
    return deleteCollection(this.db, id)
  }

  async close(): Promise<void> {
    await Promise.all([...this.watches.values()].map((w) => w.stop()))
    await this.writes.idle()
    await this.models.dispose()
    try {
      await this.db.close()
    } finally {
      this.lock?.release()
    }
  }
}
