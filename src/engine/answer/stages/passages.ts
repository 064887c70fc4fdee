import type { Citation, ClosestSection, PassagePreview } from '../../../shared/answer'
import { excerpt, queryTerms } from '../../../shared/excerpt'
import type { PassageRef } from '../../../shared/passage'
import type { SearchHit } from '../../../shared/search'
import type { PromptPassage } from '../prompt'

/** A search hit as the n-th passage of the answer prompt. */
export function toPromptPassage(h: SearchHit, i: number): PromptPassage {
  const { collection: _collection, ...place } = placeOf(h)
  return { n: i + 1, ...place, text: h.text }
}

/** A citation rendered from stored metadata, never from model output. */
export function toCitation(h: SearchHit, n: number): Citation {
  return { n, ...placeOf(h), ...(h.same_in?.length ? { same_in: h.same_in } : {}) }
}

/** A section to list; its snippet is the stretch of the passage with the most words of `query` (shared/excerpt.ts). */
export function toClosest(h: SearchHit, query = ''): ClosestSection {
  return { ...placeOf(h), snippet: excerpt(h.text, queryTerms(query), 240), scores: h.scores }
}

/** Where a passage is: the fields every passage-shaped shape shares with the hit. */
function placeOf(h: SearchHit): PassageRef {
  return {
    chunk_id: h.chunk_id,
    collection: h.collection,
    path: h.path,
    heading: h.heading,
    version: h.version,
    kind: h.kind,
    page: h.page,
  }
}

/** A passage as shown while the model reads it: its sentences, those that match the question marked. */
export function toPreview(h: SearchHit, n: number, units: { text: string; match: boolean }[]): PassagePreview {
  return { n, ...placeOf(h), sentences: units.map((u) => ({ text: u.text, match: u.match })) }
}
