import type { VerificationRepair } from '../../shared/trace'
import { asBullet, citedByModel, SAID, withCopies, withoutMisses } from './key-sentences'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { contentWords, splitUnits, type TextUnit } from './sentences'

/**
 * The sentences of the passages the answer cites that say what was asked in other words. The rules
 * before this one find what the answer left out by the question's own words (key sentences,
 * requirements), and people do not ask in the documents' words: "can the client save cursors for
 * later?" is answered by "Don't persist cursors across sessions", which holds none of them. The
 * embedding model reads both. Up to `MAX_CLOSE` sentences of the passages the model's own sentences
 * cite, closest to the question first, that the answer does not say yet and that are at least as
 * close to the question as the embedding model's floor (support.ts SIMILARITY_FLOORS: the cosine
 * at which that model counts two texts as saying one thing), are added, copied and citing their
 * passage (`added: 'quote'`), after the answer's last sentence citing it, through the release rule
 * after generation.
 *
 * A sentence needs `MIN_WORDS` content words, so an item of a list ("- Terminate the connection")
 * does not come without the list that gives it a meaning; table rows and code do not come without
 * their header and fence, and a sentence that ends in a colon does not come without what it
 * introduces. Passages the answer does not cite are not read: with them, the fit halves got two
 * more facts for three times the words, and sentences about neighbouring topics.
 *
 * Chosen (in-sample) on the fit halves of mcp-docs and mcp-docs-people with all-MiniLM-L6-v2, among floors of
 * 0.45 to 0.6 and the answer's own sentences' mean cosine, one to three sentences, and every
 * passage read against the cited ones (docs/benchmarks.md, "Sentences that say what was asked in
 * other words"), then replayed on every half. The floor of an embedding model not measured here
 * (bge-small, the catalog's default) is the unknown model's, 0.5, and is not fitted.
 */

/** At most this many sentences are added to one answer. */
export const MAX_CLOSE = 2
/** Content words a sentence must hold to be added alone. */
export const MIN_WORDS = 5

/** The embedding model's cosine of each sentence to the question, and that model's floor (support.ts); absent without a real embedding model. */
export interface Closeness {
  cosines(question: string, sentences: string[]): Promise<number[]>
  floor: number
}

/**
 * The rule's choices, for measuring variants of it (evals/answers/replay.ts --close-…): at most
 * `max` sentences; `floor` a cosine, or 'answer' for the mean cosine of the answer's own sentences;
 * `from` the passages the model's own sentences cite, or every passage it read.
 */
export interface CloseRule {
  max?: number
  floor?: number | 'answer'
  from?: 'cited' | 'read'
}

export interface ClosePick {
  text: string
  passage: PromptPassage
  cosine: number
}

/** The sentences of `passages` that may be added alone: prose and list items with enough words, each text once. */
function candidates(
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  said: readonly string[],
): { unit: TextUnit; passage: PromptPassage }[] {
  const held = new Set(said.flatMap((s) => contentWords(s)))
  const verbatim = new Set(said.map((s) => s.trim()))
  const seen = new Set<string>()
  const out: { unit: TextUnit; passage: PromptPassage }[] = []
  for (const passage of passages)
    for (const unit of splitUnits(fullText(passage))) {
      if ((unit.kind !== 'prose' && unit.kind !== 'list') || /:\s*$/.test(unit.text)) continue
      const text = unit.text.trim()
      if (seen.has(text) || verbatim.has(text)) continue
      const words = [...new Set(contentWords(text))]
      if (words.length < MIN_WORDS || words.filter((w) => held.has(w)).length >= SAID * words.length) continue
      seen.add(text)
      out.push({ unit, passage })
    }
  return out
}

/** The sentences to add, closest first: at most `MAX_CLOSE`, of the passages the model's own sentences cite, each at least `closeness.floor` from the question. */
export async function closePicks(
  kept: readonly KeptSentence[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  closeness: Closeness,
  rule: CloseRule = {},
): Promise<ClosePick[]> {
  const own = kept.filter((s) => !s.added).map((s) => s.text)
  const from = rule.from === 'read' ? [...passages].sort((a, b) => a.n - b.n) : citedByModel(kept, passages)
  const pool = candidates(
    from,
    fullText,
    kept.map((s) => s.text),
  )
  if (pool.length === 0 || own.length === 0) return []
  const byAnswer = rule.floor === 'answer'
  const cosines = await closeness.cosines(question, [...(byAnswer ? own : []), ...pool.map((c) => c.unit.text)])
  const mine = byAnswer ? cosines.splice(0, own.length) : []
  const floor = byAnswer
    ? mine.reduce((a, b) => a + b, 0) / mine.length
    : typeof rule.floor === 'number'
      ? rule.floor
      : closeness.floor
  const ranked = pool.map((c, i) => ({ ...c, cosine: cosines[i]! })).sort((a, b) => b.cosine - a.cosine)
  const picks: ClosePick[] = []
  const held = new Set<string>()
  for (const c of ranked) {
    if (picks.length >= (rule.max ?? MAX_CLOSE) || c.cosine < floor) break
    // Two sentences that say one thing (a guide and the specification, in their own words): the first.
    const words = [...new Set(contentWords(c.unit.text))]
    if (words.filter((w) => held.has(w)).length >= SAID * words.length) continue
    for (const w of words) held.add(w)
    picks.push({ text: c.unit.ordinal !== null ? asBullet(c.unit.text) : c.unit.text, passage: c.passage, cosine: c.cosine })
  }
  return picks
}

export async function addCloseSentences(
  kept: KeptSentence[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  repairs: VerificationRepair[],
  closeness?: Closeness,
  misses?: (sentences: string[]) => Promise<{ index: number }[]>,
  rule: CloseRule = {},
): Promise<KeptSentence[]> {
  if (!closeness) return kept
  const shown = await withoutMisses(await closePicks(kept, passages, fullText, question, closeness, rule), (x) => x.text, misses)
  if (shown.length === 0) return kept
  const { out, from } = withCopies(kept, shown)
  repairs.push({
    code: 'key_sentences_added',
    message: `${shown.length === 1 ? 'A sentence' : `${shown.length} sentences`} of passage ${from}, which the answer cites, close in meaning to the question and not in the answer ${shown.length === 1 ? 'was' : 'were'} copied from it.`,
  })
  return out
}
