import type { Db } from './store/db'
import { openPGlite } from './store/db'
import { migrate } from './store/migrations'
import { ensureVectorIndex, HNSW_SETTINGS } from './store/vector-index'
import { collectionSlug } from './store/ids'
import { importFolder, embedMissing, type ImportProgress, type ImportReport } from './ingest/importer'
import { approximateTokenCounter, type TokenCounter } from './ingest/chunker'
import { compareVersions } from './ingest/versions'
import { resolveScope } from './retrieve/scope'
import { searchChunks, type RetrievalTrace } from './retrieve/search'
import { activeModelPath, defaultDataDir, defaultModelsDir } from './paths'
import type { Embedder } from './models/embedder'
import type { Reranker } from './models/reranker'
import type { Scope, SearchMode, SearchResult } from '../../shared/search'

export interface EngineOptions {
  /** Database folder; null for an in-memory database (tests). */
  dataDir?: string | null
  modelsDir?: string
}

export interface CollectionInfo {
  id: string
  root: string
  documents: number
  failed: number
  chunks: number
  embedded: number
  versions: string[]
  last_sync_at: string | null
}

export interface ChunkSource {
  chunk_id: string
  collection: string
  /** The collection's root folder, absolute. */
  root: string
  /** The document's path relative to the root, as stored at import. */
  path: string
  heading: string
  version: string | null
  page_start: number | null
  page_end: number | null
  text: string
}

interface Loaded<T> {
  model: T | null
  problem: string | null
}

/**
 * The engine: store, import, retrieval and models behind one object. It imports nothing from
 * Electron; the app runs it in a utility process, and the CLI, MCP server, evals and tests run it
 * in plain Node.
 */
export class Engine {
  private embedderP: Promise<Loaded<Embedder>> | null = null
  private rerankerP: Promise<Loaded<Reranker>> | null = null

  private constructor(
    readonly db: Db,
    readonly modelsDir: string,
  ) {}

  static async open(opts: EngineOptions = {}): Promise<Engine> {
    const dataDir = opts.dataDir === undefined ? defaultDataDir() : opts.dataDir
    const db = await openPGlite(dataDir)
    try {
      await migrate(db)
      await db.exec(`SET hnsw.ef_search = ${HNSW_SETTINGS.efSearch}; SET hnsw.iterative_scan = relaxed_order;`)
    } catch (err) {
      await db.close()
      throw err
    }
    return new Engine(db, opts.modelsDir ?? defaultModelsDir())
  }

  /** The active embedding model, loaded once; null (with the reason) when none is installed or it fails to load. */
  async embedder(): Promise<Loaded<Embedder>> {
    this.embedderP ??= (async () => {
      const dir = activeModelPath(this.modelsDir, 'embedding')
      if (!dir) return { model: null, problem: `no embedding model is installed in ${this.modelsDir}` }
      try {
        const { loadEmbedder } = await import('./models/embedder')
        const model = await loadEmbedder(dir)
        await ensureVectorIndex(this.db, model.id, model.dims)
        return { model, problem: null }
      } catch (err) {
        return { model: null, problem: `the embedding model could not be loaded (${err instanceof Error ? err.message : String(err)})` }
      }
    })()
    return this.embedderP
  }

  async reranker(): Promise<Loaded<Reranker>> {
    this.rerankerP ??= (async () => {
      const dir = activeModelPath(this.modelsDir, 'reranker')
      if (!dir) return { model: null, problem: `no reranker model is installed in ${this.modelsDir}` }
      try {
        const { loadReranker } = await import('./models/reranker')
        return { model: await loadReranker(dir), problem: null }
      } catch (err) {
        return { model: null, problem: `the reranker could not be loaded (${err instanceof Error ? err.message : String(err)})` }
      }
    })()
    return this.rerankerP
  }

  async tokenCounter(): Promise<TokenCounter> {
    const { model } = await this.embedder()
    if (!model) return approximateTokenCounter
    return { id: `tokens:${model.id}`, count: (t) => model.countTokens(t) }
  }

