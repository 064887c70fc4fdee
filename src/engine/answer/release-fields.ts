import { compareVersions, isPrerelease } from '../../shared/versions'
import type { Queryable } from '../store/db'
import { TSQUERY_SQL, termQuery, type TracedTerm } from './release-counts'

/**
 * A field a release lacks, asked about by a plain word. "What is the title field on a tool for, in
 * the 2025-03-26 spec?" and "the completion context in 2025-03-26" name a field of a feature the
 * release has (tools, completion) with an everyday word ("title", "context") that the release's
 * documents use anyway: in guides' code samples, in "Model Context Protocol". Counting the word
 * says the release mentions it, and the model then answers from a guide's field list or from the
 * feature's other fields.
 *
 * What tells a field from a word is how a specification writes it: as a key, `"title": …` in JSON,
 * `context?: {…}` in a type, `- title: Optional human-readable name…` in a field list. So: another
 * release's specification writes the word as a key in passages that also name a feature of the
 * question, the scoped release's specification has passages on that feature, and none of them
 * writes the word as a key. Then the release lacks that field of that feature, and the answer says
 * so before the model runs. Only the pair counts, and only for a word the question calls a field:
 * "list", "model", "request" are keys of some later schema and plain words of every question.
 */

/** Other releases' specification passages, at least, that write the word as a key of the feature. */
export const FIELD_MIN_ELSEWHERE = 2

/** A word that can be a key: letters, digits and underscores (no operators, nothing to escape). */
const KEY_WORD = /^[a-z][a-z0-9_]*$/

/**
 * A PostgreSQL regular expression (case-insensitive with ~*) for the word written as a key: a JSON
 * key (`"title":`), or a line that starts with it, after a list bullet or indentation, followed by
 * an optional `?` and a colon (`title?: string`, `- title: Optional…`). `(?n)`: ^ is a line start.
 */
export function keyPattern(word: string): string {
  if (!KEY_WORD.test(word)) throw new Error(`not a key word: ${word}`)
  return `(?n)("${word}"\\s*:|^\\s*([-*]\\s+)?${word}\\??\\s*:)`
}

/**
 * Words that say the word beside them is a field: "the title field", "the field named title". After
 * the word, only the singular: "form fields" are the fields of a form, not a field named "form".
 */
const FIELD_WORDS = 'fields?|propert(?:y|ies)|attributes?|param(?:eter)?s?|members?'
const FIELD_WORD = 'field|property|attribute|param(?:eter)?|member'

/**
 * Whether the question calls the word a field: "the title field", "title property", "a field
 * called title", "the `title` parameter". The word alone says nothing: "title", "context", "list"
 * are keys in some release's schema and plain words in every release's prose.
 */
export function calledField(question: string, word: string): boolean {
  if (!KEY_WORD.test(word)) return false
  const q = ` ${question.toLowerCase()} `
  const quote = `["'\u2018\u2019\u201c\u201d\x60]?`
  return (
    new RegExp(`[^a-z0-9_]${quote}${word}${quote}\\s+(?:${FIELD_WORD})[^a-z]`).test(q) ||
    new RegExp(`[^a-z](?:${FIELD_WORDS})\\s+(?:(?:named|called)\\s+)?${quote}${word}${quote}[^a-z0-9_]`).test(q)
  )
}

/**
 * The question names the term in parentheses, as a feature and its part: "argument suggestions that
 * depend on values already filled in (completion context)". A person who sets apart the feature's
 * name and a word after it as the term for what they described names a part of that feature, even
 * where the word also names a feature of its own somewhere ("context").
 */
export function namedInParentheses(question: string, word: string, features: readonly string[]): boolean {
  if (!KEY_WORD.test(word)) return false
  const q = question.toLowerCase()
  return features.some(
    (f) => KEY_WORD.test(f) && f !== word && new RegExp(`\\(\\s*(?:the\\s+)?${f}(?:'s)?\\s+${word}\\s*\\)`).test(q),
  )
}

