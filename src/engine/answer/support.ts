import type { SupportFailure } from '../../shared/answer'
import { WORD, stem } from '../../shared/excerpt'
import { answerNumbers, answerQuotes, answerTerms, containsNumber, containsQuote, haystack, normaliseForMatch } from './match'
import type { PromptPassage } from './prompt'
import { contentWords, sentencesIn, splitUnits } from './sentences'

/**
 * The support check of one answer sentence against the passages it cites: local and cheap, run
 * after generation on every sentence, because "verified" must mean that the passages say what
 * the sentence says, not only that they were cited. A sentence passes when:
 *
 *  1. every number, quoted text and name it states is in a cited passage (match.ts);
 *  2. enough of its content words are in the cited passages (COVERAGE_FLOOR);
 *  3. each number or name sits with the words the sentence (or the question) attaches it to: a
 *     passage that says ".020 for long bowden extruders, .005 for direct drive" does not support
 *     ".020 for direct drive" (misattachment, below);
 *  4. it says something rather than pointing at a passage ("follow the instructions in [2]");
 *  5. with an embedding model, it is close to some sentence of a cited passage (similarity floor
 *     per embedding model, SIMILARITY_FLOORS).
 *
 * A sentence that fails is removed from the answer, with its reason; it is never shown as verified.
 */

export interface SupportResult {
  ok: boolean
  failure: SupportFailure | null
  reason: string | null
  coverage: number
  best_cosine: number | null
}

/** Best cosine similarity of `sentence` to any of `units`; null when no embedding model is at hand. */
export type Similarity = (sentence: string, units: string[]) => Promise<number | null>

/**
 * Share of a sentence's content words that its cited passages must contain. A prior, not yet fitted:
 * to be fitted on one half of stored replies with evals/answers/reverify.ts and checked on the other
 * (docs/adr/0012-claim-level-citations-and-a-support-check.md).
 */
export const COVERAGE_FLOOR = 0.6

/**
 * Best cosine to a sentence of a cited passage that a supported sentence reaches, per embedding
 * model (matched as a substring of its id). Fixture models have random weights: no floor.
 */
export const SIMILARITY_FLOORS: readonly { match: string; floor: number | null; note: string }[] = [
  { match: 'all-minilm-l6-v2', floor: 0.5, note: 'prior, not yet fitted (ADR 0012)' },
  { match: 'tiny-random', floor: null, note: 'fixture model with random weights: no floor' },
]
export const UNKNOWN_SIMILARITY_FLOOR = 0.5

export function similarityFloorFor(embedderId: string | null): number | null {
  if (!embedderId) return null
  const id = embedderId.toLowerCase()
  const known = SIMILARITY_FLOORS.find((f) => id.includes(f.match))
  return known ? known.floor : UNKNOWN_SIMILARITY_FLOOR
}

/** Words of one passage sentence further apart than this are not "attached" to each other. */
const ATTACH_WINDOW = 5

export interface CheckOptions {
  question: string
  similarity?: Similarity
  similarityFloor?: number | null
  coverageFloor?: number
}

export async function checkSentence(sentence: string, cited: PromptPassage[], opts: CheckOptions): Promise<SupportResult> {
  const fail = (failure: SupportFailure, reason: string, coverage = 0, best: number | null = null): SupportResult => ({
    ok: false,
    failure,
    reason,
    coverage,
    best_cosine: best,
  })
  if (cited.length === 0) return fail('no_citation', 'it cites no passage')
  const hay = cited.map(haystack).join('\n')
  const lexical = lexicalSupport(sentence, hay)
  if (lexical) return fail(lexical.failure, lexical.reason)
  const coverage = coverageOf(sentence, hay)
  if (pointsOnly(sentence)) return fail('points_only', 'it points to a passage instead of saying what it says', coverage)
  if (coverage < (opts.coverageFloor ?? COVERAGE_FLOOR))
    return fail('words_not_covered', `the cited passages hold only ${Math.round(coverage * 100)}% of its words`, coverage)
  const misattached = findMisattachment(sentence, opts.question, cited)
  if (misattached) return fail('misattached', misattached, coverage)
  const opposite = findOpposite(sentence, cited)
  if (opposite) return fail('opposite', opposite, coverage)
  let best: number | null = null
  if (opts.similarity && opts.similarityFloor != null) {
    best = await opts.similarity(
      sentence,
      cited.flatMap((p) => splitUnits(p.text).map((u) => u.text)),
    )
    if (best !== null && best < opts.similarityFloor)
      return fail('not_similar', `no sentence of the cited passages says anything close to it`, coverage, best)
  }
  return { ok: true, failure: null, reason: null, coverage, best_cosine: best }
}

/**
 * Words that turn a statement into its opposite. "no" is not among them: "with no server API keys
 * necessary" says what a thing does, and a copied sentence keeps it either way.
 */
const NEGATION = /\b(?:not|never|cannot|nor|neither|no longer|none)\b|n't\b/gi

