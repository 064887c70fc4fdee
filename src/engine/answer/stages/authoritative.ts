import type { VerificationRepair } from '../../../shared/trace'
import type { KeptSentence } from '../procedure'
import type { PromptPassage, ReplySentence } from '../prompt'
import type { ReleaseCheck } from '../release'
import { contentWords } from '../sentences'
import { checkSentence } from '../support'

/**
 * Whether a passage is one of the scoped release's authoritative sources (its kind is one of them
 * and its version one of the scoped releases); null when no release is scoped.
 */
export function releaseAuthority(release: ReleaseCheck): ((p: PromptPassage) => boolean) | null {
  const rule = release.trace
  if (!rule.releases) return null
  const releases = rule.releases
  const kinds = new Set(rule.authoritative_kinds)
  return (p) => !!p.kind && kinds.has(p.kind) && !!p.version && releases.includes(p.version)
}

/**
 * The scoped release's own authoritative passages, when it has any: what a quoted answer may quote
 * and where the release's own sentence of an answer comes from (key-sentences.ts ownSentence);
 * null when no release is scoped or it has no authoritative source.
 */
export function ownSources(release: ReleaseCheck): ((p: PromptPassage) => boolean) | null {
  return release.trace.has_authoritative ? releaseAuthority(release) : null
}

/**
 * Whether a passage is one of the scoped release's authoritative sources (ADR 0013) that speaks of
 * what the question asks about; null when the rule does not apply to this question.
 */
export function authoritativeFor(release: ReleaseCheck): ((p: PromptPassage) => boolean) | null {
  const rule = release.trace
  if (!rule.must_cite_authoritative || !rule.releases) return null
  const ofRelease = releaseAuthority(release)!
  const terms = release.mustCite.map((t) => ({ raw: t.toLowerCase(), stem: contentWords(t)[0] ?? t }))
  const features = release.featureTerms.map((t) => ({ raw: t.toLowerCase(), stems: contentWords(t) }))
  return (p) => {
    if (!ofRelease(p)) return false
    // The section's heading counts, as it does in the keyword index the rule counted with: a
    // passage under "Elicitation > URL Mode Flow" is about elicitation though its text never says so.
    const own = `${p.heading}\n${p.text}`
    const text = own.toLowerCase()
    const words = new Set(contentWords(own))
    if (terms.some((t) => text.includes(t.raw) || words.has(t.stem))) return true
    // A section named for a feature the question asks about ("Sampling > Tool Choice Modes" for a
    // question on sampling with tools) is about it, though its text never says the specific word.
    const heading = p.heading.toLowerCase()
    const headingWords = new Set(contentWords(p.heading))
    return features.some((f) => heading.includes(f.raw) || (f.stems.length > 0 && f.stems.every((w) => headingWords.has(w))))
  }
}

/**
 * The release's authoritative sources mention what the question asks about: an answer stands only
 * if it cites at least one of them (of that release) that contains the term, in its text or heading,
 * or whose section heading names a feature the question asks about. Null when the rule does not
 * apply; else whether the answer cited one, and the refusal when it did not.
 */
export function authoritativeRefusal(
  kept: ReplySentence[],
  byN: Map<number, PromptPassage>,
  release: ReleaseCheck,
): { cited: boolean; refusal: string | null } | null {
  const qualifies = authoritativeFor(release)
  if (!qualifies) return null
  const rule = release.trace
  const cited = [...new Set(kept.flatMap((s) => s.cites))].map((n) => byN.get(n)!).filter(Boolean)
  if (cited.some(qualifies)) return { cited: true, refusal: null }
  const label = rule.releases!.join(' and ')
  const refusal = `The answer drafted does not rest on the ${label} ${rule.authoritative_kinds[0]!.toLowerCase()}, which is what defines ${release.mustCite[0]} in that release; it is not shown.`
  return { cited: false, refusal }
}

/**
 * A small model often numbers a guide where the release's specification, also among its passages,
 * says the same: seen on a held-out question, every sentence of a right answer cited the guide
 * page and the answer was refused by the rule above. When no sentence cites an authoritative
 * passage, each sentence the model wrote is checked against the qualifying authoritative passages
 * it was given (the support check, on that passage alone); one that passes is cited to that passage
 * too, with a repair saying so. A sentence only a guide says stays as it is, and the rule above
 * still refuses an answer none of whose sentences the specification says.
 */
export async function citeAuthoritative(
  kept: KeptSentence[],
  passages: readonly PromptPassage[],
  release: ReleaseCheck,
  question: string,
  repairs: VerificationRepair[],
): Promise<void> {
  const qualifies = authoritativeFor(release)
  if (!qualifies) return
  const byN = new Map(passages.map((p) => [p.n, p]))
  if (kept.some((s) => s.cites.some((n) => byN.get(n) && qualifies(byN.get(n)!)))) return
  const candidates = passages.filter(qualifies)
  for (const s of kept) {
    if (s.added) continue
    for (const p of candidates) {
      if (!(await checkSentence(s.text, [p], { question })).ok) continue
      const was = s.cites.map((n) => `[${n}]`).join('')
      s.cites = [...s.cites, p.n]
      repairs.push({
        code: 'authoritative_cited',
        message: `"${s.text}" cited ${was || 'no passage'}; [${p.n}], the ${p.kind?.toLowerCase() ?? 'authoritative source'} of ${p.version}, says it too and was cited.`,
      })
      break
    }
  }
}
