import type { AnswerSentence, AskResult, AskResultBase, Citation, RemovedSentence } from '../../../shared/answer'
import type { AskOutcome, ReleaseTrace, VerificationTrace } from '../../../shared/trace'
import type { SearchHit } from '../../../shared/search'
import { compareVersions } from '../../../shared/versions'
import { renderAnswer } from '../markers'
import { completeFromSources, type KeptSentence } from '../procedure'
import { addSubstance } from '../substance'
import { addKeySentences, asBullet, quotedAnswer, quotedUnits, withoutMisses } from '../key-sentences'
import { dropRepeats } from '../repeats'
import { addRequirements } from '../requirements'
import { addCloseSentences, type Closeness, type CloseRule } from '../close-sentences'
import { wholeTables } from '../readable'
import { authoritativeFor, authoritativeRefusal, citeAuthoritative, ownSources } from './authoritative'
import { tightenCitations } from '../tighten'
import { retarget } from '../off-target'
import type { PromptPassage, ReplySentence } from '../prompt'
import type { ReleaseCheck } from '../release'
import { contentWords } from '../sentences'
import type { Attempt, ModelFailure } from './generate'
import { toCitation, toClosest } from './passages'
import { removeReleaseMisses } from './release-removals'
import { absenceSentences } from '../release-absent'
import type { AskSections } from './run'
import type { Verification } from '../verify'

/** What a stage that ends the question found: its result and outcome, and the trace sections they add. */
export interface Verdict {
  result: AskResult
  outcome: AskOutcome
  trace: Pick<AskSections, 'claims' | 'verification'>
  /** What the release rules after the model found, for the release section of the trace. */
  release: Partial<Pick<ReleaseTrace, 'cited_authoritative' | 'removed_sentences' | 'absence_quoted'>>
}

/** What the verdict weighs: the model's reply and the passages it read, the release rules, and the result so far. */
export interface Concluding {
  generated: Attempt | ModelFailure
  /** The passages the model read, each whole (what a citation opens). */
  passages: PromptPassage[]
  hits: SearchHit[]
  release: ReleaseCheck
  /** The question retrieval used. */
  standalone: string
  /** The question asks what changed or when (retrieval ranked change logs first). */
  history?: boolean
  /** The fields of the result the pipeline has assembled so far. */
  base: AskResultBase
  /** The share of the question a passage sentence must hold to be the answer when the model's does not stand (quotedAnswer); null: never. */
  quoteShare?: number | null
  /** Cosine of each sentence to the question by the embedding model (close-sentences.ts); absent without one. */
  closeness?: Closeness
  /** The choices of that rule, for measuring variants (AskOptions.closeRule). */
  closeRule?: CloseRule
}

/**
 * The result of a question the model was asked: a verified answer, or an abstention when the
 * passages do not hold the answer, no sentence checked out, or the release rules refuse it; or
 * the passages alone when the model failed. Only sentences that passed the support check are in
 * the answer; the rest are listed as removed, with their reasons.
 */
export async function conclude(c: Concluding): Promise<Verdict> {
  const { generated, passages, standalone, base } = c
  const hitById = new Map(c.hits.map((h) => [h.chunk_id, h]))
  const hitOf = (p: PromptPassage) => hitById.get(p.chunk_id)!
  if ('failed' in generated) {
    const notices = [
      ...base.notices,
      `The language model failed (${generated.failed}); showing the best passages instead of an answer.`,
    ]
    const citations = passages.map((p) => toCitation(hitOf(p), p.n))
    const result: AskResult = { ...base, notices, answer: null, abstained: false, reason: null, mode: 'search-only', citations }
    return { result, outcome: 'search-only', trace: {}, release: {} }
  }
  const { v } = generated
  const release: Verdict['release'] = {}
  const closest = passages.map((p) => toClosest(hitOf(p), standalone))
  const abstain = (reason: 'not_in_context' | 'unverifiable_citations', explanation: string | null): Verdict => {
    const verification: VerificationTrace =
      reason === 'not_in_context' ? { result: 'not_in_context' } : { result: 'unverifiable_citations', problems: v.problems }
    const result: AskResult = {
      ...base,
      answer: null,
      abstained: true,
      reason,
      closest,
      unanswered_parts: v.reply?.unanswered_parts ?? [],
      removed: v.removed,
      explanation,
      mode: 'answer',
    }
    return { result, outcome: reason, trace: { claims: v.claims, verification }, release }
  }
  // Before "the documents don't say": does the scoped release say outright that it lacks what was asked?
  // Then: do the best passages' own sentences hold most of what was asked? (They pass the release rules too.)
  const notInRelease = async (explanation: string | null): Promise<Verdict> =>
    fromAbsence(c, v, hitOf, release) ?? (await fromQuotes(c, v, hitOf, release)) ?? abstain('not_in_context', explanation)
  if (v.ok && v.reply && !v.reply.answerable) return notInRelease(null)
  if (!v.ok || !v.reply)
    return (
      (await fromQuotes(c, v, hitOf, release)) ??
      abstain(
        'unverifiable_citations',
        v.removed.length ? 'An answer was drafted, but none of its sentences is supported by the passages it cites.' : null,
      )
    )
  // Sentences about a feature the scoped release lacks, whatever they cite, are not shown.
  const missing = await removeReleaseMisses(v, c.release)
  if (missing) release.removed_sentences = missing.removed_sentences
  if (missing && v.kept.length === 0) return notInRelease(missing.explanation)
  return answer(c, v as Verification & { reply: NonNullable<Verification['reply']> }, hitOf, release, abstain, notInRelease)
}

