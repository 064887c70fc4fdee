import type { ReleaseTrace } from '../../shared/trace'
import { compareVersions } from '../../shared/versions'
import type { ResolvedScope } from '../retrieve/scope'
import type { Queryable } from '../store/db'
import { checkSentences, type SentenceRemoval } from './release-after'
import { firstAppears, isGuidesOnly, isNeverMentioned, toTrace, traceTerms, wordKey, type TracedTerm } from './release-counts'
import { findAbsentField, nearestWithField } from './release-fields'
import { findIncidental, findParaphrase, type IncidentalContext } from './release-passing'
import { AUTHORITATIVE_KINDS, WORD_MIN_ELSEWHERE, bridgedTerms, keyTermsOf, loadTitles, titleTerms } from './release-terms'
import type { Bridge } from '../retrieve/bridge'

export { AUTHORITATIVE_KINDS, WORD_MIN_ELSEWHERE, keyTermsOf } from './release-terms'
export type { KeyTerm } from './release-terms'
export type { SentenceRemoval } from './release-after'

/**
 * The release rules, in code (docs/lessons.md, "Versions" and "Source kind labels"; ADR 0013):
 * guides are near-copies across releases and describe features a release does not have, and a
 * 1.5B model does not reliably follow a prompt that says only specifications define a release. So:
 *
 *  - Before the model: when the question is scoped to a release and a term it asks about (an
 *    identifier, a quoted or code-marked name, a rare feature word, two words of a feature's
 *    title, or another release's section title its words cover) occurs nowhere in that release's
 *    documents but does in another release, the answer says so ("The 2024-11-05 docs never
 *    mention audio; it first appears in 2025-03-26"). When the release has authoritative sources
 *    (Specification) and the term occurs in that release only in other kinds (guides), or its
 *    specification mentions it only in passing (release-passing.ts), or the question paraphrases
 *    a feature the release lacks, the answer says that instead. None needs the model.
 *  - After the model: when the release's authoritative sources do mention the term, the answer
 *    must cite at least one authoritative passage of that release that contains it; and every
 *    sentence of the answer is checked as the question was (release-after.ts): one with a term the
 *    release never mentions, or mentions only in guides, is removed and named.
 *
 * The counts come from the keyword index (grouped statements over the GIN index per question).
 */

/** A feature word must name something specific to count for "must cite": in at most this share of the authoritative passages. */
export const SPECIFIC_SHARE = 0.1

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
  /** After generation: the sentences (by index) that name a term the scoped releases lack. Absent when not scoped. */
  checkSentences?: (sentences: string[]) => Promise<SentenceRemoval[]>
}

