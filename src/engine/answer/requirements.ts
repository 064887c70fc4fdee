import type { VerificationRepair } from '../../shared/trace'
import { asBullet, citedByModel, REQUIREMENT, SAID, withCopies, withoutMisses } from './key-sentences'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { contentWords, splitUnits } from './sentences'

/**
 * The requirements of the sources the answer rests on. Specifications state what holds in
 * sentences with a requirement keyword in capitals (MUST, SHOULD, MAY…, as RFC 2119 writes them),
 * and a 1.5B model gives one of them and stops: "Implementations SHOULD establish timeouts for all
 * sent requests" without "the sender SHOULD issue a cancellation notification for that request and
 * stop waiting". The requirement sentences of the passages the answer's own sentences cite (the
 * best-ranked first, each in its passage's order) that hold a word of the question and that the
 * answer does not say are added, at most `MAX_REQUIREMENTS`, copied and citing their passage
 * (`added: 'quote'`), after the answer's last sentence citing it. They pass the release rule after
 * generation, as key sentences do. Documents that write no such keyword get nothing.
 *
 * Chosen on the fit halves of mcp-docs and mcp-docs-people by adding such sentences to the answers
 * the model wrote there (evals/answers/missed-facts.ts), then replayed on every half
 * (docs/benchmarks.md, "The requirements of the sources the answer rests on").
 */

/** At most this many requirement sentences are added to one answer. */
export const MAX_REQUIREMENTS = 2

export async function addRequirements(
  kept: KeptSentence[],
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  repairs: VerificationRepair[],
  misses?: (sentences: string[]) => Promise<{ index: number }[]>,
): Promise<KeptSentence[]> {
  const picks = requirementPicks(
    citedByModel(kept, passages),
    fullText,
    question,
    kept.map((s) => s.text),
  )
  const shown = await withoutMisses(picks, (x) => x.text, misses)
  if (shown.length === 0) return kept
  const { out, from } = withCopies(kept, shown)
  repairs.push({
    code: 'key_sentences_added',
    message: `${shown.length === 1 ? 'A requirement' : `${shown.length} requirements`} of passage ${from}, which the answer cites, on the question and not in the answer ${shown.length === 1 ? 'was' : 'were'} copied from it.`,
  })
  return out
}

/**
 * The requirement sentences of `passages`, in that order and each in its passage's order, that hold
 * a content word of the question and that `said` (and the picks before) do not say; at most `max`.
 * Shared with the eval that chose the rule (evals/answers/missed-facts.ts), which tries other sets
 * of passages and counts.
 */
export function requirementPicks<P>(
  passages: readonly P[],
  text: (p: P) => string,
  question: string,
  said: readonly string[],
  max = MAX_REQUIREMENTS,
): { text: string; passage: P }[] {
  const asked = new Set(contentWords(question))
  const held = new Set(said.flatMap((s) => contentWords(s)))
  const picks: { text: string; passage: P }[] = []
  for (const p of passages)
    for (const u of splitUnits(text(p))) {
      if (picks.length >= max) return picks
      if ((u.kind !== 'prose' && u.kind !== 'list') || !REQUIREMENT.test(u.text) || /:\s*$/.test(u.text)) continue
      const words = [...new Set(contentWords(u.text))]
      if (!words.some((w) => asked.has(w))) continue
      if (words.filter((w) => held.has(w)).length >= SAID * words.length) continue
      picks.push({ text: u.ordinal !== null ? asBullet(u.text) : u.text, passage: p })
      for (const w of words) held.add(w)
    }
  return picks
}