/** The sentences that passed, completed from their sources and numbered: the answer, unless what is left no longer stands. */
async function answer(
  c: Concluding,
  v: Verification & { reply: NonNullable<Verification['reply']> },
  hitOf: (p: PromptPassage) => SearchHit,
  release: Verdict['release'],
  abstain: (reason: 'not_in_context' | 'unverifiable_citations', explanation: string | null) => Verdict,
  notInRelease: (explanation: string | null) => Promise<Verdict>,
): Promise<Verdict> {
  const { passages, standalone, base } = c
  const fullText = (p: PromptPassage) => hitOf(p).text
  // Copied steps and items go through the release rule after generation, as the model's sentences did.
  const filled = completeFromSources(v.kept, passages, fullText, v.repairs, standalone)
  const passing = new Set(
    await withoutMisses(
      filled.filter((s) => s.added),
      (s) => s.text,
      c.release.checkSentences,
    ),
  )
  const completed = filled.filter((s) => !s.added || passing.has(s))
  const target = retarget(completed, passages, fullText, standalone, v.repairs, v.removed)
  const kept = addSubstance(target.kept, passages, fullText, standalone, v.repairs)
  const byN = new Map(passages.map((p) => [p.n, p]))
  // A retargeted answer is the passage's own sentence naming what was asked: it is about the question.
  if (!target.retargeted && !answersTheQuestion(kept, v.removed.length, standalone))
    return (
      (await fromQuotes(c, v, hitOf, release)) ??
      abstain('unverifiable_citations', 'The sentences that checked out no longer answer the question.')
    )
  // A sentence cited to a guide that the release's specification also says is cited to it as well.
  await citeAuthoritative(kept, passages, c.release, standalone, v.repairs)
  const authoritative = authoritativeRefusal(kept, byN, c.release)
  if (authoritative) release.cited_authoritative = authoritative.cited
  if (authoritative?.refusal) return notInRelease(authoritative.refusal)
  // After the release rules, which judge what the model's answer rests on: copied sentences do not rescue it.
  // For a question scoped to a release with its own specification, what the specification says is among them.
  const own = ownSources(c.release)
  const added = await addKeySentences(kept, passages, fullText, standalone, v.repairs, {
    misses: c.release.checkSentences,
    history: c.history,
    own,
  })
  // Table rows under their table's header, as the cited passage has them (a header alone goes).
  const whole = wholeTables(dropRepeats(added, v.repairs), byN, fullText, v.repairs)
  // A sentence's citations of passages without the names it states go, where others hold them all.
  const authority = authoritativeFor(c.release)
  tightenCitations(whole, byN, (p) => authority?.(p) ?? false, v.repairs)
  // The requirements (MUST, SHOULD…) of the passages the answer's own sentences still cite that it left out.
  const required = await addRequirements(whole, passages, fullText, standalone, v.repairs, c.release.checkSentences)
  // What the passages say about the question in words other than its own, by the embedding model.
  const full = await addCloseSentences(
    required,
    passages,
    fullText,
    standalone,
    v.repairs,
    c.closeness,
    c.release.checkSentences,
    c.closeRule,
  )

  const { sentences, citations } = numberByFirstUse(full, byN, hitOf)
  // A passage that stands word for word in other releases too (same_in) belongs to none of them alone.
  const copied = new Set(passages.filter((p) => hitOf(p).same_in?.length).map((p) => p.n))
  const notices = [...base.notices, ...releaseLabels(sentences, full, byN, c.release, copied)]
  return answered(c, v, { sentences, citations }, notices, release)
}

