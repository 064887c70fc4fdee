import type { Queryable } from '../store/db'
import { sqlLiteral, toVectorLiteral } from '../store/vector-index'
import { type ResolvedScope, scopeSql } from './scope'

export interface VectorHit {
  chunk_id: string
  rank: number
  /** Cosine similarity (1 - cosine distance), not a distance. */
  cosine: number
}

/**
 * Approximate nearest neighbours through the HNSW index of the active embedding model, with the
 * same scope fragment as keyword search. pgvector's iterative scan keeps scanning the graph when
 * the scope filter removes candidates, so a narrow version scope still returns `limit` hits.
 */
export async function retrieveVector(
  db: Queryable,
  queryVector: Float32Array,
  modelId: string,
  scope: ResolvedScope,
  limit: number,
): Promise<VectorHit[]> {
  if (scope.collections.length === 0) return []
  const dims = queryVector.length
  const s = scopeSql(scope, 'c', 2)
  const { rows } = await db.query<{ id: string; cosine: number }>(
    `SELECT c.id, (1 - (c.embedding::vector(${dims}) <=> $1::vector(${dims})))::float8 AS cosine
       FROM chunks c
      WHERE c.embedding_model = ${sqlLiteral(modelId)} AND ${s.sql}
      ORDER BY c.embedding::vector(${dims}) <=> $1::vector(${dims})
      LIMIT $2`,
    [toVectorLiteral(queryVector), limit, ...s.params],
  )
  // relaxed_order iterative scans may return neighbours slightly out of order: sort by the true score.
  return rows
    .map((r) => ({ id: r.id, cosine: Number(r.cosine) }))
    .sort((a, b) => b.cosine - a.cosine || a.id.localeCompare(b.id))
    .map((r, i) => ({ chunk_id: r.id, rank: i + 1, cosine: r.cosine }))
}
