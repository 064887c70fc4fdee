import type { ResolvedScope } from '../retrieve/scope'
import type { Queryable } from '../store/db'
import { firstAppears, isGuidesOnly, isNeverMentioned, traceTerms } from './release-counts'
import { WORD_MIN_ELSEWHERE, keyTermsOf, type KeyTerm, type Titles } from './release-terms'

/**
 * The release rule after the model, sentence by sentence: the check before the model reads only
 * the question, and a question that paraphrases a feature ("send a voice recording") passes it.
 * The answer then names the feature ("audio content"). A sentence with a name or a feature word
 * (not a phrase: see checkSentences) that the scoped releases never mention, or mention only in
 * guides while the specifications of other releases define it, is removed and named, as the
 * support check removes a sentence its passages do not say: it is never shown as verified,
 * whatever passage it cites.
 */

export interface SentenceRemoval {
  /** Index of the sentence in the list checked. */
  index: number
  term: string
  verdict: 'never_mentioned' | 'guides_only'
  /** In plain words, for the removed list: "the 2024-11-05 docs never mention audio". */
  reason: string
}

export interface AfterContext {
  scope: Pick<ResolvedScope, 'known' | 'collections'>
  releases: string[]
  kinds: readonly string[]
  titles: Titles
  hasAuthoritative: boolean
  inScope: (version: string | null) => boolean
}

export async function checkSentences(db: Queryable, c: AfterContext, sentences: string[]): Promise<SentenceRemoval[]> {
  // Names and feature words only: in a sentence of an answer two adjacent words match a title's
  // pair by accident ("the server binds session IDs" and "Authorization Server Binding").
  const perSentence = sentences.map((s) => keyTermsOf(s, c.scope).filter((t) => t.form !== 'phrase'))
  const all = new Map<string, KeyTerm>()
  for (const terms of perSentence) for (const t of terms) if (!all.has(t.term)) all.set(t.term, t)
  const traced = await traceTerms(db, c.scope.collections, [...all.values()], c.kinds, c.titles, c.inScope)
  const byTerm = new Map(traced.map((t) => [t.term, t]))
  const label = c.releases.join(' and ')
  const kind = (c.kinds[0] ?? 'specification').toLowerCase()
  const out: SentenceRemoval[] = []
  perSentence.forEach((terms, index) => {
    for (const k of terms) {
      const t = byTerm.get(k.term)!
      if (isNeverMentioned(t, WORD_MIN_ELSEWHERE)) {
        const first = firstAppears(t.first_version, c.releases)
        out.push({
          index,
          term: t.term,
          verdict: 'never_mentioned',
          reason: `the ${label} docs never mention ${t.spelling}${first}`,
        })
        return
      }
      if (c.hasAuthoritative && isGuidesOnly(t, WORD_MIN_ELSEWHERE)) {
        out.push({
          index,
          term: t.term,
          verdict: 'guides_only',
          reason: `the ${label} ${kind} does not mention ${t.spelling}; only guide pages of that release do`,
        })
        return
      }
    }
  })
  return out
}