/** The negations of a text, in order, lower-cased ("can't" and "cannot" are both "not"). */
function negations(text: string): string[] {
  return [...text.matchAll(NEGATION)].map((m) => {
    const w = m[0].toLowerCase()
    return w === "n't" || w === 'cannot' ? 'not' : w
  })
}

/** Share of a sentence's content words one passage sentence must hold for the sentence to count as a copy of it. */
export const COPY_SHARE = 0.8
/** And share of that passage sentence's content words the sentence must hold: a copy, not a part of it. */
export const COPIED_SHARE = 0.6

/**
 * A sentence that copies one passage sentence (at least COPY_SHARE of its content words are in
 * it, and it holds at least COPIED_SHARE of that sentence's) and says it with a negation more or
 * fewer: "Servers MUST send a response" from "Servers MUST NOT send a response". Every word of it
 * is in the passage, so the checks above pass it. A sentence that rewords its source is not
 * judged: "wait for the reply before sending" says "do not send before the reply" without a
 * "not". Returns the reason in words, or null.
 */
export function findOpposite(sentence: string, cited: PromptPassage[]): string | null {
  const words = [...new Set(contentWords(sentence))]
  if (words.length < 3) return null
  const mine = new Set(words)
  const copies: { share: number; text: string }[] = []
  for (const p of cited)
    for (const u of splitUnits(p.text))
      // A list item can hold several sentences ("1. Remove sessions. List endpoints are no longer…").
      for (const text of sentencesIn(u.text)) {
        const theirs = [...new Set(contentWords(text))]
        if (theirs.length === 0) continue
        const have = new Set(theirs)
        const share = words.filter((w) => have.has(w)).length / words.length
        const copied = theirs.filter((w) => mine.has(w)).length / theirs.length
        if (share >= COPY_SHARE && copied >= COPIED_SHARE) copies.push({ share, text })
      }
  if (copies.length === 0) return null
  // Any passage sentence it copies as closely, with as many negations, supports it.
  const best = Math.max(...copies.map((c) => c.share))
  const closest = copies.filter((c) => c.share >= best - 1e-9)
  const count = negations(sentence).length
  if (closest.some((c) => negations(c.text).length === count)) return null
  const source = closest[0]!.text
  const shown = source.length > 140 ? `${source.slice(0, 137)}…` : source
  return count > negations(source).length
    ? `it says "not" where the passage sentence it copies does not ("${shown}")`
    : `it leaves out the "not" of the passage sentence it copies ("${shown}")`
}

/** Numbers, quotes and names the sentence states that the cited passages do not contain. */
export function lexicalSupport(sentence: string, hay: string): { failure: SupportFailure; reason: string } | null {
  const number = answerNumbers(sentence).find((t) => !containsNumber(hay, t))
  if (number) return { failure: 'unsupported_number', reason: `the cited passages do not contain the number ${number}` }
  const quotes = answerQuotes(sentence)
  const quote = quotes.find((q) => !containsQuote(hay, q))
  if (quote) return { failure: 'unsupported_quote', reason: `the cited passages do not contain "${quote}"` }
  const name = answerTerms(sentence).find((t) => !containsQuote(hay, t) && !quotes.some((q) => q.includes(t)))
  if (name) return { failure: 'unsupported_name', reason: `the cited passages do not mention ${name}` }
  return null
}

/** Share of the sentence's content words (stemmed; identifiers whole) found in the passages. */
export function coverageOf(sentence: string, hay: string): number {
  const words = [...new Set(contentWords(sentence))]
  if (words.length === 0) return 1
  const have = new Set(contentWords(hay))
  const found = words.filter((w) => have.has(w) || (/[/_.:-]/.test(w) && hay.includes(w))).length
  return found / words.length
}

const POINTER =
  /\b(?:follow(?:ing)?|see|refer(?:s|red)? to|check|consult|read|described|explained|outlined|listed|detailed|shown|covered|found)\b[^.]*\b(?:document(?:ation)?|passages?|instructions?|sections?|steps?|guides?|pages?|above|below|sources?)\b/i
const POINTER_WORDS = new Set(
  contentWords(
    'follow following see refer check consult read described explained outlined listed detailed shown covered found document documentation passage passages instructions instruction section sections steps step guide guides page pages above below source sources provided given more information details detail',
  ),
)

/** "Follow the instructions in the document [2]": a pointer with next to nothing of its own to say. */
export function pointsOnly(sentence: string): boolean {
  if (!POINTER.test(sentence)) return false
  const own = contentWords(sentence).filter((w) => !POINTER_WORDS.has(w))
  return own.length <= 3
}

interface Positioned {
  token: string
  at: number
  unit: number
}

interface PassageWord {
  stem: string
  raw: string
  unit: number
}

