import type { Queryable } from '../store/db'
import { keywordPostingsOf, type KeywordPostings } from '../store/postings'
import { STORE_MARK_COLUMNS, storeMarkOf, type StoreMarkRow } from '../store/store-mark'
import { extractExactTerms } from '../core/exact-terms'
import { BM25, scoreExhaustive, type KeywordHit, type QueryTerm } from './keyword-memory'
import { scorePruned, type PruningTrace } from './keyword-pruned'
import { type ResolvedScope, scopeSql } from './scope'

/**
 * Keyword retrieval: the GIN full-text index finds candidates, and the candidates are ranked by
 * Okapi BM25 with IDF from term statistics kept in the store. Postgres' own ts_rank is not used:
 * measured on the MCP docs it found the right section far less often than BM25 (docs/lessons.md,
 * docs/adr/0002). Breadcrumb occurrences (weight A) count double (a BM25F-style boost).
 *
 * From the postings kept in memory (store/postings.ts, ADR 0009) a search is one statement: the
 * query's lexemes and the store's mark; document frequencies, statistics and scores are then
 * counted in memory, skipping the candidates that cannot reach the top k (keyword-pruned.ts: the
 * same hits as scoring them all, keyword-memory.ts). Until the postings are built it runs in SQL: a first statement turns the
 * query into lexemes with their IDF from term_stats, then candidates come through the GIN index
 * with a literal tsquery, each candidate's tsvector unnested. Both give the same ranking
 * (keyword.test.ts checks they agree).
 */

export { BM25, SCORING, topK, type KeywordHit, type QueryTerm } from './keyword-memory'
export type { PruningTrace } from './keyword-pruned'

/**
 * Candidates come from the rarest query lexemes, adding commoner ones while their postings stay
 * within this budget (always at least the rarest). A chunk that matches only the most common words
 * of a question is rarely its answer, and scoring every chunk that contains "server" would make each
 * query read most of the corpus. Every query lexeme still counts in the score of each candidate.
 */
export const CANDIDATE_POSTINGS_BUDGET = 2000

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
  return {
    terms: rarestFirst(
      rows.map((r) => ({ lexeme: r.lexeme, df: Number(r.df) })),
      n,
    ),
    n,
    avgdl,
  }
}

function rarestFirst(terms: { lexeme: string; df: number }[], n: number): QueryTerm[] {
  return terms
    .map(({ lexeme, df }) => ({ lexeme, df, idf: bm25Idf(n, df) }))
    .sort((a, b) => a.df - b.df || a.lexeme.localeCompare(b.lexeme))
}

/**
 * queryTerms from the postings: one statement reads the query's lexemes (Postgres does the
 * stemming, as at index time) and the store's mark; when the postings are current at that mark,
 * document frequencies and collection statistics are counted from them, equal to what term_stats
 * and the collections table hold in that snapshot. Null when the postings are not current.
 */
async function queryTermsInMemory(
  db: Queryable,
  postings: KeywordPostings,
  query: string,
  collections: string[],
): Promise<{ terms: QueryTerm[]; avgdl: number } | null> {
  const { rows } = await db.query<{ lexemes: string[] } & StoreMarkRow>(
    `SELECT ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', $1)) u) AS lexemes, ${STORE_MARK_COLUMNS}`,
    [query],
  )
  if (!(await postings.current(storeMarkOf(rows[0]!)))) return null
  const lexemes = [...new Set([...rows[0]!.lexemes, ...extractExactTerms(query)])]
  const { df, n, totalLen } = postings.statistics(lexemes, collections)
  // As the SQL computes it: greatest(sum(total_len) / nullif(sum(chunk_count), 0), 1).
  const avgdl = n > 0 ? Math.max(totalLen / n, 1) : 1
  return {
    terms: rarestFirst(
      lexemes.map((lexeme, i) => ({ lexeme, df: df[i]! })),
      n,
    ),
    avgdl,
  }
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

export type KeywordPath = 'memory' | 'sql'

/**
 * How the postings in memory are scored: 'pruned' (what searches use) skips the candidates that
 * cannot reach the top k; 'exhaustive' scores every candidate in full. Both return the same hits
 * (keyword-pruned.test.ts); the bench times one against the other.
 */
export type KeywordScoring = 'pruned' | 'exhaustive'

/** Keyword search: from the postings in memory when they are current, else in SQL (same ranking). */
export async function retrieveKeyword(
  db: Queryable,
  query: string,
  scope: ResolvedScope,
  limit: number,
  opts: { path?: KeywordPath; budget?: number; scoring?: KeywordScoring; trace?: PruningTrace } = {},
): Promise<KeywordHit[]> {
  if (scope.collections.length === 0 || !query.trim()) return []
  const postings = opts.path === 'sql' ? null : keywordPostingsOf(db)
  const mem = postings ? await queryTermsInMemory(db, postings, query, scope.collections) : null
  if (postings && mem) {
    const terms = mem.terms.filter((t) => t.df > 0)
    if (terms.length === 0) return []
    const selective = selectiveTerms(terms, opts.budget)
    return opts.scoring === 'exhaustive'
      ? scoreExhaustive(postings, terms, selective, mem.avgdl, scope, limit)
      : scorePruned(postings, terms, selective, mem.avgdl, scope, limit, opts.trace)
  }
  if (opts.path === 'memory') throw new Error('the keyword postings are not built yet')
  const { terms: all, avgdl } = await queryTerms(db, query, scope.collections)
  const terms = all.filter((t) => t.df > 0)
  if (terms.length === 0) return []
  return scoreInSql(db, terms, selectiveTerms(terms, opts.budget), avgdl, scope, limit)
}

async function scoreInSql(
  db: Queryable,
  terms: QueryTerm[],
  selective: QueryTerm[],
  avgdl: number,
  scope: ResolvedScope,
  limit: number,
): Promise<KeywordHit[]> {
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

/**
 * Whether two rankings agree: the same scores rank by rank, and the same chunks once equal scores
 * are ordered by chunk id. SQL's sum() may add a chunk's terms in another order than another
 * chunk's, so two chunks with equal scores can differ in the last bit there and be ordered by that
 * instead of by id; chunks tied with the last one kept may be cut either way.
 */
export function sameRanking(a: KeywordHit[], b: KeywordHit[], tol = 1e-9): boolean {
  if (a.length !== b.length) return false
  if (a.some((h, i) => Math.abs(h.bm25 - b[i]!.bm25) > tol * Math.max(1, Math.abs(h.bm25)))) return false
  const last = a.at(-1)?.bm25 ?? 0
  const canonical = (hs: KeywordHit[]) =>
    hs
      .filter((h) => Math.abs(h.bm25 - last) > tol * Math.max(1, last))
      .sort(
        (x, y) => (Math.abs(x.bm25 - y.bm25) <= tol * Math.max(1, x.bm25) ? 0 : y.bm25 - x.bm25) || cmp(x.chunk_id, y.chunk_id),
      )
      .map((h) => h.chunk_id)
      .join()
  return canonical(a) === canonical(b)
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
