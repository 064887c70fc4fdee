import type { KeyTermTrace, ReleaseTrace } from '../../shared/trace'
import { compareVersions, isPrerelease } from '../../shared/versions'
import { extractExactTerms } from '../core/exact-terms'
import { searchText, type ResolvedScope } from '../retrieve/scope'
import type { Queryable } from '../store/db'
import { answerQuotes } from './match'
import { contentWords } from './sentences'

/**
 * The release rules, in code (docs/lessons.md, "Versions" and "Source kind labels"): guides are
 * near-copies across releases and describe features a release does not have, and a 1.5B model
 * does not reliably follow a prompt that says only specifications define a release. So:
 *
 *  - Before the model: when the question is scoped to a release and a term it asks about (an
 *    identifier, a quoted or code-marked name, or a rare feature word) occurs nowhere in that
 *    release's documents but does in another release, the answer says so ("The 2024-11-05 docs
 *    never mention audio; it first appears in 2025-03-26"). When the release has authoritative
 *    sources (Specification) and the term occurs in that release only in other kinds (guides),
 *    the answer says that instead. Neither needs the model.
 *  - After the model: when the release's authoritative sources do mention the term, the answer
 *    must cite at least one authoritative passage of that release that contains it.
 *
 * A feature can be named by two common words together ("URL mode elicitation" in a release that
 * has elicitation but not its URL mode): two adjacent words of the question that stand together in
 * a short section title are a phrase term, counted as a phrase, and its absence counts as a
 * feature word's does.
 *
 * The counts come from the keyword index (one grouped statement over the GIN index per question).
 */

/** Kinds that define what a release supports; the rest (guides, tutorials) explain and may be out of date. */
export const AUTHORITATIVE_KINDS = ['Specification', 'Reference'] as const

/** A feature word counts only if the other releases mention it in at least this many passages (an incidental word does not). */
export const WORD_MIN_ELSEWHERE = 2

/** Words that frame a question about a release rather than name what it is about. */
const FRAMING = new Set(
  contentWords(
    `spec specs specification specifications version versions release releases revision docs documentation
    protocol mcp feature features support supports supported work works working use using used way ways new
    latest current old older newer earlier later still anymore exist exists available allow allows allowed let
    lets able possible need needs required require requires kind kinds type types thing things`,
  ),
)

const RFC2119 = new Set(['MUST', 'NOT', 'SHALL', 'SHOULD', 'MAY', 'REQUIRED', 'RECOMMENDED', 'OPTIONAL'])

/** A feature word must name something specific to count for "must cite": in at most this share of the authoritative passages. */
export const SPECIFIC_SHARE = 0.1

export interface KeyTerm {
  /** Lower case, as the keyword index holds it. */
  term: string
  form: KeyTermTrace['form']
  /** As the question writes it, for the explanation. */
  spelling: string
  /** An all-capitals name (CIMD, PKCE): matched as a word, but its absence from a release counts like a name's. */
  acronym?: boolean
}

/**
 * The terms a question asks about: names (identifiers, error codes, quoted or code-marked names)
 * whole, and its content words (framing words and version mentions aside). Hyphenated plain words
 * ("machine-readable") are words, not names. Each keeps the question's own spelling.
 */
