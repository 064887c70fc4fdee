import type { CollectionInfo } from '../../shared/api'
import { compareVersions } from '../../shared/versions'
import type { Db, Queryable } from './db'
import { collectionTurn } from './writer'

/** Every collection with its counts and versions, by id. */
export async function listCollections(db: Queryable): Promise<CollectionInfo[]> {
  const { rows } = await db.query<{
    id: string
    root: string
    last_sync_at: Date | null
    chunks: number
    documents: number
    failed: number
    embedded: number
    versions: string[] | null
    ocr_pages: number
    low_pages: number
    low_docs: number
    settings: { ocr?: boolean } | null
  }>(
    `SELECT c.id, c.root, c.last_sync_at, c.chunk_count AS chunks,
            (SELECT count(*)::int FROM documents d WHERE d.collection_id = c.id AND d.status = 'indexed') AS documents,
            (SELECT count(*)::int FROM documents d WHERE d.collection_id = c.id AND d.status = 'failed') AS failed,
            (SELECT count(*)::int FROM chunks ch WHERE ch.collection_id = c.id AND ch.embedding IS NOT NULL) AS embedded,
            (SELECT array_agg(DISTINCT d.version) FROM documents d WHERE d.collection_id = c.id AND d.version IS NOT NULL) AS versions,
            (SELECT coalesce(sum(d.ocr_page_count), 0)::int FROM documents d WHERE d.collection_id = c.id AND d.status = 'indexed') AS ocr_pages,
            (SELECT coalesce(sum(d.ocr_low_pages), 0)::int FROM documents d WHERE d.collection_id = c.id AND d.status = 'indexed') AS low_pages,
            (SELECT count(*)::int FROM documents d WHERE d.collection_id = c.id AND d.status = 'indexed' AND d.ocr_low_pages > 0) AS low_docs,
            c.settings
       FROM collections c, (SELECT docent_readable_collections() AS r) a
      -- The collections the role may read: on a server the policies hide the rest as well.
      WHERE a.r IS NULL OR c.id = ANY(a.r)
      ORDER BY c.id`,
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
    ocr_pages: Number(r.ocr_pages),
    low_confidence_pages: Number(r.low_pages),
    low_confidence_documents: Number(r.low_docs),
    ocr: r.settings?.ocr !== false,
  }))
}

/** Whether text recognition is on for a collection (its `ocr` setting; on unless set false). */
export async function collectionOcr(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query<{ ocr: boolean | null }>(
    `SELECT (settings->>'ocr')::boolean AS ocr FROM collections WHERE id = $1`,
    [id],
  )
  return rows[0]?.ocr !== false
}

/**
 * Turns text recognition on or off for a collection. The next sync reads again what the change
 * concerns: the setting is part of the collection's import signature (importer.ts), so documents
 * and failures recorded under the other setting are not current any more. False when there is no
 * such collection.
 */
export async function setCollectionOcr(db: Queryable, id: string, on: boolean): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE collections SET settings = coalesce(settings, '{}'::jsonb) || jsonb_build_object('ocr', $2::boolean) WHERE id = $1 RETURNING id`,
    [id, on],
  )
  return rows.length > 0
}

/**
 * Deletes a collection with its documents, chunks and term statistics, in one transaction.
 * Cached embeddings stay: they are keyed by text, not by collection. False when there was none.
 */
export async function deleteCollection(db: Db, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    await collectionTurn(tx, id)
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
export async function failedDocuments(db: Queryable, collection: string): Promise<{ path: string; reason: string }[]> {
  const { rows } = await db.query<{ path: string; error: string | null }>(
    `SELECT path, error FROM documents WHERE collection_id = $1 AND status = 'failed' ORDER BY path`,
    [collection],
  )
  return rows.map((r) => ({ path: r.path, reason: r.error ?? 'unknown error' }))
}

/** The root folder a collection was imported from, and its settings (source kind labels); null when there is no such collection. */
export async function collectionRoot(
  db: Queryable,
  id: string,
): Promise<{ root: string; kinds: Record<string, string> | undefined } | null> {
  const { rows } = await db.query<{ root: string; settings: { kinds?: Record<string, string> } | null }>(
    'SELECT root, settings FROM collections WHERE id = $1',
    [id],
  )
  const row = rows[0]
  return row ? { root: row.root, kinds: row.settings?.kinds } : null
}

/** What the index holds of its collections, read from one store: what front ends list and show. */
export class CollectionCatalog {
  constructor(private readonly db: Queryable) {}

  list(): Promise<CollectionInfo[]> {
    return listCollections(this.db)
  }

  /** The folder a collection was imported from, and its settings; null when there is no such collection. */
  root(id: string): ReturnType<typeof collectionRoot> {
    return collectionRoot(this.db, id)
  }

  /** Documents of a collection that could not be imported, with the reason. */
  failed(collection: string): ReturnType<typeof failedDocuments> {
    return failedDocuments(this.db, collection)
  }

  /**
   * Turns text recognition of scanned pages and images on or off for a collection; its next sync
   * reads again what the change concerns (importer.ts, importSignature). False when there is none.
   */
  setOcr(id: string, on: boolean): Promise<boolean> {
    return setCollectionOcr(this.db, id, on)
  }
}
