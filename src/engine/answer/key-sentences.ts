import { compareVersions, namesRelease } from '../../shared/versions'
import type { VerificationRepair } from '../../shared/trace'
import { joinWords } from '../../shared/words'
import { CHANGE_WORDS, isChangeLog } from '../retrieve/fuse'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { codeIntroducedBy, contentWords, exactTerms, LIST_MARKER, splitUnits, unitScore, type TextUnit } from './sentences'
import { questionWeights } from './trim'

/**
 * What the best passages say about the question that the answer leaves out. A 1.5B model answers
 * in a sentence or two and drops most of what its passages say: on the fit half of the MCP golden
 * set its answers held 31% of the questions' facts while the passages it read held 79%
 * (docs/benchmarks.md, "Key sentences from the best passages"). So after the model's verified
 * sentences, the sentences of the two best-ranked passages that hold most of the question's
 * weighted terms are added, in the passage's own words and citing it: grounded by construction,
 * marked as added (`added: 'quote'`, shown as copied in the app) and named in the trace.
 *
 * - Each pick lowers the weight of the question terms it holds, so a second sentence answers
 *   another part of the question rather than repeating the first (a multi-part question).
 * - A sentence the answer already says (most of its content words are in the answer) is skipped.
 * - A sentence must hold at least MIN_SCORE of the weighted question, so a passage that is not
 *   about the question adds nothing.
 *
 * The rule (2 passages, 2 sentences, score 2) was chosen on the fit half of the MCP golden set by
 * replaying the model's recorded answers (`evals/answers/key-sentences.ts`); the held-out halves
 * are measured with the model (docs/benchmarks.md).
 */

/** Passages the sentences come from: the best-ranked ones (retrieval's order). */
export const KEY_PASSAGES = 2
/** At most this many sentences are added. */
export const KEY_SENTENCES = 2
/** A sentence must hold at least this weight of the question's terms (questionWeights) to be added. */
export const MIN_SCORE = 2
/** Share of a sentence's content words the answer must hold for the sentence to count as said. */
export const SAID = 0.6
/** A term a chosen sentence holds counts this much toward the next pick. */
const DISCOUNT = 0.3

/**
 * The question's terms less the releases it names: "since 2025-03-26" says when, not what, and a
 * sentence that only mentions that release ("deprecated since 2025-03-26") is not about the question.
 */
function aboutWhat(weights: Map<string, number>): Map<string, number> {
  return new Map([...weights].filter(([t]) => !namesRelease(t)))
}
/** For a question about what changed, at most this many releases' change-log lines are added. */
export const HISTORY_RELEASES = 3

export interface KeyPick {
  passage: PromptPassage
  unit: TextUnit
  /** A short code block the sentence introduces ("…send a notification:"). */
  follows: TextUnit | null
  score: number
}

const said = (p: KeyPick) => p.unit.text + (p.follows ? `\n${p.follows.text}` : '')

interface Candidate {
  passage: PromptPassage
  unit: TextUnit
  follows: TextUnit | null
  words: Set<string>
  lower: string
}

/** A sentence that ends in a colon introduces what follows it. */
const INTRODUCES = /:\s*$/

