import type { Queryable } from '../store/db'
import { extractExactTerms } from './exact-terms'
import { type ResolvedScope, scopeSql } from './scope'

/**
 * Keyword retrieval: the GIN full-text index finds candidates, and the candidates are ranked by
 * Okapi BM25 with IDF from term statistics kept in the store. Postgres' own ts_rank is not used:
 * measured on the MCP docs it found the right section far less often than BM25 (docs/lessons.md,
 * docs/adr/0002). Breadcrumb occurrences (weight A) count double (a BM25F-style boost).
 *
 * Two statements: the first turns the query into lexemes with their IDF (a handful of rows), the
 * second selects candidates through the GIN index with a literal tsquery and scores them. Split
 * this way the planner sees the real tsquery and the real lexeme list, and uses the index.
 */

export const BM25 = { k1: 1.2, b: 0.75, headingWeight: 2.0 } as const

/**
 * Candidates come from the rarest query lexemes, adding commoner ones while their postings stay
 * within this budget (always at least the rarest). A chunk that matches only the most common words
 * of a question is rarely its answer, and scoring every chunk that contains "server" would make each
 * query read most of the corpus. Every query lexeme still counts in the score of each candidate.
 */
export const CANDIDATE_POSTINGS_BUDGET = 2000

export interface KeywordHit {
  chunk_id: string
  rank: number
  bm25: number
}

export interface QueryTerm {
  lexeme: string
  df: number
  idf: number
}

/** BM25's IDF of a lexeme found in `df` of `n` passages (never negative, unlike the original Robertson form). */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5))
}

/**
 * The query's lexemes (English stemming, as at index time, plus exact tokens) with document
 * frequency and IDF, rarest first. Lexemes absent from the collections are kept with df 0: the
 * relevance gate weighs them as the part of the question the collections do not know.
 */
export async function queryTerms(
  db: Queryable,
  query: string,
  collections: string[],
): Promise<{ terms: QueryTerm[]; n: number; avgdl: number }> {
  const { rows } = await db.query<{ lexeme: string; df: number; n: number; avgdl: number }>(
    `WITH q AS (
        SELECT DISTINCT lexeme FROM (
          SELECT u.lexeme FROM unnest(to_tsvector('english', $1)) u
          UNION SELECT unnest($2::text[])
        ) l
     ),
     stats AS (
        SELECT coalesce(sum(chunk_count), 0)::float8 AS n,
               greatest(sum(total_len)::float8 / nullif(sum(chunk_count), 0), 1) AS avgdl
          FROM collections WHERE id = ANY($3::text[])
     )
     SELECT q.lexeme, coalesce(sum(t.df), 0)::float8 AS df, stats.n, stats.avgdl
       FROM q CROSS JOIN stats
       LEFT JOIN term_stats t ON t.lexeme = q.lexeme AND t.collection_id = ANY($3::text[])
      GROUP BY q.lexeme, stats.n, stats.avgdl`,
    [query, extractExactTerms(query), collections],
  )
  const n = Number(rows[0]?.n ?? 0)
  const avgdl = Number(rows[0]?.avgdl ?? 1)
  const terms = rows
    .map((r) => {
      const df = Number(r.df)
      return { lexeme: r.lexeme, df, idf: bm25Idf(n, df) }
    })
    .sort((a, b) => a.df - b.df || a.lexeme.localeCompare(b.lexeme))
  return { terms, n, avgdl }
}

/** Lexemes that select candidates: rarest first, within the postings budget. */
export function selectiveTerms(terms: QueryTerm[], budget = CANDIDATE_POSTINGS_BUDGET): QueryTerm[] {
  const out: QueryTerm[] = []
  let postings = 0
  for (const t of terms) {
    if (out.length > 0 && postings + t.df > budget) break
    out.push(t)
    postings += t.df
  }
  return out
}

export function toTsqueryLiteral(lexemes: string[]): string {
  return lexemes.map((l) => "'" + l.replace(/\\/g, '\\\\').replace(/'/g, "''") + "'").join(' | ')
}

export async function retrieveKeyword(db: Queryable, query: string, scope: ResolvedScope, limit: number): Promise<KeywordHit[]> {
  if (scope.collections.length === 0 || !query.trim()) return []
  const { terms: all, avgdl } = await queryTerms(db, query, scope.collections)
  const terms = all.filter((t) => t.df > 0)
  if (terms.length === 0) return []
  const selective = selectiveTerms(terms)
  const s = scopeSql(scope, 'c', 5)
  const { rows } = await db.query<{ id: string; score: number }>(
    `WITH qt AS (SELECT * FROM unnest($2::text[], $3::float8[]) AS t(lexeme, idf))
     SELECT c.id,
            sum(qt.idf * (m.tf * (${BM25.k1} + 1)) / (m.tf + ${BM25.k1} * (1 - ${BM25.b} + ${BM25.b} * c.lex_len / $4::float8)))::float8 AS score
       FROM chunks c
       CROSS JOIN LATERAL (
          SELECT u.lexeme,
                 (coalesce(cardinality(u.positions), 0)
                  + ${BM25.headingWeight - 1} * coalesce(cardinality(array_positions(u.weights, 'A')), 0))::float8 AS tf0
            FROM unnest(c.tsv) u WHERE u.lexeme = ANY($2::text[])
       ) m0
       CROSS JOIN LATERAL (SELECT m0.lexeme, greatest(m0.tf0, 1.0) AS tf) m
       JOIN qt ON qt.lexeme = m.lexeme
      WHERE c.tsv @@ $1::tsquery AND ${s.sql}
      GROUP BY c.id
      ORDER BY score DESC, c.id
      LIMIT $5`,
    [
      toTsqueryLiteral(selective.map((t) => t.lexeme)),
      terms.map((t) => t.lexeme),
      terms.map((t) => t.idf),
      avgdl,
      limit,
      ...s.params,
    ],
  )
  return rows.map((r, i) => ({ chunk_id: r.id, rank: i + 1, bm25: Number(r.score) }))
}
