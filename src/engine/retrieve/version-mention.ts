import { compareVersions, isPrerelease, latestVersion } from '../../shared/versions'
import { escapeRegExp } from '../core/regexp'

/**
 * Versions named in a question. People write the release into the question ("In MCP 2025-11-25,
 * …", "the 2024-11-05 spec", "the latest release") far more often than they touch a version
 * picker. Such a mention says where to search; it says nothing about what the passage is about, so
 * it is taken out of the text that keyword and vector search read (scored as content, a date lifts
 * every chunk that happens to list dates, such as JSON examples of protocol versions).
 *
 * Only versions the collection actually has count: a date or number that is not one of them is
 * content ("RFC 6749", "port 8080", a date in an example). Pure functions over the question text
 * and the collection's known versions; scope.ts turns the intent into a search scope.
 */

export type MentionKind = 'exact' | 'series' | 'month' | 'latest' | 'previous' | 'first'

export interface VersionMention {
  /** The collection's version it names. */
  version: string
  kind: MentionKind
  /** Span in the question, including words that only point at the version ("v", "'s", "spec"). */
  start: number
  end: number
  text: string
}

export interface VersionIntent {
  mentions: VersionMention[]
  /**
   * Versions to search, oldest first; 'all' when the question asks across releases without
   * bounds ("which release first added …"); null when it names no version (the default applies).
   */
  versions: string[] | 'all' | null
  /** The question asks what changed or when: change-log sections are preferred. */
  history: boolean
}

/** Words that follow a version and only point at it: "the 2025-06-18 spec", "draft docs". */
const VERSION_NOUN =
  '(?:spec|specs|specification|specifications|version|versions|release|releases|revision|revisions|docs|documentation|edition|branch)'
const VERSION_NOUN_RE = new RegExp(`^${VERSION_NOUN}$`, 'i')

/**
 * Verbs that may follow a word-named version used as a subject ("what does the draft say", "the
 * draft adds"). Any other lowercase word after it makes it an adjective of that word ("the draft
 * email", "the next request", "the preview pane"), which is not a version mention.
 */
const SUBJECT_VERBS = new Set(
  'say says said add adds added change changes changed introduce introduces introduced remove removes removed define defines defined require requires required allow allows allowed have has had is are was were does do did still mention mentions describe describes specify specifies support supports drop drops deprecate deprecates list lists recommend recommends'.split(
    ' ',
  ),
)
/** Determiners that make a word an ordinary noun: "a draft", "my draft". */
const COMMON_NOUN_DETERMINERS = /(?:^|\s)(?:a|an|my|your|our|their|his|her|its|another|each|every)\s+$/i

interface Span {
  start: number
  end: number
}

const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end