/** The verdict of an answer shown: its sentences and sources, what was removed and why, and the trace sections. */
function answered(
  c: Concluding,
  v: Verification,
  shown: { sentences: AnswerSentence[]; citations: Citation[] },
  notices: string[],
  release: Verdict['release'],
): Verdict {
  const removedNote = removalNotice(v.removed, c.release.trace.releases)
  const result: AskResult = {
    ...c.base,
    notices,
    answer: renderAnswer(shown.sentences),
    abstained: false,
    reason: null,
    citations: shown.citations,
    sentences: shown.sentences,
    removed: v.removed,
    unanswered_parts: v.reply?.unanswered_parts ?? [],
    warnings: removedNote ? [removedNote] : [],
    unverified_claims: [],
    mode: 'answer',
  }
  return { result, outcome: 'answer', trace: { claims: v.claims, verification: { result: 'ok', warnings: v.warnings } }, release }
}

/**
 * The answer when the question would end without one and the scoped release says outright that it
 * lacks what was asked (answer/release-absent.ts): that sentence, in the release's own words and
 * citing its passage, with a notice saying where it comes from. Null when no passage says so.
 */
function fromAbsence(
  c: Concluding,
  v: Verification,
  hitOf: (p: PromptPassage) => SearchHit,
  release: Verdict['release'],
): Verdict | null {
  const pick = absenceSentences(c.passages, (p) => hitOf(p).text, c.release)
  if (!pick) return null
  const rule = c.release.trace
  const kept: KeptSentence[] = pick.units.map((u) => ({ text: u.text, cites: [pick.passage.n], added: 'quote' as const }))
  const byN = new Map(c.passages.map((p) => [p.n, p]))
  const shown = numberByFirstUse(kept, byN, hitOf)
  const label = rule.releases!.join(' and ')
  const source = rule.has_authoritative ? `${label} ${rule.authoritative_kinds[0]!.toLowerCase()}` : `${label} documents`
  v.repairs.push({
    code: 'absence_quoted',
    message: `The model gave no answer that stands; passage [${pick.passage.n}] of the ${source} says that ${pick.term} is not part of it, and is the answer.`,
  })
  release.absence_quoted = pick.passage.chunk_id
  if (rule.must_cite_authoritative) release.cited_authoritative = true
  const notice = `Quoted from the ${source}: it says that what was asked about (${pick.term}) is not part of that release.`
  return answered(c, v, shown, [...c.base.notices, notice], release)
}

/**
 * The answer when the model gave none that stands (it declined, or none of its sentences checked
 * out or answered the question) and a sentence of the best passages holds most of what was asked
 * (key-sentences.ts quotedAnswer): those sentences, in the passages' own words and citing them,
 * marked as copied, with a notice saying so. The release rules hold as for the model's sentences:
 * a sentence naming a feature the scoped release lacks is dropped, and an answer to a release that
 * has its own authoritative source must cite it. Null when nothing qualifies.
 */
async function fromQuotes(
  c: Concluding,
  v: Verification,
  hitOf: (p: PromptPassage) => SearchHit,
  release: Verdict['release'],
): Promise<Verdict | null> {
  if (c.quoteShare === null) return null
  const fullText = (p: PromptPassage) => hitOf(p).text
  // Guides describe features their release may lack (ADR 0013): without the model to weigh them, a
  // question scoped to a release with its own authoritative sources is quoted only from those.
  const own = ownSources(c.release)
  const from = own ?? (() => true)
  const { picks, share } = quotedAnswer(c.passages, fullText, c.standalone, c.quoteShare ?? undefined, from)
  // A list item comes with its lead-in (and a short list's other items), as bullets.
  let kept: KeptSentence[] = quotedUnits(picks, fullText).map(({ passage, unit }) => ({
    text: unit.ordinal !== null ? asBullet(unit.text) : unit.text,
    cites: [passage.n],
    added: 'quote' as const,
  }))
  kept = await withoutMisses(kept, (s) => s.text, c.release.checkSentences)
  if (kept.length === 0) return null
  const byN = new Map(c.passages.map((p) => [p.n, p]))
  const authoritative = authoritativeRefusal(kept, byN, c.release)
  if (authoritative?.refusal) return null
  // A quoted table row comes under its table's header, as in the model's answers.
  kept = wholeTables(kept, byN, fullText, v.repairs)
  if (authoritative) release.cited_authoritative = authoritative.cited
  const shown = numberByFirstUse(kept, byN, hitOf)
  const ns = [...new Set(kept.flatMap((s) => s.cites))].length
  v.repairs.push({
    code: 'quoted_answer',
    message: `The model gave no answer that stands; ${kept.length === 1 ? 'a sentence' : `${kept.length} sentences`} of ${ns === 1 ? 'the best passage' : 'the best passages'}, holding ${Math.round(share * 100)}% of the question's terms, ${kept.length === 1 ? 'is' : 'are'} the answer.`,
  })
  const notice =
    'Quoted from the sources: the model gave no answer that checks out, so these are the sentences of the best passages that hold most of what you asked.'
  return answered(c, v, shown, [...c.base.notices, notice], release)
}

