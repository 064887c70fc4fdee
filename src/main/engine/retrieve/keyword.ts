import type { Queryable } from '../store/db'
import { extractExactTerms } from './exact-terms'
import { type ResolvedScope, scopeSql } from './scope'

/**
 * Keyword retrieval: the GIN full-text index finds candidates (any query lexeme, OR-ed), and the
 * candidates are ranked by Okapi BM25 with IDF from term statistics kept in the store. Postgres'
 * own ts_rank is not used: measured on the MCP docs it found the right section far less often
 * than BM25 (DESIGN.md). Breadcrumb occurrences (weight A) count double (a BM25F-style boost).
 */

export const BM25 = { k1: 1.2, b: 0.75, headingWeight: 2.0 } as const

export interface KeywordHit {
  chunk_id: string
  rank: number
  bm25: number
}

export async function retrieveKeyword(
  db: Queryable,
  query: string,
  scope: ResolvedScope,
  limit: number,
): Promise<KeywordHit[]> {
  if (scope.collections.length === 0 || !query.trim()) return []
  const exact = extractExactTerms(query)
  const s = scopeSql(scope, 'c', 4)
  const { rows } = await db.query<{ id: string; score: number }>(
    `WITH q AS (
        SELECT DISTINCT lexeme FROM (
          SELECT u.lexeme FROM unnest(to_tsvector('english', $1)) u
          UNION SELECT unnest($2::text[])
        ) l
     ),
     tsq AS (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS query FROM q),
     stats AS (
        SELECT sum(chunk_count)::float8 AS n, greatest(sum(total_len)::float8 / nullif(sum(chunk_count), 0), 1) AS avgdl
          FROM collections WHERE id = ANY($5::text[])
     ),
     idf AS (
        SELECT q.lexeme,
               ln(1 + (stats.n - coalesce(sum(t.df), 0) + 0.5) / (coalesce(sum(t.df), 0) + 0.5)) AS idf
          FROM q CROSS JOIN stats
          LEFT JOIN term_stats t ON t.lexeme = q.lexeme AND t.collection_id = ANY($5::text[])
         GROUP BY q.lexeme, stats.n
     ),
     cand AS (
        SELECT c.id, c.tsv, c.lex_len FROM chunks c, tsq
         WHERE tsq.query IS NOT NULL AND c.tsv @@ tsq.query AND ${s.sql}
     )
     SELECT cand.id,
            sum(idf.idf * (m.tf * ($3 + 1)) / (m.tf + $3 * (1 - ${BM25.b} + ${BM25.b} * cand.lex_len / stats.avgdl)))::float8 AS score
       FROM cand
       CROSS JOIN stats
       CROSS JOIN LATERAL (
          SELECT u.lexeme,
                 coalesce((SELECT sum(CASE w WHEN 'A' THEN ${BM25.headingWeight} ELSE 1.0 END) FROM unnest(u.weights) w), 1.0) AS tf
            FROM unnest(cand.tsv) u
       ) m
       JOIN idf ON idf.lexeme = m.lexeme
      GROUP BY cand.id
      ORDER BY score DESC, cand.id
      LIMIT $4`,
    [query, exact, BM25.k1, limit, ...s.params],
  )
  return rows.map((r, i) => ({ chunk_id: r.id, rank: i + 1, bm25: Number(r.score) }))
}
