import type { KeyTermTrace } from '../../shared/trace'
import { extractExactTerms } from '../core/exact-terms'
import { CHANGE_WORDS } from '../retrieve/fuse'
import { searchText, type ResolvedScope } from '../retrieve/scope'
import type { Bridge } from '../retrieve/bridge'
import type { Queryable } from '../store/db'
import { answerQuotes } from './match'
import { contentWords } from './sentences'

/**
 * What a question (or an answer sentence) asks about, for the release rules (release.ts): its
 * names and content words, and the section titles of the collection that name features. Pure
 * functions, and the one query that reads the collection's section titles.
 */

/** Kinds that define what a release supports; the rest (guides, tutorials) explain and may be out of date. */
export const AUTHORITATIVE_KINDS = ['Specification', 'Reference'] as const

/** A feature word counts only if the other releases mention it in at least this many passages (an incidental word does not). */
export const WORD_MIN_ELSEWHERE = 2

/**
 * Words that frame a question about a release rather than name what it is about, and words that
 * ask about change ("what changed about tasks … compared to when they first showed up?": tasks).
 */
export const FRAMING: ReadonlySet<string> = new Set([
  ...contentWords(
    `spec specs specification specifications version versions release releases revision docs documentation
    protocol mcp feature features support supports supported work works working use using used way ways new
    latest current old older newer newest oldest earlier later still anymore exist exists available allow allows allowed let
    lets able possible need needs required require requires kind kinds type types thing things`,
  ),
  ...CHANGE_WORDS,
])

/** Framing words that may begin a two-word feature name ("type providers", "kind filters"). */
const NAME_STARTS = new Set(['type', 'types', 'kind', 'kinds'])

const RFC2119 = new Set(['MUST', 'NOT', 'SHALL', 'SHOULD', 'MAY', 'REQUIRED', 'RECOMMENDED', 'OPTIONAL'])