/** The notice under an answer some of whose sentences were removed, saying why in plain words. */
export function removalNotice(removed: RemovedSentence[], releases: string[] | null = null): string | null {
  const n = removed.length
  if (n === 0) return null
  const head = `${n} sentence${n === 1 ? ' was' : 's were'} removed`
  const release = removed.filter((r) => r.code === 'not_in_release').length
  const offTarget = removed.filter((r) => r.code === 'off_target').length
  if (offTarget === n) return `${head}: ${n === 1 ? 'it answers' : 'they answer'} something other than what was asked.`
  if (removed.every((r) => r.code === 'opposite')) return `${head}: the cited passages say the opposite.`
  if (release === 0 && offTarget === 0) return `${head}: the cited passages do not say ${n === 1 ? 'it' : 'them'}.`
  if (release === 0)
    return `${head}: ${offTarget} about something other than what was asked, ${n - offTarget} that the cited passages do not say.`
  const what = `about something the ${releases?.join(' and ') ?? 'asked'} release does not have`
  if (release === n) return `${head}: ${n === 1 ? 'it is' : 'they are'} ${what}.`
  return `${head}: ${release} ${what}, ${n - release} that the cited passages do not say.`
}

/**
 * After sentences were removed, what is left must still be about the question: at least one
 * sentence the model wrote shares a content word with it.
 */
function answersTheQuestion(kept: KeptSentence[], removed: number, question: string): boolean {
  if (kept.length === 0) return false
  if (removed === 0) return true
  const asked = new Set(contentWords(question))
  return kept.some((s) => !s.added && contentWords(s.text).some((w) => asked.has(w)))
}

/** Sources numbered 1..n in the order the answer first uses them; passages no sentence uses are not listed. */
function numberByFirstUse(
  kept: KeptSentence[],
  byN: Map<number, PromptPassage>,
  hitOf: (p: PromptPassage) => SearchHit,
): { sentences: AnswerSentence[]; citations: Citation[] } {
  const display = new Map<number, number>()
  for (const s of kept) for (const n of s.cites) if (!display.has(n)) display.set(n, display.size + 1)
  const citations = [...display].map(([n, d]) => toCitation(hitOf(byN.get(n)!), d))
  const sentences = kept.map((s) => ({
    text: s.text,
    citations: [...new Set(s.cites.map((n) => display.get(n)!))].sort((a, b) => a - b),
    ...(s.added ? { added: s.added } : {}),
  }))
  return { sentences, citations }
}

/**
 * No single release was asked about and the sentences rest on passages of several releases: each
 * sentence names its release (set on `sentences`), so releases that say different things are not
 * blended into one answer. When their passages say the same, a notice says so instead. Returns the
 * notices to add.
 */
function releaseLabels(
  sentences: AnswerSentence[],
  kept: ReplySentence[],
  byN: Map<number, PromptPassage>,
  release: ReleaseCheck,
  /** Passages with copies in other releases: they label no sentence with their one version. */
  copied: ReadonlySet<number> = new Set(),
): string[] {
  if (release.trace.releases && release.trace.releases.length === 1) return []
  // Oldest first, however the sentence ordered its citations.
  const versionsOf = (s: ReplySentence) =>
    [
      ...new Set(
        s.cites
          .filter((n) => !copied.has(n))
          .map((n) => byN.get(n)?.version)
          .filter((v): v is string => !!v),
      ),
    ].sort(compareVersions)
  const all = [...new Set(kept.flatMap(versionsOf))].sort(compareVersions)
  if (all.length < 2) return []
  const cited = [...new Set(kept.flatMap((s) => s.cites))].filter((n) => !copied.has(n)).map((n) => byN.get(n)!)
  if (sayTheSame(cited)) return [`The releases cited (${all.join(', ')}) say the same here.`]
  kept.forEach((s, i) => {
    const vs = versionsOf(s)
    if (vs.length) sentences[i]!.version = vs.join(', ')
  })
  return [`The releases cited (${all.join(', ')}) say different things: each sentence names the release its sources come from.`]
}

function sayTheSame(passages: PromptPassage[]): boolean {
  const sets = passages.map((p) => new Set(contentWords(p.text)))
  for (let i = 0; i < sets.length; i++)
    for (let j = i + 1; j < sets.length; j++) {
      if (passages[i]!.version === passages[j]!.version) continue
      const a = sets[i]!
      const b = sets[j]!
      const inter = [...a].filter((w) => b.has(w)).length
      if (inter / Math.max(1, a.size + b.size - inter) < 0.8) return false
    }
  return true
}
