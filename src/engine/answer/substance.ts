import type { VerificationRepair } from '../../shared/trace'
import { answerNumbers, answerQuotes, answerTerms, stripMarkers } from './match'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { codeIntroducedBy, contentWords, exactTerms, splitUnits, unitScore, weightedTerms, type TextUnit } from './sentences'

/**
 * An answer says something the question did not. Two shapes of a reply that passes the support
 * check and still tells the person nothing, both seen with a 1.5B model on held-out questions:
 *
 * - **It restates the question or talks about the passage.** "The server sends a notification
 *   when its list of prompts changes [1]" for "what notification does the server send when its
 *   list of prompts changes"; "The passage describes a task lifecycle [1]".
 * - **It leaves out the kind of thing asked for.** A question asking which notification, method,
 *   header or field names one; asking how many, how long or which code wants a number; asking
 *   which release wants a version. An answer without one has not answered.
 *
 * Then the sentence of the cited passages that best answers the question (most of its weighted
 * terms, and the kind of thing asked for) is added after the model's, in the passage's own words,
 * citing it: grounded by construction, marked as added (`added: 'quote'`) and named in the trace.
 * Nothing is added when no passage sentence is about the question, so a vague answer stays vague
 * rather than gaining an unrelated sentence.
 */

/** What the question asks for, read from its words: a name, a number, a version, or nothing in particular. */
export type Wanted = 'name' | 'number' | 'version' | null

/** Nouns whose answer is a name a reader would copy (a method, a header), not a description. */
const NAME_NOUNS =
  'notif\\w*|methods?|headers?|fields?|params?|parameters?|properties|property|capabilit\\w*|events?|flags?|keys?|commands?|endpoints?|attributes?|variables?|functions?'
const ASKS_NAME = new RegExp(
  `\\b(?:what|which)\\s+(?:\\w+\\s+){0,2}(?:${NAME_NOUNS})\\b(?!\\s+(?:types?|kinds?|sorts?)\\b)|\\bwhat(?:'s| is| are)\\s+(?:it|that|this|the \\w+)\\s+called\\b|\\bname of the\\b`,
  'i',
)
const ASKS_NUMBER =
  /\bhow\s+(?:many|much|long|often|big|large|old)\b|\b(?:what|which)\s+(?:\w+\s+){0,2}(?:codes?|numbers?|limits?|timeouts?|ports?|sizes?|ranges?|status(?:es)?)\b/i
const ASKS_VERSION =
  /\b(?:which|what)\s+(?:\w+\s+){0,1}(?:release|version|revision)s?\b|\bsince when\b|\bwhen was\b[^?]*\b(?:added|introduced|removed)\b/i

export function wantedOf(question: string): Wanted {
  if (ASKS_VERSION.test(question)) return 'version'
  if (ASKS_NUMBER.test(question)) return 'number'
  if (ASKS_NAME.test(question)) return 'name'
  return null
}

const VERSION_TOKEN = /\b(?:\d{4}-\d{2}-\d{2}|v?\d+\.\d+(?:\.\d+)*)\b/

/** Whether a text holds the kind of thing a question asks for. */
export function holds(text: string, wanted: Wanted): boolean {
  const bare = stripMarkers(text)
  switch (wanted) {
    case 'name':
      return answerTerms(bare).length > 0 || answerQuotes(bare).length > 0
    case 'number':
      return answerNumbers(bare).length > 0 || /(?<![\w.])-?\d(?![\w.])/.test(bare.replace(/^\s*\d+[.)]\s/gm, ' '))
    case 'version':
      return VERSION_TOKEN.test(bare)
    default:
      return true
  }
}

/** Words that talk about the documents rather than their subject. */
const META = new Set(
  contentWords(
    'passage passages document documents documentation section sections text source sources describes describe described explains explain explained discusses discuss mentions mention mentioned provides provide information details detail regarding about overview outlines outline covers cover',
  ),
)

/** A sentence that adds nothing to the question: at most one content word of its own beyond the question's and talk about the documents. */
export function restates(sentence: string, question: string): boolean {
  const asked = new Set(contentWords(question))
  const own = new Set(contentWords(stripMarkers(sentence)).filter((w) => !asked.has(w) && !META.has(w)))
  return own.size <= 1 && answerTerms(sentence).length === 0 && answerNumbers(sentence).length === 0
}

/** A passage sentence must hold at least this weight of the question's terms to be added. */
const MIN_SCORE = 2
export function addSubstance(
  kept: KeptSentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  repairs: VerificationRepair[],
): KeptSentence[] {
  const own = kept.filter((s) => !s.added)
  if (own.length === 0) return kept
  const wanted = wantedOf(question)
  const missingKind = wanted !== null && !kept.some((s) => holds(s.text, wanted))
  // Steps and items copied before count: a lead-in with its list has said something.
  const allRestate = kept.every((s) => restates(s.text, question))
  if (!missingKind && !allRestate) return kept
  const cited = new Set(own.flatMap((s) => s.cites))
  const pick = bestUnit(
    passages.filter((p) => cited.has(p.n)),
    fullText,
    question,
    wanted,
    kept.map((s) => s.text),
  )
  if (!pick) return kept
  // After the last sentence of the model's that cites the passage the added one comes from.
  const at = kept.reduce((last, s, i) => (!s.added && s.cites.includes(pick.passage.n) ? i : last), kept.length - 1)
  const out = [...kept]
  const added = [pick.unit, ...(pick.follows ? [pick.follows] : [])]
  out.splice(at + 1, 0, ...added.map((u) => ({ text: u.text, cites: [pick.passage.n], added: 'quote' as const })))
  const why = missingKind
    ? `did not give the ${wanted === 'name' ? 'name' : wanted} the question asks for`
    : 'only restated the question'
  repairs.push({
    code: 'quote_added',
    message: `The answer ${why}; the sentence of passage [${pick.passage.n}] that answers it was added.`,
  })
  return out
}

/**
 * The unit (sentence, list item, table row) of the passages that holds most of the question's
 * weighted terms and, when the question asks for a kind of thing, holds one; ties go to the
 * earlier passage and the earlier unit. Headings and code blocks are not sentences to add.
 */
export function bestUnit(
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  wanted: Wanted,
  already: string[],
  /** Only units (with the code block they introduce) that pass this. */
  must: (text: string) => boolean = () => true,
): { passage: PromptPassage; unit: TextUnit; follows: TextUnit | null } | null {
  const terms = weightedTerms(question)
  const exact = exactTerms(question)
  const have = new Set(already.map((t) => t.trim()))
  let best: { passage: PromptPassage; unit: TextUnit; follows: TextUnit | null; score: number } | null = null
  for (const p of passages) {
    const units = splitUnits(fullText(p))
    units.forEach((unit, i) => {
      if (unit.kind === 'heading' || unit.kind === 'code' || have.has(unit.text.trim())) return
      // A sentence that introduces a short code block ("…SHOULD send a notification:") says it with the block.
      const follows = codeIntroducedBy(units, i)
      const said = unit.text + (follows ? `\n${follows.text}` : '')
      if ((wanted !== null && !holds(said, wanted)) || !must(said)) return
      const score = unitScore(new Set(contentWords(unit.text)), unit.text, terms, exact)
      if (score >= MIN_SCORE && (!best || score > best.score)) best = { passage: p, unit, follows, score }
    })
  }
  return best
}