/** The words of a passage in order, each with its stem (identifiers and numbers kept whole) and the unit (sentence, item, row) it is in. */
function wordsOf(text: string): PassageWord[] {
  const out: PassageWord[] = []
  splitUnits(text).forEach((u, unit) => {
    for (const m of normaliseForMatch(u.text).matchAll(WORD)) {
      const raw = m[0]
      out.push({ raw, unit, stem: /[/_.:-]/.test(raw) || /^-?\d/.test(raw) ? raw : stem(raw) })
    }
  })
  return out
}

/** Where each number (or name) of `anchors` occurs in the passage's word sequence. */
function anchorPositions(words: PassageWord[], anchors: string[]): Positioned[] {
  const out: Positioned[] = []
  for (const a of anchors) {
    const want = normaliseForMatch(a).replace(/^\./, '').replace(/,/g, '')
    words.forEach((w, i) => {
      const raw = w.raw.replace(/,/g, '')
      if (raw === want || raw.endsWith('/' + want) || raw.endsWith('=' + want)) out.push({ token: a, at: i, unit: w.unit })
    })
  }
  return out
}

/**
 * A number or name of the sentence that its passage attaches to other words: some word the
 * sentence (or the question) pairs with it is, in the passage, not next to it but next to another
 * number or name of the same kind ("same passage sentence, within ATTACH_WINDOW words"). Returns
 * the reason in words, or null.
 */
export function findMisattachment(sentence: string, question: string, cited: PromptPassage[]): string | null {
  const kinds: ((t: string) => string[])[] = [answerNumbers, answerTerms]
  // Qualifiers are plain words: a number or an identifier ("json-rpc") is an anchor, not what one is for.
  const plain = (w: string) => !/^-?\.?\d/.test(w) && !/[/_.:-]/.test(w)
  const own = [...new Set(contentWords(sentence))].filter(plain)
  const withQuestion = [...new Set([...own, ...contentWords(question)])].filter(plain)
  for (const extract of kinds) {
    const anchors = extract(sentence)
    for (const t of anchors) {
      let problem: string | null = null
      let attached = false
      for (const p of cited) {
        const words = wordsOf(p.text)
        const mine = anchorPositions(words, [t])
        if (mine.length === 0) continue
        // A sentence that says, in words of its own, what the value goes with (one of them next to it
        // in the passage and next to no other value: "listing" before application/json) has it
        // attached as the passage does. Otherwise its words and the question's are weighed: a word
        // next to another value and far from this one says the value belongs to something else
        // ("For direct drive, FACTOR=.020" where "direct" is next to .005; "factor" is next to both).
        // Without the first rule, a question of several parts, or a long sentence, pairs some word
        // with another value of the passage ("When I POST a JSON-RPC request, what Accept header…").
        const otherTokens = extract(p.text).filter(
          (o) =>
            !anchors.some((a) => normaliseForMatch(a) === normaliseForMatch(o)) && normaliseForMatch(o) !== normaliseForMatch(t),
        )
        const others = anchorPositions(words, otherTokens)
        const clash = placedByOwnWords(words, mine, others, own) ? null : clashingQualifier(words, mine, others, withQuestion)
        if (!clash) {
          attached = true
          break
        }
        problem = `the cited passage gives ${t} for something else: there "${clash.word}" goes with ${clash.other}`
      }
      if (!attached && problem) return problem
    }
  }
  return null
}

function placedByOwnWords(words: PassageWord[], mine: Positioned[], others: Positioned[], own: string[]): boolean {
  const near = (i: number, set: Positioned[]) =>
    set.some((s) => s.unit === words[i]!.unit && s.at !== i && Math.abs(s.at - i) <= ATTACH_WINDOW)
  return own.some((stem) => {
    const at = words.flatMap((w, i) => (w.stem === stem ? [i] : []))
    // Next to this value somewhere, and next to no other value anywhere in the passage.
    return at.some((i) => near(i, mine)) && !at.some((i) => near(i, others))
  })
}

function clashingQualifier(
  words: PassageWord[],
  mine: Positioned[],
  others: Positioned[],
  qualifiers: string[],
): { word: string; other: string } | null {
  if (others.length === 0) return null
  const distance = (i: number, set: Positioned[]) =>
    Math.min(Infinity, ...set.filter((s) => s.unit === words[i]!.unit).map((s) => Math.abs(s.at - i)))
  for (const q of qualifiers) {
    const at = words.flatMap((w, i) => (w.stem === q ? [i] : []))
    // Only words the passage uses once or twice say which value they belong with.
    if (at.length === 0 || at.length > 2) continue
    const dMine = Math.min(...at.map((i) => distance(i, mine)))
    if (dMine <= ATTACH_WINDOW) continue
    let best: { d: number; token: string } | null = null
    for (const i of at)
      for (const o of others) {
        if (o.unit !== words[i]!.unit) continue
        const d = Math.abs(o.at - i)
        if (!best || d < best.d) best = { d, token: o.token }
      }
    if (best && best.d <= ATTACH_WINDOW) return { word: words[at[0]!]!.raw, other: best.token }
  }
  return null
}