/** Extends a span over a following version noun ("2025-06-18 spec") so it leaves the query with it. */
function withTrailingNoun(text: string, end: number): number {
  const m = /^(?:'s|’s)?\s+([A-Za-z]+)/.exec(text.slice(end))
  if (m && VERSION_NOUN_RE.test(m[1]!)) return end + m[0].length
  const poss = /^(?:'s|’s)/.exec(text.slice(end))
  return poss ? end + poss[0].length : end
}

/** "version 2", "release 1.2": a preceding version noun goes with the mention. */
function withLeadingNoun(text: string, start: number): number {
  const m = /(?:^|\s)((?:version|release|revision|rev\.?)\s+)$/i.exec(text.slice(0, start))
  return m ? start - m[1]!.length : start
}

function exactMentions(text: string, known: readonly string[]): VersionMention[] {
  const out: VersionMention[] = []
  for (const version of known) {
    const bare = version.replace(/^v(?=\d)/i, '')
    const numeric = /\d/.test(bare)
    // "1.2.x" is also written "1.2"; "v1.2" and "1.2" are the same version.
    const core = /\.x$/i.test(bare) ? `${escapeRegExp(bare.slice(0, -2))}(?:\\.x)?` : escapeRegExp(bare)
    const prefix = numeric ? '[vV]?' : ''
    const re = new RegExp(`(?<![\\p{L}\\p{N}_./-])${prefix}${core}(?![\\p{L}\\p{N}_/-]|\\.\\p{N}|-\\p{L})`, 'giu')
    for (const m of text.matchAll(re)) {
      let start = m.index
      let end = start + m[0].length
      if (numeric) {
        // A bare integer ("2 tools", "10 times" where 10.x is a version) is a count, not a
        // version, unless written v2, 10.x or "version 2".
        const lead = withLeadingNoun(text, start)
        if (/^\d+$/.test(m[0]) && lead === start) continue
        start = lead
      } else {
        if (!wordVersionInContext(text, start, end)) continue
      }
      end = withTrailingNoun(text, end)
      out.push({ version, kind: 'exact', start, end, text: text.slice(start, end) })
    }
  }
  return out
}

/**
 * A release line named by its major (or major.minor) number: "Fastify 3", "v4", "3.x", "version 5",
 * "React 18.2" for a collection whose versions are full release numbers (3.29.5, 4.29.1). People
 * name the line, not the patch release the documentation was cut from. The number names a line
 * only when the collection has one starting with it, and only where it is written as a version:
 * with a "v" or ".x", after a version noun, or after the collection's own name. Any other word
 * before a bare number does not make it a release: "OAuth 2", "HTTP 2", "Step 3" name other things.
 * The newest release of that line is meant.
 */
const SERIES = /(?<![\p{L}\p{N}_./-])(v)?(\d{1,4})(?:\.(\d{1,4}))?(\.x)?(?![\p{L}\p{N}_/-]|\.\p{N})/giu
function seriesMentions(text: string, known: readonly string[], taken: Span[], names: readonly string[]): VersionMention[] {
  const numbered = known.filter((v) => /^v?\d+(?:\.\d+)+/i.test(v))
  if (numbered.length === 0) return []
  const product = new Set(names.map((n) => n.toLowerCase()))
  const out: VersionMention[] = []
  for (const m of text.matchAll(SERIES)) {
    const [whole, v, major, minor, dotX] = m
    if ([...taken, ...out].some((t) => overlaps(t, { start: m.index, end: m.index + whole.length }))) continue
    const line = minor === undefined ? major! : `${major}.${minor}`
    const inLine = numbered.filter((k) => k.replace(/^v/i, '').startsWith(line + '.'))
    if (inLine.length === 0) continue
    const lead = withLeadingNoun(text, m.index)
    // "fastify 4", "Fastify version 4" (the noun is taken by `lead`), "fastify@4".
    const before = /([\p{L}][\p{L}\p{N}_.-]*)(?:\s+|@)$/u.exec(text.slice(0, lead))?.[1]
    const afterProduct = !!before && product.has(before.toLowerCase())
    if (!v && !dotX && lead === m.index && !afterProduct) continue
    const version = [...inLine].sort(compareVersions).at(-1)!
    const end = withTrailingNoun(text, m.index + whole.length)
    out.push({ version, kind: 'series', start: lead, end, text: text.slice(lead, end) })
  }
  return out
}

/** A word-named version ("draft", "next", "preview") counts only where it is used as a name. */
function wordVersionInContext(text: string, start: number, end: number): boolean {
  if (COMMON_NOUN_DETERMINERS.test(text.slice(0, start))) return false
  const after = text.slice(end)
  if (/^(?:'s|’s)/.test(after)) return true
  const next = /^\s+([A-Za-z][\w-]*)/.exec(after)
  if (!next) return true // end of text or punctuation: "in the draft?", "draft: …"
  const word = next[1]!
  if (VERSION_NOUN_RE.test(word) || SUBJECT_VERBS.has(word.toLowerCase())) return true
  if (/^[A-Z]/.test(word)) {
    // A product name between: "the draft MCP spec" (a name) vs "the draft MCP server" (an adjective).
    const then = /^\s+[A-Za-z][\w-]*\s+([A-Za-z]+)/.exec(after)
    return !then || VERSION_NOUN_RE.test(then[1]!) || SUBJECT_VERBS.has(then[1]!.toLowerCase()) || /^[A-Z]/.test(then[1]!)
  }
  return false
}

// "the release before the current one", "the spec before latest": the release before the latest.
const BEFORE_LATEST = new RegExp(
  `\\b(?:the\\s+)?(?:one|${VERSION_NOUN})\\s+(?:just\\s+)?before\\s+(?:the\\s+)?(?:current|latest|newest)(?:\\s+(?:one|${VERSION_NOUN}))?\\b`,
  'gi',
)
// "the previous release", "the prior MCP spec". ("last release" is left out: people mean the newest by it.)
const PREVIOUS = new RegExp(`\\b(?:the\\s+)?(?:previous|prior|preceding)\\s+(?:(\\S+)\\s+)?${VERSION_NOUN}\\b`, 'gi')
// "the latest spec", "Latest release", "the current version of MCP", "the newest MCP docs", "the most recent release".
const LATEST = new RegExp(`\\b(?:the\\s+)?(?:latest|newest|current|most\\s+recent)\\s+(?:(\\S+)\\s+)?${VERSION_NOUN}\\b`, 'gi')
// "is it still in the latest?"
const LATEST_BARE = /\bthe\s+(?:latest|newest)(?=\s*[?.!,;:)]|\s*$)/gi
// "the original spec", "the first release", "the very first MCP spec", "the initial version of MCP".
const FIRST = new RegExp(
  `\\b(?:the\\s+)?(?:very\\s+)?(?:first|original|initial|earliest|oldest)\\s+(?:(\\S+)\\s+)?${VERSION_NOUN}\\b`,
  'gi',
)
/**
 * What follows "the first release" when it asks which release ("the first version to add audio",
 * "the first release that supports …") or names something else's first version ("the first
 * version of my server"): then it names no release of the collection.
 */
const NOT_A_NAME_AFTER =
  /^\s+(?:to|that|which|where|when|with|in\s+which|supporting|adding|introducing|having|including)\b|^\s+of\s+(?![A-Z])/

/**
 * A word between "latest" and the noun must be a name ("the latest MCP spec"); a lowercase word
 * makes the phrase content ("the current protocol version" is a field of the protocol).
 */
const nameOrNothing = (m: RegExpMatchArray) => m[1] === undefined || /^[A-Z]/.test(m[1])

function relativeMentions(text: string, known: readonly string[], taken: Span[]): VersionMention[] {
  const latest = latestVersion(known)
  const released = known.filter((v) => !isPrerelease(v)).sort(compareVersions)
  const previous = released.length >= 2 ? released[released.length - 2]! : null
  const out: VersionMention[] = []
  const add = (re: RegExp, kind: MentionKind, version: string | null, ok: (m: RegExpMatchArray) => boolean = () => true) => {
    if (!version) return
    for (const m of text.matchAll(re)) {
      const span = { start: m.index, end: m.index + m[0].length }
      if (!ok(m) || [...taken, ...out].some((t) => overlaps(t, span))) continue
      out.push({ version, kind, ...span, text: m[0] })
    }
  }
  // Longest forms first: "the release before the current one" contains "current".
  add(BEFORE_LATEST, 'previous', previous)
  add(PREVIOUS, 'previous', previous, nameOrNothing)
  add(LATEST, 'latest', latest, nameOrNothing)
  add(LATEST_BARE, 'latest', latest)
  add(FIRST, 'first', released[0] ?? null, (m) => nameOrNothing(m) && !NOT_A_NAME_AFTER.test(text.slice(m.index! + m[0].length)))
  return out
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
// "March 2025", "Nov 2025", "Mar. 2025", "June of 2025", "Sept 2025"; and "2025-03" not followed by a day.
const MONTH_YEAR =
  /\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(?:of\s+)?((?:19|20)\d\d)\b/gi
const YEAR_MONTH = /(?<![\p{L}\p{N}_./-])((?:19|20)\d\d)-(0[1-9]|1[0-2])(?![\p{L}\p{N}_/]|-\d|\.\d)/gu

/**
 * A dated release named by its month ("the March 2025 spec" for 2025-03-26): only when the
 * collection's versions are dates and exactly one of them falls in that month; otherwise the
 * month is content ("a token issued in March 2024").
 */
function monthMentions(text: string, known: readonly string[], taken: Span[]): VersionMention[] {
  const byMonth = new Map<string, string[]>()
  for (const v of known) {
    const m = /^v?((?:19|20)\d\d)-(\d\d)-\d\d$/i.exec(v)
    if (m) byMonth.set(`${m[1]}-${m[2]}`, [...(byMonth.get(`${m[1]}-${m[2]}`) ?? []), v])
  }
  if (byMonth.size === 0) return []
  const out: VersionMention[] = []
  const add = (start: number, end: number, key: string) => {
    const versions = byMonth.get(key)
    if (!versions || versions.length !== 1 || taken.some((t) => overlaps(t, { start, end }))) return
    const full = withTrailingNoun(text, end)
    out.push({ version: versions[0]!, kind: 'month', start, end: full, text: text.slice(start, full) })
  }
  for (const m of text.matchAll(MONTH_YEAR)) {
    // "may" is also a verb: as a month it is written with a capital ("May 2025").
    if (m[1] === 'may') continue
    const month = String(MONTHS.indexOf(m[1]!.slice(0, 3).toLowerCase()) + 1).padStart(2, '0')
    add(m.index, m.index + m[0].length, `${m[2]}-${month}`)
  }
  for (const m of text.matchAll(YEAR_MONTH)) add(m.index, m.index + m[0].length, `${m[1]}-${m[2]}`)
  return out
}

/**
 * Every mention of one of `known` in the question, in text order (overlaps resolved to the first).
 * `names`: the collection's own names, after which a number names a release line ("fastify 3").
 */
export function findVersionMentions(text: string, known: readonly string[], names: readonly string[] = []): VersionMention[] {
  if (known.length === 0) return []
  // Longer names first, so "1.2.10" wins over "1.2" where both are versions.
  const exact = exactMentions(
    text,
    [...known].sort((a, b) => b.length - a.length),
  )
  const kept: VersionMention[] = []
  for (const m of exact.sort((a, b) => a.start - b.start || b.end - a.end)) if (!kept.some((k) => overlaps(k, m))) kept.push(m)
  kept.push(...seriesMentions(text, known, kept, names))
  const months = monthMentions(text, known, kept)
  // A collection may have a version literally named "latest": then the exact name already took it.
  const relative = relativeMentions(text, known, [...kept, ...months])
  return [...kept, ...months, ...relative].sort((a, b) => a.start - b.start)
}

/** The question asks for a release ("which release first added …", "when was X removed"). */
const ASKS_WHICH_RELEASE = new RegExp(
  [
    `\\b(?:which|what)\\s+(?:\\w+\\s+)?${VERSION_NOUN}\\b(?!\\s+(?:of|does|do|is|are|should|must|can)\\b)`,
    `\\bwhen\\s+(?:was|were|did|has|have|had)\\b[^?.;]*?\\b(?:add|added|introduc\\w*|remov\\w*|deprecat\\w*|drop\\w*|chang\\w*|replac\\w*|go\\s+away|went\\s+away|disappear\\w*|appear\\w*|taken\\s+out|arriv\\w*|land\\w*|renam\\w*)`,
    `\\bfirst\\s+(?:added|introduced|appeared|appear|supported|defined|mentioned|let|allowed|shipped)\\b`,
    `\\bhow\\s+(?:has|have)\\b[^?.;]*?\\bevolved\\b`,
    `\\bacross\\s+(?:${VERSION_NOUN}|versions|releases)\\b`,
    // "What happened to tasks?", "whatever became of SSE?": a history (what happens now is content).
    `\\bwhat(?:ever)?\\s+(?:has\\s+)?(?:happened\\s+to|became\\s+of)\\b`,
    // "What happens to batching in newer releases?", "is it still there in later versions?": across
    // the releases after, which only their change logs tell apart.
    `\\b(?:newer|later|subsequent|more\\s+recent)\\s+${VERSION_NOUN}\\b`,
  ].join('|'),
  'i',
)
/**
 * The question asks what changed. Only question forms count: "the tool list has changed" inside
 * a question about notifications is content, "has the guidance changed?" asks about change.
 */
const ASKS_WHAT_CHANGED =
  /\b(?:what(?:'s|’s|\s+has|\s+have)?\s+changed|what(?:'s|’s|\s+is)\s+new|how\s+(?:did|has|have)\b[^?.;]{0,80}?\bchang(?:e|ed|es)|release\s+notes|change\s?logs?)\b|(?:^|[,;:]\s*|\b(?:and|so|but)\s+)(?:has|have|did)\b[^?.;]{0,80}?\b(?:changed|change)\b/i
/** Comparing two named releases ("how do A and B differ", "the difference between A and B"). */
const ASKS_DIFFERENCE = /\bdiffer(?:s|ence|ences|ent)?\b|\bcompare[sd]?\b|\bvs\.?\b|\bversus\b/i

type Bound = 'between' | 'since' | 'after' | 'until' | 'before'

/** The word that ties a mention to a range: "between A and B", "since A", "before A". */
function boundBefore(text: string, m: VersionMention): Bound | null {
  const before = text.slice(Math.max(0, m.start - 40), m.start).toLowerCase()
  if (/\bbetween\s+(?:the\s+)?(?:mcp\s+)?$/.test(before)) return 'between'
  if (/\bfrom\s+(?:the\s+)?$/.test(before)) return 'between'
  if (/\b(?:since|starting\s+(?:with|from|in)|as\s+of)\s+(?:the\s+)?$/.test(before)) return 'since'
  if (/\b(?:after|later\s+than|newer\s+than)\s+(?:the\s+)?$/.test(before)) return 'after'
  if (/\b(?:until|till|up\s+to|through|up\s+to\s+and\s+including)\s+(?:the\s+)?$/.test(before)) return 'until'
  if (/\b(?:before|prior\s+to|earlier\s+than|older\s+than)\s+(?:the\s+)?$/.test(before)) return 'before'
  const after = text.slice(m.end, m.end + 30).toLowerCase()
  if (/^\s*(?:and|or)\s+(?:later|newer|after|onwards?|above|up)\b/.test(after) || /^\s*onwards?\b/.test(after)) return 'since'
  if (/^\s*(?:and|or)\s+(?:earlier|older|before|below)\b/.test(after)) return 'until'
  return null
}

/**
 * What the question says about versions: the versions to search and whether it asks about
 * change. `known` are the versions of one collection (each collection resolves its own "latest").
 */
export function detectVersionIntent(text: string, known: readonly string[], names: readonly string[] = []): VersionIntent {
  const mentions = findVersionMentions(text, known, names)
  const asksRelease = ASKS_WHICH_RELEASE.test(text)
  const asksChange = ASKS_WHAT_CHANGED.test(text)
  const ordered = [...known].sort(compareVersions)
  const named = [...new Set(mentions.map((m) => m.version))].sort(compareVersions)
  const indexOf = (v: string) => ordered.indexOf(v)

  if (named.length === 0) {
    // "Which release first added audio?", "what changed in sampling?": every release, change logs first.
    const history = asksRelease || asksChange
    return { mentions, versions: history ? 'all' : null, history }
  }
  const ranged = mentions.map((m) => ({ m, bound: boundBefore(text, m) })).find((b) => b.bound !== null)
  if (named.length >= 2 && (ranged?.bound === 'between' || asksChange || asksRelease || ASKS_DIFFERENCE.test(text))) {
    // "between A and B", "what changed from A to B": both ends and every release in between.
    const lo = indexOf(named[0]!)
    const hi = indexOf(named[named.length - 1]!)
    return { mentions, versions: ordered.slice(lo, hi + 1), history: true }
  }
  if (ranged && named.length === 1) {
    const i = indexOf(ranged.m.version)
    const versions =
      ranged.bound === 'since' || ranged.bound === 'between'
        ? ordered.slice(i)
        : ranged.bound === 'after'
          ? ordered.slice(i + 1)
          : ranged.bound === 'until'
            ? ordered.slice(0, i + 1)
            : ordered.slice(0, i)
    if (versions.length > 0) return { mentions, versions, history: true }
  }
  // "Is X still in the latest spec? When did it go away?": the answer may be in any release.
  if (asksRelease) return { mentions, versions: 'all', history: true }
  // "What changed in 2025-06-18?" (its change log), "in 2024-11-05 and 2025-03-26" (those two).
  return { mentions, versions: named, history: asksChange }
}

/**
 * The question without its version mentions: what keyword and vector search read. Falls back to
 * the question as written when nothing but the version would be left.
 */
export function removeVersionMentions(text: string, mentions: readonly Span[]): string {
  if (mentions.length === 0) return text
  const spans = [...mentions].sort((a, b) => a.start - b.start)
  let out = ''
  let at = 0
  for (const s of spans) {
    if (s.start < at) continue
    out += text.slice(at, s.start) + ' '
    at = s.end
  }
  out += text.slice(at)
  const cleaned = out
    .replace(/\s+([,.;:?!])/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .replace(/^[\s,.;:]+/, '')
    .trim()
  return /[\p{L}\p{N}]/u.test(cleaned) ? cleaned : text
}
