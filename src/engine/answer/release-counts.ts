import type { KeyTermTrace } from '../../shared/trace'
import { compareVersions, isPrerelease } from '../../shared/versions'
import type { Queryable } from '../store/db'
import { contentWords, splitUnits } from './sentences'
import { featureKey, phraseKey, proximityQuery, type KeyTerm, type Titles } from './release-terms'

/**
 * Where the collection mentions each term of a question or an answer sentence: passages of the
 * scoped releases (authoritative kinds apart) and of the others, in one grouped statement over the
 * keyword index, and what kind of term it is (a name, a feature word or title).
 */

interface TermCount {
  term: string
  version: string | null
  authoritative: boolean
  n: number
}

/** The keyword-index query of a term, in the form the SQL below reads it. */
export function termQuery(t: KeyTerm): string {
  return t.form === 'title' ? proximityQuery(t.words ?? t.term.split(' ')) : t.term
}

/** The SQL of a term's tsquery, given `$form` and `$q` columns. */
export const TSQUERY_SQL = `CASE WHEN form = 'word' THEN plainto_tsquery('english', q)
                                 WHEN form = 'phrase' THEN phraseto_tsquery('english', q)
                                 WHEN form = 'title' THEN to_tsquery('english', q)
                                 ELSE quote_literal(q)::tsquery END`

/** Per term: passages that contain it, by version and by whether their kind is authoritative. */
async function countTerms(
  db: Queryable,
  collections: string[],
  terms: KeyTerm[],
  kinds: readonly string[],
): Promise<TermCount[]> {
  if (terms.length === 0) return []
  const { rows } = await db.query<{ term: string; version: string | null; auth: boolean; n: number }>(
    `WITH t AS (
        SELECT term, ${TSQUERY_SQL} AS q
          FROM unnest($1::text[], $2::text[], $5::text[]) AS u(term, form, q)
     )
     SELECT t.term, c.version, coalesce(c.kind = ANY($4::text[]), false) AS auth,
            count(*)::int AS n
       FROM t JOIN chunks c ON c.tsv @@ t.q
      WHERE c.collection_id = ANY($3::text[]) AND numnode(t.q) > 0
      GROUP BY t.term, c.version, auth`,
    [terms.map((t) => t.term), terms.map((t) => t.form), collections, [...kinds], terms.map(termQuery)],
  )
  return rows.map((r) => ({ term: r.term, version: r.version, authoritative: r.auth, n: Number(r.n) }))
}

/** Scoped passages of a title term read, at most, to see whether its words stand in one sentence. */
const TITLE_PASSAGES = 60

/**
 * A title's words close together in the keyword index may still belong to two list items ("tool
 * capabilities" / "Sampling requires …"): the scoped passages of a title term count only where
 * one sentence, list item or heading holds all of its words.
 */
async function recountTitles(
  db: Queryable,
  collections: string[],
  terms: KeyTerm[],
  kinds: readonly string[],
  inScope: (version: string | null) => boolean,
  counts: TermCount[],
): Promise<void> {
  for (const t of terms) {
    if (t.form !== 'title') continue
    const scoped = counts.filter((c) => c.term === t.term && inScope(c.version))
    if (scoped.length === 0) continue
    const versions = [...new Set(scoped.map((c) => c.version).filter((v): v is string => v !== null))]
    const { rows } = await db.query<{ version: string | null; auth: boolean; heading: string; text: string }>(
      `SELECT version, coalesce(kind = ANY($4::text[]), false) AS auth, heading, text FROM chunks
        WHERE collection_id = ANY($1::text[]) AND (version = ANY($2::text[]) OR version IS NULL)
          AND tsv @@ to_tsquery('english', $3)
        LIMIT ${TITLE_PASSAGES}`,
      [collections, versions, termQuery(t), [...kinds]],
    )
    if (rows.length >= TITLE_PASSAGES) continue
    const keys = t.term.split(' ')
    const together = (unit: string) => {
      const have = new Set(contentWords(unit).map(featureKey))
      return keys.every((k) => have.has(k))
    }
    for (const c of scoped) c.n = 0
    for (const r of rows) {
      if (!r.heading.split(/ > | · /).some(together) && !splitUnits(r.text).some((u) => together(u.text))) continue
      const c = scoped.find((x) => x.version === r.version && x.authoritative === r.auth)
      if (c) c.n++
    }
  }
}

