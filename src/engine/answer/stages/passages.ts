import type { Citation, ClosestSection } from '../../../shared/answer'
import type { SearchHit } from '../../../shared/search'
import type { PromptPassage } from '../prompt'

/** A search hit as the n-th passage of the answer prompt. */
export function toPromptPassage(h: SearchHit, i: number): PromptPassage {
  return {
    n: i + 1,
    chunk_id: h.chunk_id,
    path: h.path,
    heading: h.heading,
    kind: h.kind,
    version: h.version,
    page: h.page,
    text: h.text,
  }
}

/** A citation rendered from stored metadata, never from model output. */
export function toCitation(h: SearchHit, n: number): Citation {
  return {
    n,
    chunk_id: h.chunk_id,
    path: h.path,
    heading: h.heading,
    version: h.version,
    page: h.page,
    kind: h.kind,
    collection: h.collection,
  }
}

export function toClosest(h: SearchHit): ClosestSection {
  const snippet = h.text.replace(/\s+/g, ' ').trim()
  return {
    chunk_id: h.chunk_id,
    collection: h.collection,
    path: h.path,
    heading: h.heading,
    version: h.version,
    kind: h.kind,
    page: h.page,
    snippet: snippet.length > 240 ? snippet.slice(0, 239) + '…' : snippet,
    scores: h.scores,
  }
}