export interface KeyTerm {
  /** Lower case, as the keyword index holds it. */
  term: string
  form: KeyTermTrace['form']
  /** As the question writes it, for the explanation. */
  spelling: string
  /** An all-capitals name (CIMD, PKCE): matched as a word, but its absence from a release counts like a name's. */
  acronym?: boolean
  /** A section title's words (form `title`): searched as words standing close together. */
  words?: string[]
  /** The question's own word that this title word stands for (retrieve/bridge.ts): no passage holds that word. */
  bridgedFrom?: string
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
  // A leading underscore stays in the spelling ("_meta"); the index holds the word.
  for (const m of text.matchAll(/_?[\p{L}][\p{L}'-]*/gu)) {
    const word = m[0].replace(/^_/, '').toLowerCase()
    if (plain(word) && !out.has(word)) out.set(word, { term: word, form: 'word', spelling: m[0] })
  }
  // "type" and "kind" frame a question ("what type of …") but also begin a feature's name ("type
  // providers"): with a plain word after them they may make a phrase, which counts as a feature only
  // where a section title of the collection holds it (release-counts.ts).
  for (const [a, b] of adjacentPairs(text))
    // An acronym may be one of the two words ("URL mode").
    if ((plain(a.toLowerCase(), true) || NAME_STARTS.has(a.toLowerCase())) && plain(b.toLowerCase(), true)) {
      const term = `${a} ${b}`.toLowerCase()
      if (!out.has(term)) out.set(term, { term, form: 'phrase', spelling: `${a} ${b}` })
    }
  return [...out.values()]
}

/**
 * The title words that retrieval bridged the question's unknown words to, as key terms: "audio"
 * for "microphone". Each is spelled with the word it stands for, so a refusal says what it
 * weighed ("never mention audio (the documents' nearest word for "microphone")").
 */
export function bridgedTerms(own: readonly KeyTerm[], bridged: readonly Bridge[]): KeyTerm[] {
  const have = new Set(own.map((t) => t.term))
  return bridged
    .filter((b) => !have.has(b.term))
    .map((b) => ({
      term: b.term,
      form: 'word' as const,
      spelling: `${b.term} (the documents' nearest word for "${b.word}")`,
      bridgedFrom: b.word,
    }))
}

/** Pairs of words that stand next to each other, with only spaces between (not across punctuation). */
export function adjacentPairs(text: string): [string, string][] {
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
export const phraseKey = (phrase: string) => contentWords(phrase).join(' ')

/**
 * A word's key for comparing feature words: its stem without a final "e", so that "cache" and
 * "Caching" (stems "cache" and "cach") are one feature.
 */
export const featureKey = (stem: string) => stem.replace(/(?<=..)e$/, '')

/** The section titles of one release (or of unversioned documents). */
export interface ReleaseTitles {
  /** Feature keys of the words of short titles (one or two content words: "Tasks", "Audio Content"). */
  words: Set<string>
  /** Titles that are one name ("_meta", "ProgressToken", "tools/list"), lower case. */
  names: Set<string>
  /** Titles of two to four content words, by the sorted feature keys of their words, with their text. */
  keys: Map<string, string>
}

/** Feature words and titles of a collection's authoritative sources, overall and per release. */
export interface Titles {
  /** Stems of the words of short section titles, any release. */
  words: Set<string>
  /** Stem pairs of adjacent words in section titles of two to four words, any release. */
  phrases: Set<string>
  byVersion: Map<string | null, ReleaseTitles>
  /** Feature keys of every word of every title, any length: the words the documents name things with. */
  vocabulary: Set<string>
}

/** The key of a title of two to four words: its words' feature keys, sorted. */
export const titleKey = (stems: string[]) => [...new Set(stems.map(featureKey))].sort().join(' ')

/**
 * Words that name a feature of the collection: words of a short section title (at most two
 * content words: "Tasks", "Audio Content", "Elicitation") of an authoritative source, or of any
 * source when the collection has no authoritative kind. A word like "url" or "happens" that only
 * turns up inside longer titles and sentences is not a feature, and its absence from a release
 * says nothing. The titles are kept per release too: a title that other releases have and the
 * asked one lacks names a feature it lacks.
 */
export async function loadTitles(db: Queryable, collections: string[], kinds: readonly string[]): Promise<Titles> {
  const { rows } = await db.query<{ heading: string; version: string | null }>(
    `SELECT DISTINCT heading, version FROM chunks
      WHERE collection_id = ANY($1::text[])
        AND (kind = ANY($2::text[]) OR NOT EXISTS (
              SELECT 1 FROM chunks a WHERE a.collection_id = ANY($1::text[]) AND a.kind = ANY($2::text[])))`,
    [collections, [...kinds]],
  )
  const out: Titles = { words: new Set(), phrases: new Set(), byVersion: new Map(), vocabulary: new Set() }
  for (const r of rows) {
    let mine = out.byVersion.get(r.version)
    if (!mine) out.byVersion.set(r.version, (mine = { words: new Set(), names: new Set(), keys: new Map() }))
    // A breadcrumb's levels, and the names of small sections packed into one chunk ("after · ready").
    for (const segment of r.heading.split(/ > | · /)) {
      const words = contentWords(segment)
      for (const w of words) out.vocabulary.add(featureKey(w))
      if (words.length > 0 && words.length <= 2)
        for (const w of words) {
          out.words.add(w)
          mine.words.add(featureKey(w))
        }
      const name = segment.trim().replace(/^`|`$/g, '')
      if (/^[\p{L}\p{N}_$./-]+$/u.test(name) && extractExactTerms(name).length + (/^_/.test(name) ? 1 : 0) > 0)
        mine.names.add(name.toLowerCase())
      if (words.length >= 2 && words.length <= 4) {
        mine.keys.set(titleKey(words), segment.trim())
        // Two adjacent words of a title of up to four ("URL Mode Flow", "URL Mode Elicitation
        // Requests") name a feature together, though each alone ("URL", "mode") is common.
        for (const [a, b] of adjacentPairs(segment)) {
          const key = phraseKey(`${a} ${b}`)
          if (key.split(' ').length === 2) out.phrases.add(key)
        }
      }
    }
  }
  return out
}

/** Most title terms one question gets: the longest titles first. */
const MAX_TITLE_TERMS = 6

/**
 * Section titles of other releases that the question's words cover, and that no scoped release
 * has ("Tools in Sampling" for "can the model call tools inside a sampling request?" in a
 * release whose sampling has no tools): each is a term of form `title`, searched as its words
 * standing close together, so that the release is said to lack it only when its documents never
 * put those words together.
 */
export function titleTerms(
  question: string,
  scope: Pick<ResolvedScope, 'known'>,
  titles: Titles,
  inScope: (version: string | null) => boolean,
): KeyTerm[] {
  const asked = new Set(
    contentWords(searchText(question, scope))
      .filter((w) => !FRAMING.has(w))
      .map(featureKey),
  )
  const scoped = new Set<string>()
  for (const [version, t] of titles.byVersion) if (inScope(version)) for (const key of t.keys.keys()) scoped.add(key)
  const found = new Map<string, string>()
  for (const [version, t] of titles.byVersion) {
    if (inScope(version)) continue
    for (const [key, text] of t.keys)
      if (!scoped.has(key) && !found.has(key) && key.split(' ').every((k) => asked.has(k))) found.set(key, text)
  }
  return [...found]
    .sort((a, b) => b[0].split(' ').length - a[0].split(' ').length)
    .slice(0, MAX_TITLE_TERMS)
    .map(([key, text]) => ({
      term: key,
      form: 'title' as const,
      // "Tools in Sampling" reads "tools in sampling"; acronyms keep their capitals ("URL Mode" -> "URL mode").
      spelling: text.replace(/\b([A-Z])([a-z]+)\b/g, (_, a: string, b: string) => a.toLowerCase() + b),
      words: titleWords(text),
    }))
}

/** A title's content words as written, for the keyword index's own parser. */
export function titleWords(title: string): string[] {
  return [...title.matchAll(/[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*/gu)].map((m) => m[0]).filter((w) => contentWords(w).length > 0)
}

/** Words of one title further apart than this in a passage are not that title's subject together. */
export const TITLE_WINDOW = 3

/**
 * A tsquery (to_tsquery syntax) that holds where each two consecutive words of the title stand
 * within TITLE_WINDOW words of each other, in either order. The words are letters, digits and
 * inner hyphens only, so nothing in them is an operator.
 */
export function proximityQuery(words: string[]): string {
  const pairs: string[] = []
  for (let i = 1; i < words.length; i++) {
    const a = words[i - 1]!
    const b = words[i]!
    const alts: string[] = []
    for (let d = 1; d <= TITLE_WINDOW; d++) alts.push(`${a} <${d}> ${b}`, `${b} <${d}> ${a}`)
    pairs.push(`(${alts.join(' | ')})`)
  }
  return pairs.join(' & ')
}
