import { answerNumbers, answerTerms, containsNumber, containsQuote, normaliseForMatch } from './match'
import { contentWords } from './sentences'

/**
 * Whether an answer covers a fact of a golden question, without a judge: every number and name
 * of the fact is in the answer, and at least FACT_WORDS of its other content words (stemmed).
 * Facts are written as short statements ("The server returns 202 Accepted with no body"); an
 * answer that paraphrases them keeps their numbers and names and most of their words.
 */
export const FACT_WORDS = 0.5

export function factCovered(fact: string, answer: string): boolean {
  const hay = normaliseForMatch(answer)
  const numbers = answerNumbers(fact)
  const names = [...answerTerms(fact), ...[...fact.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)]
  if (!numbers.every((n) => containsNumber(hay, n))) return false
  if (!names.every((n) => containsQuote(hay, n))) return false
  const anchors = new Set([...numbers, ...names].map((t) => t.toLowerCase()))
  const words = [...new Set(contentWords(fact.replace(/`[^`]*`/g, ' ')))].filter((w) => !anchors.has(w))
  if (words.length === 0) return true
  const have = new Set(contentWords(answer))
  return words.filter((w) => have.has(w)).length / words.length >= FACT_WORDS
}