/** The sentences of these passages the answer does not say yet (headings and code aside), each with the short code block it introduces. */
function unsaid(
  answer: readonly string[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
): Candidate[] {
  const said = new Set(answer.flatMap((s) => contentWords(s)))
  const verbatim = new Set(answer.map((s) => s.trim()))
  const out: Candidate[] = []
  for (const passage of passages) {
    const units = splitUnits(fullText(passage))
    units.forEach((unit, i) => {
      if (unit.kind === 'heading' || unit.kind === 'code' || verbatim.has(unit.text.trim())) return
      const words = new Set(contentWords(unit.text))
      if (words.size === 0 || [...words].filter((w) => said.has(w)).length / words.size >= SAID) return
      const follows = codeIntroducedBy(units, i)
      // A sentence that introduces what follows ("…with an Accept header as defined above:") says it
      // with what follows; copied alone it ends in the air. A short code block comes with it; a list does not.
      if (!follows && INTRODUCES.test(unit.text)) return
      out.push({ passage, unit, follows, words, lower: unit.text.toLowerCase() })
    })
  }
  return out
}

/** The sentences to add, best first: at most KEY_SENTENCES, each holding at least MIN_SCORE of what is still unanswered. */
export function keySentences(
  answer: readonly string[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  /** The rule's numbers, for measuring variants of it (evals/answers/key-sentences.ts). */
  rule: KeyRule = {},
  /** The passages sentences may come from (the best-ranked of these); all count for the terms' weights. */
  from: (p: PromptPassage) => boolean = () => true,
): KeyPick[] {
  return rankKeySentences(answer, passages, fullText, question, rule, from).picks
}

interface KeyRule {
  sentences?: number
  minScore?: number
  passages?: number
  minShare?: number
  /** Content words a sentence must hold beyond the question's, to say something it does not ("- onMaxParamLength" says none). */
  minNew?: number
}

/** keySentences' picks, with the total weight of the question's terms they were scored against. */
function rankKeySentences(
  answer: readonly string[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  rule: KeyRule,
  from: (p: PromptPassage) => boolean,
): { picks: KeyPick[]; total: number } {
  const most = rule.sentences ?? KEY_SENTENCES
  const ranked = [...passages].sort((a, b) => a.n - b.n)
  const weights = aboutWhat(questionWeights(question, ranked.map(fullText)))
  const exact = exactTerms(question)
  const asked = new Set(contentWords(question))
  const candidates = unsaid(answer, ranked.filter(from).slice(0, rule.passages ?? KEY_PASSAGES), fullText).filter(
    (c) => [...c.words].filter((w) => !asked.has(w)).length >= (rule.minNew ?? 0),
  )
  const picks: KeyPick[] = []
  const left = new Map(weights)
  const total = [...weights.values()].reduce((a, b) => a + b, 0)
  const floor = Math.max(rule.minScore ?? MIN_SCORE, (rule.minShare ?? 0) * total)
  while (picks.length < most) {
    let best: Candidate | null = null
    let bestScore = 0
    for (const c of candidates) {
      if (picks.some((p) => p.unit === c.unit)) continue
      const score = unitScore(c.words, c.unit.text, left, exact)
      if (score > bestScore) {
        best = c
        bestScore = score
      }
    }
    if (!best || bestScore < floor) break
    picks.push({ passage: best.passage, unit: best.unit, follows: best.follows, score: bestScore })
    for (const [t, w] of left) if (best.words.has(t) || (exact.has(t) && best.lower.includes(t))) left.set(t, w * DISCOUNT)
  }
  return { picks, total }
}

/**
 * The share of the question's weighted terms (less the releases it names) that the best passage
 * sentence must hold for the best passages' own sentences to be the answer when the model's does
 * not stand (`quotedAnswer`).
 */
export const QUOTE_SHARE = 0.3

/**
 * Content words a quoted sentence holds beyond the question's: an entry of a reference page's list
 * of options ("- useSemicolonDelimiter") holds the asked name and says nothing about it.
 */
export const QUOTE_NEW_WORDS = 1

/**
 * The answer in the best passages' own words, when the model gave none that stands: it declined,
 * or none of its sentences checked out. The key sentences of the best-ranked passages, as for an
 * answer (`keySentences`), provided the first holds at least `share` of the question's weighted
 * terms: a passage sentence that holds most of what was asked ("how does a client find out which
 * URL to POST its messages to?": "All subsequent client messages MUST be sent as HTTP POST requests
 * to this endpoint") is about the question, one that holds a word or two is not. Empty otherwise.
 *
 * QUOTE_SHARE was set on the fit halves of the MCP sets with a model that declines every question
 * (`evals/answers/declining.ts`, the worst case): the lowest tenth above every unanswerable
 * question's best sentence there (0.25). In-sample; the held-out halves are the check
 * (docs/benchmarks.md, "Quoted answers when the model's does not stand").
 */
export function quotedAnswer(
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  share = QUOTE_SHARE,
  /** The passages that may be quoted (for a release-scoped question, the release's own authoritative sources). */
  from: (p: PromptPassage) => boolean = () => true,
): { picks: KeyPick[]; share: number } {
  const { picks, total } = rankKeySentences([], passages, fullText, question, { minNew: QUOTE_NEW_WORDS }, from)
  const held = total > 0 && picks.length ? picks[0]!.score / total : 0
  if (held < share) return { picks: [], share: held }
  return { picks: picks.sort((a, b) => a.passage.n - b.passage.n || a.unit.start - b.unit.start), share: held }
}

/** A quoted list item comes with its list under the lead-in, when the list is at most this long (set by hand, not fitted). */
export const QUOTED_LIST_ITEMS = 6

/**
 * The units a quoted answer shows for its picks, in order: a list item alone out of its list reads
 * as a fragment ("- A regular HTTP POST endpoint for clients to send messages to the server"), so
 * an item whose list follows a lead-in ("The server MUST provide two endpoints:") comes with the
 * lead-in and, for a short list, the list's other items; each unit once, with the passage it cites.
 */
export function quotedUnits(
  picks: readonly KeyPick[],
  fullText: (p: PromptPassage) => string,
): { passage: PromptPassage; unit: TextUnit }[] {
  const out: { passage: PromptPassage; unit: TextUnit }[] = []
  const seen = new Set<string>()
  const push = (passage: PromptPassage, unit: TextUnit) => {
    const key = `${passage.n}:${unit.start}`
    if (seen.has(key)) return
    seen.add(key)
    out.push({ passage, unit })
  }
  for (const pick of picks) {
    const units = pick.unit.list === null ? [] : splitUnits(fullText(pick.passage))
    const items = units.filter((u) => u.list === pick.unit.list)
    const before = items.length ? units[units.indexOf(items[0]!) - 1] : undefined
    const leadIn =
      before && before.kind !== 'heading' && before.kind !== 'code' && before.list === null && INTRODUCES.test(before.text)
    if (leadIn) {
      push(pick.passage, before)
      for (const u of items.length <= QUOTED_LIST_ITEMS ? items : [items.find((u) => u.start === pick.unit.start)!])
        push(pick.passage, u)
    } else push(pick.passage, pick.unit)
    if (pick.follows) push(pick.passage, pick.follows)
  }
  return out
}

/**
 * For a question about what changed ("what happened to tasks after they were first introduced?",
 * "when was batching removed?"; retrieval ranked change logs first): what each release's change
 * log among the passages says about the subject, one line per release, oldest first. A 1.5B model
 * tells one release's part and stops; the history is in the change logs, line by line. A line must
 * hold a term of the question that is not a word about change, and not be said already.
 */
export function historySentences(
  answer: readonly string[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
): KeyPick[] {
  const logs = passages.filter((p) => p.version && isChangeLog(p))
  if (logs.length === 0) return []
  const weights = questionWeights(question, passages.map(fullText))
  const exact = exactTerms(question)
  const subject = new Map([...aboutWhat(weights)].filter(([t]) => !CHANGE_WORDS.has(t)))
  if (subject.size === 0) return []
  const best = new Map<string, KeyPick>()
  for (const { passage, unit, follows, words } of unsaid(answer, logs, fullText)) {
    if (unitScore(words, unit.text, subject, exact) === 0) continue
    const score = unitScore(words, unit.text, weights, exact)
    const held = best.get(passage.version!)
    if (!held || score > held.score) best.set(passage.version!, { passage, unit, follows, score })
  }
  return [...best.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, HISTORY_RELEASES)
    .sort((a, b) => compareVersions(a.passage.version!, b.passage.version!))
}

const YES_NO =
  /^\s*(?:and\s+|so\s+|but\s+)?(?:do|does|did|is|are|was|were|must|should|can|could|may|will|would|shall|has|have)\b/i
const OBLIGATION =
  /\b(?:requires?|required|requirements?|must|mandatory|obligatory|optional|have to|has to|need(?:s)? to|allowed|permitted|forbidden|may|shall|should)\b/i

/** The words of asking about an obligation, as contentWords stems them. */
const OBLIGATION_WORDS: ReadonlySet<string> = new Set(
  contentWords(
    'require requires required requirement requirements must mandatory obligatory optional have has need needs allowed allow permitted forbidden may shall should support supports supported spec specification',
  ),
)

/**
 * A question whether something is required or allowed: a yes-or-no question ("does the spec
 * require PKCE?", "do servers have to support dynamic client registration?", "is the title field
 * optional?", "may a client send pings early?") about an obligation or a permission.
 */
export function asksRequirement(question: string): boolean {
  return YES_NO.test(question) && OBLIGATION.test(question)
}

/** The requirement keywords of specifications (BCP 14), as they write them: in capitals. */
export const REQUIREMENT =
  /\b(?:MUST(?: NOT)?|SHALL(?: NOT)?|SHOULD(?: NOT)?|REQUIRED|NOT RECOMMENDED|RECOMMENDED|MAY|OPTIONAL)\b/

/**
 * For a question whether something is required or allowed, whose answer states no requirement
 * level: the sentence of a passage the model read that does, about the question's subject. A
 * 1.5B model asked "does the spec require PKCE for the OAuth flow?" explained what PKCE does, from
 * the passage whose previous sentence says "MCP clients MUST implement PKCE according to OAuth
 * 2.1 Section 7.5.2" (p36 of mcp-docs-people). The sentence must hold the question's subject (of
 * its terms other than the asking, the heaviest the answer itself is about) and a requirement
 * keyword in capitals, as specifications write them; documents that write none get nothing.
 */
export function requirementSentence(
  answer: readonly string[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
): KeyPick | null {
  if (!asksRequirement(question) || answer.some((s) => REQUIREMENT.test(s))) return null
  const ranked = [...passages].sort((a, b) => a.n - b.n)
  const weights = aboutWhat(questionWeights(question, ranked.map(fullText)))
  const exact = exactTerms(question)
  // The subject is what is required ("PKCE"), not the asking ("require"): of the question's other
  // terms, the heaviest the answer itself is about (it explained PKCE), else the heaviest.
  const answered = new Set(answer.flatMap((s) => contentWords(s)))
  const answeredText = answer.join('\n').toLowerCase()
  const terms = [...weights].filter(([t]) => !OBLIGATION_WORDS.has(t)).sort((a, b) => b[1] - a[1])
  const inAnswer = terms.filter(([t]) => answered.has(t) || (exact.has(t) && answeredText.includes(t)))
  const subject = (inAnswer[0] ?? terms[0])?.[0]
  if (!subject) return null
  let best: KeyPick | null = null
  for (const c of unsaid(answer, ranked, fullText)) {
    if (!REQUIREMENT.test(c.unit.text)) continue
    if (!(c.words.has(subject) || (exact.has(subject) && c.lower.includes(subject)))) continue
    const score = unitScore(c.words, c.unit.text, weights, exact)
    if (!best || score > best.score) best = { passage: c.passage, unit: c.unit, follows: c.follows, score }
  }
  return best
}

/**
 * For a question scoped to a release with its own authoritative sources (a specification), when
 * nothing the answer says so far rests on them: the key sentence of the release's own authoritative
 * passages the model was given, so that the answer shows what the release itself says. A 1.5B model
 * asked how a 2025-06-18 server tells clients its tools changed answered from the architecture
 * guide, while the specification's "listChanged indicates whether the server will emit
 * notifications when the list of available tools changes" sat among its passages. The sentence
 * must hold MIN_SCORE of the question and a word beyond it (QUOTE_NEW_WORDS), as any key sentence
 * or quote; null when an answer sentence already cites the release's own source, or none holds
 * that much.
 */
export function ownSentence(
  kept: readonly KeptSentence[],
  chosen: readonly KeyPick[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  own: (p: PromptPassage) => boolean,
): KeyPick | null {
  const byN = new Map(passages.map((p) => [p.n, p]))
  if (kept.some((s) => s.cites.some((n) => byN.get(n) && own(byN.get(n)!)))) return null
  if (chosen.some((k) => own(k.passage))) return null
  const answer = kept.map((s) => s.text)
  const [pick] = keySentences(answer, passages, fullText, question, { sentences: 1, minNew: QUOTE_NEW_WORDS }, own)
  return pick ?? null
}

/** What the repair says of the release's own sentence, when it was added: nothing else the answer said rested on that release's source. */
function ownNote(fromOwn: KeyPick | null, picks: readonly KeyPick[]): string {
  if (!fromOwn || !picks.includes(fromOwn)) return ''
  const p = fromOwn.passage
  return ` Passage [${p.n}] is the ${p.kind?.toLowerCase() ?? 'authoritative source'} of ${p.version}, which nothing else in the answer cited.`
}

/** The items whose text the release rule after generation (`misses`) does not find naming a feature the release lacks. */
export async function withoutMisses<T>(
  items: T[],
  text: (item: T) => string,
  misses?: (sentences: string[]) => Promise<{ index: number }[]>,
): Promise<T[]> {
  if (items.length === 0 || !misses) return items
  const out = new Set((await misses(items.map(text))).map((m) => m.index))
  return items.filter((_, i) => !out.has(i))
}

/** The passages the model's own sentences (not those the engine copied) cite, best-ranked first. */
export function citedByModel(kept: readonly KeptSentence[], passages: readonly PromptPassage[]): PromptPassage[] {
  return [...passages].sort((a, b) => a.n - b.n).filter((p) => kept.some((s) => !s.added && s.cites.includes(p.n)))
}

/**
 * Sentences copied from passages, each placed after the last sentence of the answer that cites its
 * passage (at the end when none does), citing that passage and marked as copied (`added: 'quote'`);
 * with the passages' numbers for the repair that names them ("[1] and [3]").
 */
export function withCopies(
  kept: readonly KeptSentence[],
  copies: readonly { text: string; passage: PromptPassage }[],
): { out: KeptSentence[]; from: string } {
  const out = [...kept]
  for (const { text, passage } of copies) {
    const at = out.reduce((last, s, i) => (s.cites.includes(passage.n) ? i : last), -1)
    out.splice(at >= 0 ? at + 1 : out.length, 0, { text, cites: [passage.n], added: 'quote' as const })
  }
  return { out, from: joinWords([...new Set(copies.map((x) => `[${x.passage.n}]`))]) }
}

/** A list item's own marker ("9. ", "* ") as a plain bullet. */
export const asBullet = (text: string) => text.replace(LIST_MARKER, '- ')

/** What else decides the key sentences an answer gets. */
export interface KeyOptions {
  /** The release rule after generation (release-after.ts), for a question scoped to a release. */
  misses?: (sentences: string[]) => Promise<{ index: number }[]>
  /** The question asks what changed (retrieval ranked change logs first): each release's change-log line is added too. */
  history?: boolean
  /** For a question scoped to a release with its own authoritative sources: whether a passage is one of them (stages/authoritative.ts ownSources). */
  own?: ((p: PromptPassage) => boolean) | null
}

/**
 * The answer with the key sentences added: each after the last sentence that cites its passage,
 * else at the end, in the passage's order. A repair names what was added. `misses`, when the
 * question is scoped to a release, is the release rule after generation (release-after.ts): a
 * sentence that names a feature the release lacks is not added, copied or not. `own`, for a
 * question scoped to a release with its own authoritative sources, adds that source's sentence
 * when nothing else the answer says cites it (`ownSentence`).
 */
export async function addKeySentences(
  kept: KeptSentence[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  repairs: VerificationRepair[],
  { misses, history = false, own = null }: KeyOptions = {},
): Promise<KeptSentence[]> {
  if (!kept.some((s) => !s.added)) return kept
  const texts = kept.map((s) => s.text)
  // A history's lines (oldest release first) go at the end, after the key sentences in reading order.
  const changes = history ? historySentences(texts, passages, fullText, question) : []
  // Each scan cuts the passages afresh, so one line is the same place in the same passage.
  const place = (p: KeyPick) => `${p.passage.n}:${p.unit.start}`
  const inHistory = new Set(changes.map(place))
  // A question whether something is required is answered first by the rule that says so.
  const rule = requirementSentence(texts, passages, fullText, question)
  const first = new Set(rule ? [place(rule)] : [])
  const key = keySentences(texts, passages, fullText, question)
    .filter((k) => !inHistory.has(place(k)) && !first.has(place(k)))
    .sort((a, b) => a.passage.n - b.passage.n || a.unit.start - b.unit.start)
  const chosen = [...(rule ? [rule] : []), ...key]
  const ownPick = own ? ownSentence(kept, chosen, passages, fullText, question, own) : null
  // A change-log line of the release's own specification is added once, as a line of the history.
  const fromOwn = ownPick && !inHistory.has(place(ownPick)) ? ownPick : null
  let picks = [...chosen, ...(fromOwn ? [fromOwn] : []), ...changes]
  picks = await withoutMisses(picks, said, misses)
  if (picks.length === 0) return kept
  const out = [...kept]
  for (const pick of picks) {
    const last = out.reduce((at, s, i) => (s.cites.includes(pick.passage.n) ? i : at), -1)
    const historyLine = inHistory.has(place(pick))
    const at = first.has(place(pick)) ? 0 : historyLine ? out.length : last >= 0 ? last + 1 : out.length
    // The release's own sentence is shown as a quote is: a list item with its lead-in and short list.
    const units =
      pick === fromOwn ? quotedUnits([pick], fullText).map((q) => q.unit) : [pick.unit, ...(pick.follows ? [pick.follows] : [])]
    const added = units.map((u) => ({
      // A change-log line read beside other releases' lines is an item of the history, not the
      // ninth item of its own release's list.
      // A numbered item copied alone is a bullet too: out of its list, "3." means nothing.
      text: (u === pick.unit && historyLine) || u.ordinal !== null ? asBullet(u.text) : u.text,
      cites: [pick.passage.n],
      added: 'quote' as const,
    }))
    out.splice(at, 0, ...added)
  }
  const ns = [...new Set(picks.map((p) => `[${p.passage.n}]`))]
  const from = ns.length === 1 ? `passage ${ns[0]}` : `passages ${ns.join(' and ')}`
  const n = picks.length
  repairs.push({
    code: 'key_sentences_added',
    message: `The answer left out ${n === 1 ? 'a sentence' : `${n} sentences`} of ${from} on the question; ${n === 1 ? 'it was' : 'they were'} added.${ownNote(fromOwn, picks)}`,
  })
  return out
}
