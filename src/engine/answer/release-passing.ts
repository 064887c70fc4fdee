import { compareVersions, isPrerelease } from '../../shared/versions'
import { extractExactTerms } from '../core/exact-terms'
import { isChangeLog } from '../retrieve/fuse'
import type { Queryable } from '../store/db'
import { contentWords, splitUnits } from './sentences'
import { TSQUERY_SQL, termQuery, traceTerms, wordKey, type TracedTerm } from './release-counts'
import { WORD_MIN_ELSEWHERE, featureKey, titleKey, type Titles } from './release-terms'

/**
 * Two ways a release lacks a feature though its documents hold the question's words:
 *
 *  - **In passing.** The release's specification mentions the term, but only in passing: never in
 *    a section named for it, a change log, or a sentence that says it is absent, while another
 *    release has a section on it ("_meta" in one JSON example of 2025-03-26; a section of its own
 *    from 2025-06-18).
 *  - **A paraphrase.** The question describes the feature instead of naming it ("can a server ask
 *    the user to fill in a form?"). A word of the question that the release's specification never
 *    uses is, in the other releases' specifications, mostly a word of sections named for a
 *    feature that the release lacks ("form", in sections under "Elicitation"): the question is
 *    about that feature. The words come from the sections' own text, not from a list of synonyms,
 *    and only words that some section title uses count ("form", from "Form Mode Flow"; not
 *    "never", which a question about timeouts uses as well).
 */

/**
 * Mentions count as "in passing" only where the scoped specification mentions the term at most
 * this share as densely (passages with it per passage) as the release with a section on it that
 * mentions it most densely: "_meta" is in 1 of 184 passages of 2025-03-26 and 43 of 301 of
 * 2025-06-18; "cursor" is as frequent in 2025-03-26 as where a schema page titles it.
 */
export const INCIDENTAL_RATIO = 0.5

/** Scoped passages read, at most, to see whether any is about the term. */
const INCIDENTAL_PASSAGES = 20

/** A paraphrase word counts when at least this share of its passages elsewhere are in sections of features the release lacks. */
export const PARAPHRASE_SHARE = 0.5

/** A sentence that says something is absent is about it, not a passing mention. */
const ABSENCE =
  /\b(?:not|no longer|never|without|instead of|former(?:ly)?|remov(?:e|es|ed|al)|replac(?:e|es|ed|ement)|deprecat\w*|drop(?:s|ped)?)\b/i

interface Scoped {
  collections: string[]
  releases: string[]
  kinds: readonly string[]
  titles: Titles
  inScope: (version: string | null) => boolean
}

export interface IncidentalContext {
  /** Authoritative passages per release (unversioned under null). */
  totals: Map<string | null, number>
  /**
   * Feature keys of the question's specific feature words: a passage in a section named for what
   * the question asks about ("Progress" for "the progress token") does not mention "token" in passing.
   */
  topics: Set<string>
}

export interface Incidental {
  term: TracedTerm
  /** The release (outside the scope) with a section on it, oldest released first. */
  titledIn: string
}

/** The first name or feature word of the question that the scoped specification mentions only in passing. */
export async function findIncidental(
  db: Queryable,
  s: Scoped,
  traced: TracedTerm[],
  c: IncidentalContext,
): Promise<Incidental | null> {
  const density = (t: TracedTerm, versions: (string | null)[]) => {
    const n = versions.reduce((sum, v) => sum + (t.authoritativeByVersion.get(v) ?? 0), 0)
    const total = versions.reduce((sum, v) => sum + (c.totals.get(v) ?? 0), 0)
    return total > 0 ? n / total : 0
  }
  for (const t of traced) {
    if (t.form === 'phrase' || t.form === 'title' || !(t.name || t.feature)) continue
    if (t.in_scope_authoritative < 1 || t.in_scope_authoritative > INCIDENTAL_PASSAGES) continue
    // A name's own words title a section too: "modelPreferences" under "Model Preferences".
    const spelled = nameWords(t)
    const titled = (version: string | null) => {
      const mine = s.titles.byVersion.get(version)
      if (!mine) return false
      if (t.form === 'word') return mine.words.has(wordKey(t.term))
      return mine.names.has(t.term) || (spelled.length >= 2 && mine.keys.has(titleKey(spelled)))
    }
    const versions = [...s.titles.byVersion.keys()]
    if (versions.some((v) => s.inScope(v) && titled(v))) continue
    const elsewhere = versions.filter((v): v is string => v !== null && !s.inScope(v) && titled(v)).sort(compareVersions)
    if (elsewhere.length === 0) continue
    const scopedDensity = density(t, [...c.totals.keys()].filter(s.inScope))
    if (scopedDensity > INCIDENTAL_RATIO * Math.max(...elsewhere.map((v) => density(t, [v])))) continue
    const { rows } = await db.query<{ heading: string; path: string; kind: string | null; text: string }>(
      `WITH t AS (SELECT $3::text AS form, $4::text AS q)
       SELECT c.heading, c.path, c.kind, c.text FROM chunks c, t
        WHERE c.collection_id = ANY($1::text[]) AND (c.version = ANY($2::text[]) OR c.version IS NULL)
          AND c.kind = ANY($5::text[]) AND c.tsv @@ (${TSQUERY_SQL})
        LIMIT ${INCIDENTAL_PASSAGES + 1}`,
      [s.collections, s.releases, t.form, termQuery(t), [...s.kinds]],
    )
    const words = new Set(termWords(t))
    const about = (p: (typeof rows)[number]) =>
      isChangeLog(p) ||
      contentWords(p.heading).some((w) => words.has(featureKey(w)) || c.topics.has(featureKey(w))) ||
      splitUnits(p.text).some((u) => mentions(u.text, t, words) && ABSENCE.test(u.text))
    if (rows.length > 0 && rows.length <= INCIDENTAL_PASSAGES && !rows.some(about))
      return { term: t, titledIn: elsewhere.find((v) => !isPrerelease(v)) ?? elsewhere[0]! }
  }
  return null
}