interface Scoped {
  collections: string[]
  releases: string[]
  kinds: readonly string[]
  inScope: (version: string | null) => boolean
}

export interface AbsentField {
  /** The question's word that is a field elsewhere. */
  field: TracedTerm
  /** The feature of the question it is a field of, which the scoped release has. */
  feature: TracedTerm
  /** The releases (outside the scope) whose specification has it, oldest first. */
  versions: string[]
}

/**
 * The first (field word, feature) pair of the question where the question calls the word a field,
 * other releases' specifications write it as a key of that feature, and the scoped ones never
 * write it as a key at all, though they have the feature. Words only: a name the release never
 * mentions is the "never mentioned" rule's.
 */
export async function findAbsentField(
  db: Queryable,
  s: Scoped,
  question: string,
  traced: TracedTerm[],
): Promise<AbsentField | null> {
  const features = traced.filter((t) => t.form === 'word' && t.feature && t.in_scope_authoritative > 0)
  // Only a word the question calls a field; a word that names a feature itself ("tool",
  // "progress") is the other rules' to judge.
  const featureTerms = features.map((f) => f.term)
  const fields = traced.filter(
    (t) =>
      t.form === 'word' &&
      !t.acronym &&
      KEY_WORD.test(t.term) &&
      t.elsewhere_authoritative > 0 &&
      ((!t.feature && calledField(question, t.term)) || namedInParentheses(question, t.term, featureTerms)),
  )
  for (const field of fields) {
    // A key anywhere in the scoped specification ("argument" of a completion request): the
    // release has such a field, whatever else the question pairs it with.
    const { rows: own } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chunks c
        WHERE c.collection_id = ANY($1::text[]) AND c.kind = ANY($2::text[]) AND c.version = ANY($3::text[])
          AND c.tsv @@ plainto_tsquery('english', $4) AND c.text ~* $5`,
      [s.collections, [...s.kinds], s.releases, field.term, keyPattern(field.term)],
    )
    if (Number(own[0]?.n ?? 0) > 0) continue
    // A part named in parentheses ("(completion context)") is a part of the feature named with it.
    const named = features.filter((f) => namedInParentheses(question, field.term, [f.term]))
    for (const feature of named.length ? named : features) {
      if (feature.term === field.term) continue
      const { rows } = await db.query<{ version: string | null; n: number }>(
        `WITH t AS (SELECT 'word'::text AS form, $4::text AS q)
         SELECT c.version, count(*)::int AS n FROM chunks c, t
          WHERE c.collection_id = ANY($1::text[]) AND c.kind = ANY($2::text[])
            AND c.tsv @@ (${TSQUERY_SQL}) AND c.text ~* $3
          GROUP BY c.version`,
        [s.collections, [...s.kinds], keyPattern(field.term), termQuery(feature)],
      )
      const inScope = rows.filter((r) => s.inScope(r.version)).reduce((n, r) => n + Number(r.n), 0)
      if (inScope > 0) continue
      const elsewhere = rows.filter((r): r is { version: string; n: number } => r.version !== null && !s.inScope(r.version))
      if (elsewhere.reduce((n, r) => n + Number(r.n), 0) < FIELD_MIN_ELSEWHERE) continue
      return { field, feature, versions: elsewhere.map((r) => r.version).sort(compareVersions) }
    }
  }
  return null
}

/**
 * The release to name beside the scoped one: the first released one after it that has the field,
 * else the last one before it (the field was removed), a prerelease only when no release has it;
 * `later` says which.
 */
export function nearestWithField(versions: string[], releases: string[]): { version: string; later: boolean } {
  const latest = [...releases].sort(compareVersions).at(-1)!
  const released = versions.filter((v) => !isPrerelease(v))
  const pool = released.length > 0 ? released : versions
  const after = pool.find((v) => compareVersions(v, latest) > 0)
  return after ? { version: after, later: true } : { version: pool.at(-1)!, later: false }
}
