import type { Queryable } from './db'

/**
 * pgvector's HNSW index needs a fixed dimension, while the embedding model (and so the dimension)
 * is chosen at run time. The column is an untyped `vector`; each embedding model gets a partial
 * expression index `(embedding::vector(D)) WHERE embedding_model = '<id>'`, and vector queries use
 * the very same expression and predicate so the planner can use it.
 */
export function vectorIndexName(modelId: string): string {
  return (
    'chunks_hnsw_' +
    modelId
      .replace(/[^a-z0-9]/gi, '_')
      .toLowerCase()
      .slice(-40)
  )
}

export function sqlLiteral(value: string): string {
  return "'" + value.replace(/'/g, "''") + "'"
}

export const HNSW_SETTINGS = { m: 16, efConstruction: 64, efSearch: 100 } as const

export async function ensureVectorIndex(db: Queryable, modelId: string, dims: number): Promise<void> {
  if (!Number.isInteger(dims) || dims <= 0 || dims > 16000) throw new Error(`bad embedding dimension ${dims}`)
  // Already there: only read. CREATE INDEX IF NOT EXISTS still needs to own the table, which a
  // reader of a team library does not (docs/postgres.md), and its vector search needs no more.
  const { rows } = await db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [vectorIndexName(modelId)])
  if (rows[0]?.t) return
  await db.exec(
    `CREATE INDEX IF NOT EXISTS ${vectorIndexName(modelId)} ON chunks
       USING hnsw ((embedding::vector(${dims})) vector_cosine_ops)
       WITH (m = ${HNSW_SETTINGS.m}, ef_construction = ${HNSW_SETTINGS.efConstruction})
       WHERE embedding_model = ${sqlLiteral(modelId)}`,
  )
}

export function toVectorLiteral(v: ArrayLike<number>): string {
  let s = '['
  for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + (Number.isFinite(v[i]!) ? v[i]! : 0)
  return s + ']'
}
