import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import type { PassageText } from '../../shared/passage'
import { PACKED_HEADINGS_JOINER } from '../ingest/chunker'
import { rewriteFollowUpDeterministic } from '../answer/followup'

/** The evaluation question format (docs/contracts.md, "Evaluation questions"); other tools write these files. */
export const GoldRef = z.object({
  path: z.string().min(1),
  heading: z.string(),
  page: z.number().int().positive().optional(),
})
export type GoldRef = z.infer<typeof GoldRef>

export const QuestionKind = z.enum([
  'version-specific',
  'cross-version',
  'absent-feature',
  'exact-token',
  'paraphrase',
  'off-topic',
  'smalltalk',
])

export const EvalQuestion = z.object({
  id: z.string().min(1),
  question: z.string().min(1),
  version: z.string().nullable(),
  answerable: z.boolean(),
  gold: z.array(GoldRef),
  facts: z.array(z.string()).default([]),
  kind: QuestionKind,
  /**
   * The conversation before a follow-up ("ok, and what happens to it in the newer releases?"): the
   * questions the person asked first, oldest first. The evals ask them in the same thread first.
   */
  history: z.array(z.object({ question: z.string().min(1) })).default([]),
})
export type EvalQuestion = z.infer<typeof EvalQuestion>

/**
 * What a search for the question looks for: a follow-up rewritten from the turn before it, as the
 * engine rewrites it without a model ("subject of that question: follow-up"); else the question.
 */
export function searchQuestion(q: Pick<EvalQuestion, 'question' | 'history'>): string {
  const history = q.history.map((h) => ({ question: h.question, standalone: h.question, answer: null }))
  return (history.length && rewriteFollowUpDeterministic(q.question, history)) || q.question
}

export async function loadQuestions(file: string): Promise<EvalQuestion[]> {
  const text = await readFile(file, 'utf8')
  const out: EvalQuestion[] = []
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      throw new Error(`${file}:${i + 1}: not valid JSON`)
    }
    const parsed = EvalQuestion.safeParse(json)
    if (!parsed.success)
      throw new Error(`${file}:${i + 1}: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`)
    out.push(parsed.data)
  })
  return out
}

function normaliseHeading(h: string): string {
  return h.replace(/[`*_]/g, '').replace(/\s+/g, ' ').trim().toLowerCase()
}

/**
 * A result is a hit when it, or a copy it stands for (search.ts SearchHit.same_in: the same
 * section word for word in another release's folder), is: the copies are listed with it and open
 * from it.
 */
export function hitsGold(
  hit: Pick<PassageText, 'path' | 'heading' | 'page'> &
    Partial<Pick<PassageText, 'page_end'>> & { same_in?: { path: string; page: number | null }[] },
  gold: GoldRef,
): boolean {
  if (isHit(hit, gold)) return true
  const span = hit.page !== null && hit.page_end != null ? hit.page_end - hit.page : 0
  return (hit.same_in ?? []).some((c) =>
    isHit({ path: c.path, heading: hit.heading, page: c.page, page_end: c.page === null ? null : c.page + span }, gold),
  )
}

/** A retrieved chunk is a hit when its document path equals the gold path, its breadcrumb contains the gold heading (if any) and its page range includes the gold page (if any). */
export function isHit(
  hit: Pick<PassageText, 'path' | 'heading' | 'page'> & Partial<Pick<PassageText, 'page_end'>>,
  gold: GoldRef,
): boolean {
  if (hit.path !== gold.path) return false
  // "Contains" means one element of the breadcrumb is the heading: a substring test would let the
  // gold heading "Tool" match "Tools" or "Tool Result" and inflate recall. A chunk that packs small
  // deep sections names each of them in its last element.
  if (gold.heading) {
    const want = normaliseHeading(gold.heading)
    const names = hit.heading.split(' > ').flatMap((h) => h.split(PACKED_HEADINGS_JOINER))
    if (!names.some((h) => normaliseHeading(h) === want)) return false
  }
  if (gold.page !== undefined) {
    if (hit.page === null) return false
    const end = hit.page_end ?? hit.page
    if (gold.page < hit.page || gold.page > end) return false
  }
  return true
}
