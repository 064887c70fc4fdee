import type { Queryable } from './db'

/**
 * Checks the invariants an interrupted import must never break: every indexed document has
 * exactly the chunks it claims, no chunk lacks its document, and the BM25 statistics equal a
 * recount from the chunks. Returns the problems found (empty when the index is consistent).
 */
export async function checkIndexConsistency(db: Queryable): Promise<string[]> {
  const problems: string[] = []
  const { rows: docs } = await db.query<{ path: string; claimed: number; actual: number }>(
    `SELECT d.path, d.chunk_count AS claimed, (SELECT count(*)::int FROM chunks c WHERE c.document_id = d.id) AS actual
       FROM documents d WHERE d.status = 'indexed'`,
  )
  for (const d of docs)
    if (Number(d.claimed) !== Number(d.actual)) problems.push(`${d.path}: ${d.actual} chunks stored, ${d.claimed} expected`)
  const { rows: orphans } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document_id)`,
  )
  if (Number(orphans[0]?.n ?? 0) > 0) problems.push(`${orphans[0]!.n} chunks without a document`)
  const { rows: stats } = await db.query<{ id: string; stored: number; actual: number }>(
    `SELECT c.id, c.chunk_count AS stored, (SELECT count(*)::int FROM chunks ch WHERE ch.collection_id = c.id) AS actual FROM collections c`,
  )
  for (const s of stats)
    if (Number(s.stored) !== Number(s.actual)) problems.push(`collection ${s.id}: chunk_count ${s.stored}, actual ${s.actual}`)
  const { rows: drift } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT ch.collection_id, u.lexeme, count(*)::int AS df FROM chunks ch, unnest(ch.tsv) u GROUP BY 1, 2
     ) real FULL JOIN (SELECT collection_id, lexeme, df FROM term_stats WHERE df > 0) kept USING (collection_id, lexeme)
     WHERE real.df IS DISTINCT FROM kept.df`,
  )
  if (Number(drift[0]?.n ?? 0) > 0) problems.push(`${drift[0]!.n} term statistics differ from a recount`)
  return problems
}