  async ingest(
    folder: string,
    opts: { collection?: string; signal?: AbortSignal; onProgress?: (p: ImportProgress) => void; kinds?: Record<string, string> } = {},
  ): Promise<ImportReport> {
    const name = opts.collection ?? folder.split(/[\\/]/).filter(Boolean).at(-1) ?? 'docs'
    const collection = collectionSlug(name)
    const { model: embedder } = await this.embedder()
    const report = await importFolder(this.db, folder, {
      collection,
      embedder,
      tokenCounter: await this.tokenCounter(),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.kinds ? { kinds: opts.kinds } : {}),
    })
    if (embedder && !report.cancelled) {
      // Chunks imported before this model was installed (or by another model) get embedded now.
      const filled = await embedMissing(this.db, embedder, { collection, ...(opts.signal ? { signal: opts.signal } : {}) })
      report.texts_embedded += filled.embedded
    }
    return report
  }

  async search(
    query: string,
    opts: { scope?: Partial<Scope>; mode?: SearchMode; rerank?: boolean; k?: number; signal?: AbortSignal } = {},
  ): Promise<SearchResult & { trace: RetrievalTrace; scope_label: string }> {
    const scope = await resolveScope(this.db, {
      collections: (opts.scope?.collections ?? []).map((c) => collectionSlug(c)),
      version: opts.scope?.version ?? 'all',
    })
    const mode = opts.mode ?? 'hybrid'
    const needsEmbedder = mode !== 'keyword'
    const emb = needsEmbedder ? await this.embedder() : { model: null, problem: null }
    const rr = opts.rerank ? await this.reranker() : { model: null, problem: null }
    const result = await searchChunks(
      { db: this.db, embedder: emb.model, reranker: rr.model, embedderProblem: emb.problem, rerankerProblem: rr.problem },
      query,
      scope,
      { mode, rerank: !!opts.rerank, k: opts.k ?? 10, ...(opts.signal ? { signal: opts.signal } : {}) },
    )
    return { ...result, scope_label: scope.label }
  }

  async collections(): Promise<CollectionInfo[]> {
    const { rows } = await this.db.query<{
      id: string; root: string; last_sync_at: Date | null; chunks: number; documents: number; failed: number; embedded: number; versions: string[] | null
    }>(
      `SELECT c.id, c.root, c.last_sync_at, c.chunk_count AS chunks,
              (SELECT count(*)::int FROM documents d WHERE d.collection_id = c.id AND d.status = 'indexed') AS documents,
              (SELECT count(*)::int FROM documents d WHERE d.collection_id = c.id AND d.status = 'failed') AS failed,
              (SELECT count(*)::int FROM chunks ch WHERE ch.collection_id = c.id AND ch.embedding IS NOT NULL) AS embedded,
              (SELECT array_agg(DISTINCT d.version) FROM documents d WHERE d.collection_id = c.id AND d.version IS NOT NULL) AS versions
         FROM collections c ORDER BY c.id`,
    )
    return rows.map((r) => ({
      id: r.id,
      root: r.root,
      documents: Number(r.documents),
      failed: Number(r.failed),
      chunks: Number(r.chunks),
      embedded: Number(r.embedded),
      versions: (r.versions ?? []).sort(compareVersions),
      last_sync_at: r.last_sync_at ? new Date(r.last_sync_at).toISOString() : null,
    }))
  }

  /**
   * Deletes a collection with its documents, chunks and term statistics, in one transaction.
   * Cached embeddings stay: they are keyed by text, not by collection. False when there was none.
   */
  async removeCollection(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>('SELECT id FROM collections WHERE id = $1 FOR UPDATE', [id])
      if (rows.length === 0) return false
      await tx.query('DELETE FROM chunks WHERE collection_id = $1', [id])
      await tx.query('DELETE FROM documents WHERE collection_id = $1', [id])
      await tx.query('DELETE FROM term_stats WHERE collection_id = $1', [id])
      await tx.query('DELETE FROM collections WHERE id = $1', [id])
      return true
    })
  }

  /** Documents of a collection that could not be imported, with the reason. */
  async failedDocuments(collection: string): Promise<{ path: string; reason: string }[]> {
    const { rows } = await this.db.query<{ path: string; error: string | null }>(
      `SELECT path, error FROM documents WHERE collection_id = $1 AND status = 'failed' ORDER BY path`,
      [collection],
    )
    return rows.map((r) => ({ path: r.path, reason: r.error ?? 'unknown error' }))
  }

  /** Where an indexed chunk came from (its collection's root and the document's relative path); null when it is not in the index. */
  async chunkSource(chunkId: string): Promise<ChunkSource | null> {
    const { rows } = await this.db.query<ChunkSource>(
      `SELECT ch.id AS chunk_id, ch.collection_id AS collection, c.root, ch.path, ch.heading, ch.version,
              ch.page_start, ch.page_end, ch.text
         FROM chunks ch JOIN documents d ON d.id = ch.document_id JOIN collections c ON c.id = ch.collection_id
        WHERE ch.id = $1 AND d.status = 'indexed'`,
      [chunkId],
    )
    return rows[0] ?? null
  }

  /** The root folder a collection was imported from, and its settings (source kind labels); null when there is no such collection. */
  async collectionRoot(id: string): Promise<{ root: string; kinds: Record<string, string> | undefined } | null> {
    const { rows } = await this.db.query<{ root: string; settings: { kinds?: Record<string, string> } | null }>(
      'SELECT root, settings FROM collections WHERE id = $1',
      [id],
    )
    const row = rows[0]
    return row ? { root: row.root, kinds: row.settings?.kinds } : null
  }

  async close(): Promise<void> {
    const [e, r] = await Promise.all([this.embedderP, this.rerankerP])
    await Promise.all([e?.model?.dispose(), r?.model?.dispose()])
    await this.db.close()
  }
}