/** The words a name is spelled with: "progressToken" is progress and token, "_meta" meta. */
function nameWords(t: TracedTerm): string[] {
  return contentWords(t.spelling.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[^\p{L}\p{N}]+/gu, ' '))
}

/** The words a term is made of: "progressToken" is about progress and tokens, "_meta" about meta. */
function termWords(t: TracedTerm): string[] {
  return [...nameWords(t), ...contentWords(t.term)].map(featureKey)
}

function mentions(text: string, t: TracedTerm, words: Set<string>): boolean {
  return text.toLowerCase().includes(t.term) || (t.form === 'word' && contentWords(text).some((w) => words.has(featureKey(w))))
}

export interface Paraphrase {
  /** The question's word. */
  word: TracedTerm
  /** The feature it is a word of, with its counts. */
  feature: TracedTerm
}

/** Passages of a word read, at most, to see which sections it belongs to. */
const PARAPHRASE_PASSAGES = 200

/**
 * A plain word of the question that the scoped specification never uses, and that other
 * releases' specifications use mostly in sections named for a feature (a short title:
 * "Elicitation") that the scoped releases never mention or mention only in guides. Only for
 * releases with a specification (the caller's condition).
 */
export async function findParaphrase(db: Queryable, s: Scoped, traced: TracedTerm[]): Promise<Paraphrase | null> {
  for (const w of traced) {
    // Only a word the documents name things with ("form", in "Form Mode Flow"), not one like "never".
    if (w.form !== 'word' || w.acronym || w.feature || !s.titles.vocabulary.has(wordKey(w.term))) continue
    if (w.in_scope_authoritative > 0) continue
    if (w.elsewhere_authoritative < WORD_MIN_ELSEWHERE) continue
    const { rows } = await db.query<{ heading: string }>(
      `SELECT c.heading FROM chunks c
        WHERE c.collection_id = ANY($1::text[]) AND c.version IS NOT NULL AND NOT (c.version = ANY($2::text[]))
          AND c.kind = ANY($3::text[]) AND c.tsv @@ plainto_tsquery('english', $4)
        LIMIT ${PARAPHRASE_PASSAGES}`,
      [s.collections, s.releases, [...s.kinds], w.term],
    )
    // The feature words of each passage's sections (plain words: a type name such as
    // "CallToolResult" is a section of a schema page, not a feature).
    const spelled = new Map<string, string>()
    const perPassage = rows.map((r) => {
      const keys = new Set<string>()
      for (const segment of r.heading.split(/ > | · /)) {
        if (extractExactTerms(segment).length > 0 || /^_/.test(segment.trim())) continue
        const words = [...segment.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => m[0]).filter((x) => contentWords(x).length > 0)
        if (words.length === 0 || words.length > 2) continue
        for (const x of words) {
          const key = featureKey(contentWords(x)[0]!)
          keys.add(key)
          if (!spelled.has(key)) spelled.set(key, x.toLowerCase())
        }
      }
      return keys
    })
    if (rows.length === 0) continue
    const scopedTitles = new Set<string>()
    for (const [v, t] of s.titles.byVersion) if (s.inScope(v)) for (const k of t.words) scopedTitles.add(k)
    // The feature most of the word's passages are about, if the scoped releases have no section on it.
    const share = (key: string) => perPassage.filter((keys) => keys.has(key)).length / rows.length
    const best = [...spelled.keys()].filter((k) => !scopedTitles.has(k)).sort((a, b) => share(b) - share(a))[0]
    if (!best || share(best) < PARAPHRASE_SHARE) continue
    const [feature] = await traceTerms(
      db,
      s.collections,
      [{ term: spelled.get(best)!, form: 'word', spelling: spelled.get(best)! }],
      s.kinds,
      s.titles,
      s.inScope,
    )
    if (!feature || feature.in_scope_authoritative > 0 || feature.elsewhere_authoritative === 0) continue
    return { word: w, feature }
  }
  return null
}