export async function checkRelease(
  db: Queryable,
  scope: ResolvedScope,
  question: string,
  kinds: readonly string[] = AUTHORITATIVE_KINDS,
  /** Words of the question no passage holds, with the title word nearest to each (retrieve/bridge.ts). */
  bridged: readonly Bridge[] = [],
): Promise<ReleaseCheck> {
  const releases = scopedReleases(scope)
  const base: ReleaseTrace = {
    releases,
    authoritative_kinds: [...kinds],
    has_authoritative: false,
    terms: [],
    verdict: 'not_scoped',
    verdict_term: null,
    must_cite_authoritative: false,
    cited_authoritative: null,
  }
  if (!releases) return { trace: base, explanation: null, mustCite: [], featureTerms: [] }
  const inScope = (v: string | null) => v === null || releases.includes(v)
  const titles = await loadTitles(db, scope.collections, kinds)
  const own = [...keyTermsOf(question, scope), ...titleTerms(question, scope, titles, inScope)]
  const terms = [...own, ...bridgedTerms(own, bridged)]
  const [all, counts] = await Promise.all([
    traceTerms(db, scope.collections, terms, kinds, titles, inScope),
    authoritativeCounts(db, scope.collections, kinds),
  ])
  const hasAuthoritative = [...counts.byVersion].some(([v, n]) => v !== null && releases.includes(v) && n > 0)
  const trace: ReleaseTrace = {
    ...base,
    has_authoritative: hasAuthoritative,
    terms: all.map((t, i) => (i < own.length ? toTrace(t) : { ...toTrace(t), bridged_from: terms[i]!.bridgedFrom })),
    verdict: terms.length === 0 ? 'no_key_terms' : 'mentioned',
  }
  const label = releases.join(' and ')
  const kind = kinds[0]!.toLowerCase()
  const after = { scope, releases, kinds, titles, hasAuthoritative, inScope }
  const check = (verdict: ReleaseTrace['verdict'], term: TracedTerm, explanation: string): ReleaseCheck => {
    trace.verdict = verdict
    trace.verdict_term = term.term
    return { trace, explanation, mustCite: [], featureTerms: [] }
  }
  // A name or a feature word the release never mentions, though another release does; a bridged
  // word counts here only: the other rules weigh the question's own words.
  const absent = all.find((t) => isNeverMentioned(t, WORD_MIN_ELSEWHERE))
  const traced = all.slice(0, own.length)
  if (absent) {
    const first = firstAppears(absent.first_version, releases)
    return check('never_mentioned', absent, `The ${label} docs never mention ${absent.spelling}${first}.`)
  }
  const rest: Omit<ReleaseCheck, 'trace' | 'explanation' | 'mustCite' | 'featureTerms'> = {
    checkSentences: (sentences) => checkSentences(db, after, sentences),
  }
  if (!hasAuthoritative) return { trace, explanation: null, mustCite: [], featureTerms: [], ...rest }
  // Mentioned in the release, but only by guides, while the specifications of other releases define it.
  const guidesOnly = await guidesOnlyTerm(db, { collections: scope.collections, releases, kinds }, traced)
  if (guidesOnly)
    return check(
      'guides_only',
      guidesOnly,
      `The ${label} ${kind} does not mention ${guidesOnly.spelling}; it appears only in guide pages, which may describe features this release does not have.`,
    )
  const specific = specificTerm(counts, inScope)
  const topics = new Set(traced.filter((t) => t.form === 'word' && t.feature && specific(t)).map((t) => wordKey(t.term)))
  const scoped = { collections: scope.collections, releases, kinds, titles, inScope }
  const lacking = await lacksInPassing(db, scoped, question, traced, { totals: counts.byVersion, topics })
  if (lacking) return check(lacking.verdict, lacking.term, lacking.explanation)
  // A phrase or a title only tells that a release lacks a feature; the words of one it has are cited as words.
  const mustCite = traced
    .filter((t) => t.form !== 'phrase' && t.form !== 'title' && t.in_scope_authoritative > 0 && t.feature && specific(t))
    .map((t) => t.term)
  trace.must_cite_authoritative = mustCite.length > 0
  const featureTerms = traced.filter((t) => t.form !== 'title' && t.in_scope_authoritative > 0 && t.feature).map((t) => t.term)
  return { trace, explanation: null, mustCite, featureTerms, ...rest }
}

/**
 * Whether a term names something specific: a name, or a word specific in the collection or in the
 * scoped release. "authorization" is in 15% of the collection's specification passages, but in 4
 * of 2024-11-05's, whose core leaves it out.
 */
function specificTerm(
  counts: { byVersion: Map<string | null, number>; all: number },
  inScope: (version: string | null) => boolean,
): (t: TracedTerm) => boolean {
  const inScopeTotal = Math.max(
    1,
    [...counts.byVersion].reduce((n, [v, c]) => (inScope(v) ? n + c : n), 0),
  )
  return (t) =>
    t.form !== 'word' ||
    (t.in_scope_authoritative + t.elsewhere_authoritative) / counts.all <= SPECIFIC_SHARE ||
    t.in_scope_authoritative / inScopeTotal <= SPECIFIC_SHARE
}

/**
 * The release's documents hold the question's words, but it still lacks the feature: its
 * specification mentions the term only in passing, or the question paraphrases a feature it lacks.
 */