export function keyTermsOf(question: string, scope: Pick<ResolvedScope, 'known'>): KeyTerm[] {
  const text = searchText(question, scope)
  const out = new Map<string, KeyTerm>()
  const versions = new Set(scope.known.map((v) => v.toLowerCase()))
  const spelled = (t: string) => {
    const at = text.toLowerCase().indexOf(t)
    return at >= 0 ? text.slice(at, at + t.length) : t
  }
  for (const q of answerQuotes(text)) {
    const t = q.trim().toLowerCase()
    if (t && !/\s/.test(t) && !versions.has(t)) out.set(t, { term: t, form: 'quoted', spelling: q.trim() })
  }
  for (const t of extractExactTerms(text)) {
    if (versions.has(t) || out.has(t)) continue
    const spelling = spelled(t)
    if (/^[a-z]+(?:-[a-z]+)+$/.test(spelling)) continue
    out.set(t, { term: t, form: 'identifier', spelling })
  }
  // Acronyms name things too (CIMD, MRTR, PKCE), except the requirement words of RFC 2119.
  for (const m of text.matchAll(/\b[A-Z][A-Z0-9]{2,9}s?\b/g)) {
    const t = m[0].replace(/s$/, '').toLowerCase()
    if (!RFC2119.has(m[0]) && !versions.has(t) && !out.has(t))
      out.set(t, { term: t, form: 'word', acronym: true, spelling: m[0].replace(/s$/, '') })
  }
  const inNames = [...out.keys()].join(' ')
  const acronyms = new Set([...out.values()].filter((t) => t.acronym).map((t) => t.term))
  const plain = (word: string, acronymOk = false) => {
    const [stem] = contentWords(word)
    if (!stem || FRAMING.has(stem) || word.length < 3 || /-/.test(word)) return false
    return !inNames.includes(word) || (acronymOk && acronyms.has(word))
  }
  for (const m of text.matchAll(/[\p{L}][\p{L}'-]*/gu)) {
    const word = m[0].toLowerCase()
    if (plain(word) && !out.has(word)) out.set(word, { term: word, form: 'word', spelling: m[0] })
  }
  for (const [a, b] of adjacentPairs(text))
    // An acronym may be one of the two words ("URL mode").
    if (plain(a.toLowerCase(), true) && plain(b.toLowerCase(), true)) {
      const term = `${a} ${b}`.toLowerCase()
      if (!out.has(term)) out.set(term, { term, form: 'phrase', spelling: `${a} ${b}` })
    }
  return [...out.values()]
}

/** Pairs of words that stand next to each other, with only spaces between (not across punctuation). */
function adjacentPairs(text: string): [string, string][] {
  const out: [string, string][] = []
  const words = [...text.matchAll(/[\p{L}][\p{L}'-]*/gu)]
  for (let i = 1; i < words.length; i++) {
    const prev = words[i - 1]!
    const between = text.slice(prev.index! + prev[0].length, words[i]!.index)
    if (/^ +$/.test(between)) out.push([prev[0], words[i]![0]])
  }
  return out
}

/** A phrase's key, as the feature index holds it: the stems of its two words. */
const phraseKey = (phrase: string) => contentWords(phrase).join(' ')

/**
 * Words that name a feature of the collection: words of a short section title (at most two
 * content words: "Tasks", "Audio Content", "Elicitation") of an authoritative source, or of any
 * source when the collection has no authoritative kind. A word like "url" or "happens" that only
 * turns up inside longer titles and sentences is not a feature, and its absence from a release
 * says nothing.
 */
async function featureWords(db: Queryable, collections: string[], kinds: readonly string[]): Promise<Features> {
  const { rows } = await db.query<{ heading: string }>(
    `SELECT DISTINCT heading FROM chunks
      WHERE collection_id = ANY($1::text[])
        AND (kind = ANY($2::text[]) OR NOT EXISTS (
              SELECT 1 FROM chunks a WHERE a.collection_id = ANY($1::text[]) AND a.kind = ANY($2::text[])))`,
    [collections, [...kinds]],
  )
  const out: Features = { words: new Set(), phrases: new Set() }
  for (const r of rows)
    // A breadcrumb's levels, and the names of small sections packed into one chunk ("after · ready").
    for (const segment of r.heading.split(/ > | · /)) {
      const words = contentWords(segment)
      if (words.length > 0 && words.length <= 2) for (const w of words) out.words.add(w)
      // Two adjacent words of a title of up to four ("URL Mode Flow", "URL Mode Elicitation
      // Requests") name a feature together, though each alone ("URL", "mode") is common.
      if (words.length >= 2 && words.length <= 4)
        for (const [a, b] of adjacentPairs(segment)) {
          const key = phraseKey(`${a} ${b}`)
          if (key.split(' ').length === 2) out.phrases.add(key)
        }
    }
  return out
}

interface Features {
  /** Stems of the words of short section titles. */
  words: Set<string>
  /** Stem pairs of adjacent words in section titles of two to four words. */
  phrases: Set<string>
}

interface TermCount {
  term: string
  version: string | null
  authoritative: boolean
  n: number
}

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
        SELECT term, CASE WHEN form = 'word' THEN plainto_tsquery('english', term)
                          WHEN form = 'phrase' THEN phraseto_tsquery('english', term)
                          ELSE quote_literal(term)::tsquery END AS q
          FROM unnest($1::text[], $2::text[]) AS u(term, form)
     )
     SELECT t.term, c.version, coalesce(c.kind = ANY($4::text[]), false) AS auth,
            count(*)::int AS n
       FROM t JOIN chunks c ON c.tsv @@ t.q
      WHERE c.collection_id = ANY($3::text[]) AND numnode(t.q) > 0
      GROUP BY t.term, c.version, auth`,
    [terms.map((t) => t.term), terms.map((t) => t.form), collections, [...kinds]],
  )
  return rows.map((r) => ({ term: r.term, version: r.version, authoritative: r.auth, n: Number(r.n) }))
}

/** The releases a scope is narrowed to (chosen or named in the question); null when it searches every release. */
export function scopedReleases(scope: ResolvedScope): string[] | null {
  if (scope.versionKeys === null) return null
  const versions = [...new Set(Object.values(scope.versions).flatMap((v) => (v === 'all' ? [] : v)))]
  return versions.length > 0 ? versions.sort(compareVersions) : null
}

export interface ReleaseCheck {
  trace: ReleaseTrace
  /** When set, the question is answered without the model: what the release's documents say about the term. */
  explanation: string | null
  /** Terms an authoritative passage of the release must contain, for an answer to stand (empty: no such rule). */
  mustCite: string[]
  /**
   * Every feature term of the question that the release's authoritative sources mention, specific
   * or not ("sampling", "tool"): a cited passage whose section heading names one of them is about
   * the asked feature, though its text may not repeat the specific word ("call").
   */
  featureTerms: string[]
}

export async function checkRelease(
  db: Queryable,
  scope: ResolvedScope,
  question: string,
  kinds: readonly string[] = AUTHORITATIVE_KINDS,
): Promise<ReleaseCheck> {
  const releases = scopedReleases(scope)
  const base: ReleaseTrace = {
    releases,
    authoritative_kinds: [...kinds],
    has_authoritative: false,
    terms: [],
    verdict: 'not_scoped',
    must_cite_authoritative: false,
    cited_authoritative: null,
  }
  if (!releases) return { trace: base, explanation: null, mustCite: [], featureTerms: [] }
  const terms = keyTermsOf(question, scope)
  const [counts, features] = await Promise.all([
    countTerms(db, scope.collections, terms, kinds),
    featureWords(db, scope.collections, kinds),
  ])
  const inScope = (v: string | null) => v === null || releases.includes(v)
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chunks WHERE collection_id = ANY($1::text[]) AND version = ANY($2::text[]) AND kind = ANY($3::text[])`,
    [scope.collections, releases, [...kinds]],
  )
  const hasAuthoritative = Number(rows[0]?.n ?? 0) > 0
  const { rows: all } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chunks WHERE collection_id = ANY($1::text[]) AND kind = ANY($2::text[])`,
    [scope.collections, [...kinds]],
  )
  const authoritativeTotal = Math.max(1, Number(all[0]?.n ?? 0))
  const traced: (KeyTermTrace & { feature: boolean; name: boolean; spelling: string })[] = terms.map((t) => {
    const mine = counts.filter((c) => c.term === t.term)
    const sum = (f: (c: TermCount) => boolean) => mine.filter(f).reduce((s, c) => s + c.n, 0)
    const others = mine.filter((c) => !inScope(c.version) && c.version !== null).map((c) => c.version!)
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
        t.form === 'phrase'
          ? features.phrases.has(phraseKey(t.term))
          : t.form !== 'word' || features.words.has(contentWords(t.term)[0] ?? t.term),
      name: (t.form !== 'word' && t.form !== 'phrase') || !!t.acronym,
      spelling: t.spelling,
    }
  })
  const trace: ReleaseTrace = {
    ...base,
    has_authoritative: hasAuthoritative,
    terms: traced.map(({ feature: _feature, name: _name, spelling: _spelling, ...t }) => t),
    verdict: terms.length === 0 ? 'no_key_terms' : 'mentioned',
  }
  const label = releases.join(' and ')
  // A name or a feature word the release never mentions, though another release does.
  const absent = traced.find(
    (t) =>
      t.in_scope_authoritative + t.in_scope_other === 0 &&
      t.elsewhere > 0 &&
      (t.name || (t.feature && t.elsewhere >= WORD_MIN_ELSEWHERE)),
  )
  if (absent) {
    trace.verdict = 'never_mentioned'
    const first = absent.first_version ? `; it first appears in ${absent.first_version}` : ''
    return { trace, explanation: `The ${label} docs never mention ${absent.spelling}${first}.`, mustCite: [], featureTerms: [] }
  }
  if (!hasAuthoritative) return { trace, explanation: null, mustCite: [], featureTerms: [] }
  // Mentioned in the release, but only by guides, while the specifications of other releases define it.
  const guidesOnly = traced.find(
    (t) =>
      t.in_scope_authoritative === 0 &&
      t.in_scope_other > 0 &&
      t.elsewhere_authoritative > 0 &&
      t.feature &&
      (t.form !== 'word' && t.form !== 'phrase' ? true : t.elsewhere_authoritative >= WORD_MIN_ELSEWHERE),
  )
  if (guidesOnly) {
    trace.verdict = 'guides_only'
    const kind = kinds[0]!.toLowerCase()
    return {
      trace,
      explanation: `The ${label} ${kind} does not mention ${guidesOnly.spelling}; it appears only in guide pages, which may describe features this release does not have.`,
      mustCite: [],
      featureTerms: [],
    }
  }
  const specific = (t: (typeof traced)[number]) =>
    t.form !== 'word' || (t.in_scope_authoritative + t.elsewhere_authoritative) / authoritativeTotal <= SPECIFIC_SHARE
  // A phrase only tells that a release lacks a feature; the words of one it has are cited as words.
  const mustCite = traced
    .filter((t) => t.form !== 'phrase' && t.in_scope_authoritative > 0 && t.feature && specific(t))
    .map((t) => t.term)
  trace.must_cite_authoritative = mustCite.length > 0
  const featureTerms = traced.filter((t) => t.in_scope_authoritative > 0 && t.feature).map((t) => t.term)
  return { trace, explanation: null, mustCite, featureTerms }
}