/** A term with its counts, and what kind of term it is. */
export interface TracedTerm extends KeyTermTrace {
  /** Names a feature of the collection: a name, a word of a short section title, a title's phrase or a title. */
  feature: boolean
  /** A name (identifier, quoted, acronym): its absence from a release always counts. */
  name: boolean
  spelling: string
  acronym: boolean
  /** Authoritative passages that contain it, per release (unversioned under null). */
  authoritativeByVersion: Map<string | null, number>
}

/** Counts each term and classifies it against the collection's section titles. */
export async function traceTerms(
  db: Queryable,
  collections: string[],
  terms: KeyTerm[],
  kinds: readonly string[],
  titles: Titles,
  inScope: (version: string | null) => boolean,
): Promise<TracedTerm[]> {
  const counts = await countTerms(db, collections, terms, kinds)
  await recountTitles(db, collections, terms, kinds, inScope, counts)
  return terms.map((t) => {
    const mine = counts.filter((c) => c.term === t.term)
    const sum = (f: (c: TermCount) => boolean) => mine.filter(f).reduce((s, c) => s + c.n, 0)
    // Where it first appears: in a release's own sources when any has it, for a guide copied into
    // every release's folder mentions what only a later release defines ("tools in sampling" in
    // 2024-11-05's guides, in the specification from 2025-11-25).
    const elsewhere = mine.filter((c) => !inScope(c.version) && c.version !== null)
    const defined = elsewhere.filter((c) => c.authoritative)
    // A title first appears where a section has it: its words stand close in many sentences of
    // older releases ("tools" beside "sampling" in a list of capabilities).
    const titled =
      t.form === 'title'
        ? [...titles.byVersion].filter(([v, r]) => v !== null && !inScope(v) && r.keys.has(t.term)).map(([v]) => v!)
        : []
    const others = titled.length > 0 ? titled : (defined.length > 0 ? defined : elsewhere).map((c) => c.version!)
    const released = others.filter((v) => !isPrerelease(v)).sort(compareVersions)
    return {
      term: t.term,
      form: t.form,
      in_scope_authoritative: sum((c) => inScope(c.version) && c.authoritative),
      in_scope_other: sum((c) => inScope(c.version) && !c.authoritative),
      elsewhere: sum((c) => !inScope(c.version)),
      elsewhere_authoritative: sum((c) => !inScope(c.version) && c.authoritative),
      first_version: (released[0] ?? others.sort(compareVersions)[0]) || null,
      feature:
        t.form === 'title' ||
        (t.form === 'phrase'
          ? titles.phrases.has(phraseKey(t.term))
          : t.form !== 'word' || titles.words.has(contentWords(t.term)[0] ?? t.term)),
      name: (t.form !== 'word' && t.form !== 'phrase' && t.form !== 'title') || !!t.acronym,
      spelling: t.spelling,
      acronym: !!t.acronym,
      authoritativeByVersion: new Map(mine.filter((c) => c.authoritative).map((c) => [c.version, c.n])),
    }
  })
}

/**
 * "; it first appears in 2025-06-18", the clause an explanation ends with: where else the term is,
 * said as an earlier release when it is older than every scoped one (a feature a later release
 * removed is not one that "first appears" before it).
 */
export function firstAppears(first: string | null, releases: readonly string[]): string {
  if (!first) return ''
  const before = releases.length > 0 && releases.every((r) => compareVersions(first, r) < 0)
  return before ? `; ${first}, an earlier release, mentions it` : `; it first appears in ${first}`
}

/** The trace's form of a term (what the trace schema holds). */
export function toTrace(t: TracedTerm): KeyTermTrace {
  const { feature: _f, name: _n, spelling: _s, acronym: _a, authoritativeByVersion: _v, ...rest } = t
  return rest
}

/** A name, or a feature word (title, phrase) that other releases mention enough, that the scoped releases never mention. */
export function isNeverMentioned(t: TracedTerm, minElsewhere: number): boolean {
  return (
    t.in_scope_authoritative + t.in_scope_other === 0 && t.elsewhere > 0 && (t.name || (t.feature && t.elsewhere >= minElsewhere))
  )
}

/** Mentioned in the scoped releases only by guides, while the specifications of other releases define it. */
export function isGuidesOnly(t: TracedTerm, minElsewhere: number): boolean {
  return (
    t.in_scope_authoritative === 0 &&
    t.in_scope_other > 0 &&
    t.elsewhere_authoritative > 0 &&
    t.feature &&
    (t.form === 'identifier' || t.form === 'quoted' ? true : t.elsewhere_authoritative >= minElsewhere)
  )
}

/** The feature key of a word term, for comparing it with section titles. */
export const wordKey = (term: string) => featureKey(contentWords(term)[0] ?? term)