async function lacksInPassing(
  db: Queryable,
  scoped: Parameters<typeof findIncidental>[1],
  question: string,
  traced: TracedTerm[],
  context: IncidentalContext,
): Promise<{ verdict: 'incidental' | 'paraphrase' | 'absent_field'; term: TracedTerm; explanation: string } | null> {
  const label = scoped.releases.join(' and ')
  const kind = scoped.kinds[0]!.toLowerCase()
  const incidental = await findIncidental(db, scoped, traced, context)
  if (incidental)
    return {
      verdict: 'incidental',
      term: incidental.term,
      explanation: `The ${label} ${kind} mentions ${incidental.term.spelling} only in passing, never in a section about it; ${incidental.titledIn} has a section on it.`,
    }
  const paraphrase = await findParaphrase(db, scoped, traced)
  if (!paraphrase) return absentField(db, scoped, question, traced)
  const { word, feature } = paraphrase
  const where = `which is what "${word.spelling}" is about in the other releases' ${kind}s`
  const first = firstAppears(feature.first_version, scoped.releases)
  return {
    verdict: 'paraphrase',
    term: feature,
    explanation:
      feature.in_scope_other > 0
        ? `The ${label} ${kind} does not mention ${feature.spelling}, ${where}; it appears only in guide pages.`
        : `The ${label} docs never mention ${feature.spelling}, ${where}${first}.`,
  }
}

/** A field of a feature the release has, written as a key only by other releases' specifications (release-fields.ts). */
async function absentField(
  db: Queryable,
  scoped: Parameters<typeof findAbsentField>[1],
  question: string,
  traced: TracedTerm[],
): Promise<{ verdict: 'absent_field'; term: TracedTerm; explanation: string } | null> {
  const found = await findAbsentField(db, scoped, question, traced)
  if (!found) return null
  const label = scoped.releases.join(' and ')
  const kind = scoped.kinds[0]!.toLowerCase()
  const { version: other, later } = nearestWithField(found.versions, scoped.releases)
  const name = `"${found.field.spelling}"`
  return {
    verdict: 'absent_field',
    term: found.field,
    explanation: later
      ? `The ${label} ${kind} never gives ${found.feature.spelling} a ${name} field; the ${other} ${kind} is the first that does.`
      : `The ${label} ${kind} never gives ${found.feature.spelling} a ${name} field; the ${other} ${kind} did.`,
  }
}

/** A member reached through a short receiver: `req.hostname`, `reply.code`, `app.listen`. */
const MEMBER = /^[a-z_$][\w$]{0,11}\.([a-z_$][\w$]*)$/i

/**
 * The first term only guides of the scoped release mention, while other releases' authoritative
 * sources define it. A member written through another receiver in the release's own reference is
 * the same member: guides write `req.hostname` where the reference writes `request.hostname`
 * (fastify-docs fd16, "In v5 req.hostname doesn't include the port any more…", was refused).
 */
async function guidesOnlyTerm(
  db: Queryable,
  s: { collections: string[]; releases: string[]; kinds: readonly string[] },
  traced: TracedTerm[],
): Promise<TracedTerm | null> {
  for (const t of traced) {
    if (!isGuidesOnly(t, WORD_MIN_ELSEWHERE)) continue
    const member = MEMBER.exec(t.spelling)?.[1]
    if (member) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM chunks
          WHERE collection_id = ANY($1::text[]) AND kind = ANY($2::text[]) AND version = ANY($3::text[]) AND text ~* $4`,
        [s.collections, [...s.kinds], s.releases, `[a-z_$][a-z0-9_$]*\\.${member.replace(/\$/g, '\\$')}\\M`],
      )
      if (Number(rows[0]?.n ?? 0) > 0) continue
    }
    return t
  }
  return null
}

/** Authoritative passages per release (unversioned under null), and of the whole collection (at least 1). */
async function authoritativeCounts(
  db: Queryable,
  collections: string[],
  kinds: readonly string[],
): Promise<{ byVersion: Map<string | null, number>; all: number }> {
  const { rows } = await db.query<{ version: string | null; n: number }>(
    `SELECT version, count(*)::int AS n FROM chunks
      WHERE collection_id = ANY($1::text[]) AND kind = ANY($2::text[]) GROUP BY version`,
    [collections, [...kinds]],
  )
  const byVersion = new Map(rows.map((r) => [r.version, Number(r.n)]))
  return {
    byVersion,
    all: Math.max(
      1,
      [...byVersion.values()].reduce((a, b) => a + b, 0),
    ),
  }
}
