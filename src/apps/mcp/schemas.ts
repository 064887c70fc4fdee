import { z } from 'zod'
import { AskRequest } from '../../shared/answer'
import { CollectionInfo, ImportReport, InvokeMap } from '../../shared/api'
import { PassageText } from '../../shared/passage'
import { HitScores, ScopeInfo, SearchMode, SearchResult, SearchHit } from '../../shared/search'

/**
 * The MCP tools' input and output schemas, built from the contract (src/shared): every field's type
 * is the contract's. What is the MCP's own: its argument names and limits (snake_case, a collection
 * or a list of them, top_k), the descriptions an assistant reads, and one name, the `breadcrumb`
 * that is a passage's `heading` elsewhere (docs/contracts.md, "Casing"). Fields are listed in the
 * order the tools have always declared and returned them.
 */

const CollectionName = InvokeMap['collections.remove'].input.shape.collection

const CollectionArg = z
  .union([CollectionName, z.array(CollectionName).min(1).max(20)])
  .optional()
  .describe('Collection id, or a list of them, to search; every collection when omitted (see list_collections).')
// One string, not the contract's union of 'auto' | 'all' | 'latest' | a name: clients show it as one field.
const VersionArg = z
  .string()
  .min(1)
  .max(64)
  .optional()
  .describe(
    'Release to search, e.g. "2025-06-18"; "latest" for the highest release; "all" for every version. Omitted (or "auto"): a release the query names ("in the 2025-06-18 spec", "the latest release") is searched, else every version. Unversioned pages are always included.',
  )

const score = HitScores.shape
const Scores = z.object({
  bm25: score.bm25.describe('Okapi BM25 score of keyword search (not normalised); null if keyword search did not return it.'),
  cosine: score.cosine.describe(
    'Cosine similarity of query and passage embeddings, in [-1, 1]; null if vector search did not return it.',
  ),
  rrf: score.rrf.describe('Reciprocal rank fusion score, sum of 1/(60 + rank); null unless both retrievers ran.'),
  reranker: score.reranker.describe('Raw cross-encoder score (a logit, not a probability); null when not reranked.'),
  keyword_rank: score.keyword_rank,
  vector_rank: score.vector_rank,
})

const passage = PassageText.shape
/** The contract's passage with its heading named `breadcrumb`. */
const Passage = z.object({
  chunk_id: passage.chunk_id.describe('Stable id; pass it to get_passage for the text around it.'),
  collection: passage.collection,
  path: passage.path.describe('Document path relative to the collection folder.'),
  breadcrumb: passage.heading.describe('Heading breadcrumb, "Title > Section > Subsection".'),
  version: passage.version,
  kind: passage.kind.describe('Source kind label, e.g. Specification or Guide.'),
  page: passage.page.describe('First page, for paged documents (PDF); else null.'),
  page_end: passage.page_end,
  text: passage.text,
})
export type McpPassage = z.infer<typeof Passage>

/**
 * A contract passage as the MCP tools return it: the one place its fields are renamed (heading
 * becomes breadcrumb). `extra` goes before the text, where get_passage has always put `position`.
 */
export function toMcpPassage<E extends object = object>(p: PassageText, extra?: E): McpPassage & E {
  return {
    chunk_id: p.chunk_id,
    collection: p.collection,
    path: p.path,
    breadcrumb: p.heading,
    version: p.version,
    kind: p.kind,
    page: p.page,
    page_end: p.page_end,
    ...(extra as E),
    text: p.text,
  }
}

/** A search hit with its scores, under the MCP's names. */
export function toMcpHit(h: SearchHit): z.infer<typeof SearchOutput>['passages'][number] {
  const s = h.scores
  return {
    ...toMcpPassage(h),
    scores: {
      bm25: s.bm25,
      cosine: s.cosine,
      rrf: s.rrf,
      reranker: s.reranker,
      keyword_rank: s.keyword_rank,
      vector_rank: s.vector_rank,
    },
    ...(h.same_in?.length ? { same_in: h.same_in } : {}),
  }
}

export const SearchInput = z.object({
  // Trimmed first, so that a blank query is refused here.
  query: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .describe('What to look for: a question, some words, or an exact token such as tools/call or -32602.'),
  collection: CollectionArg,
  version: VersionArg,
  mode: SearchMode.optional().describe('hybrid (default: keyword and vector search fused), keyword or vector.'),
  rerank: z.boolean().optional().describe('Rerank with the cross-encoder (default true when one is installed).'),
  top_k: z.number().int().min(1).max(50).optional().describe('How many passages to return (default 8).'),
})

const search = SearchResult.shape
export const SearchOutput = z.object({
  query: z.string(),
  scope: ScopeInfo.shape.label.describe('What was searched, in words.'),
  scope_info: ScopeInfo.describe(
    'What was searched and why: source "chosen" (the version argument), "named_in_question" (a release the query names) or "default" (every version).',
  ),
  mode: search.mode,
  rerank: search.rerank,
  degraded: search.degraded.describe('True when a stage could not run (no embedding model, no reranker); see notices.'),
  notices: search.notices,
  passages: z.array(
    Passage.extend({
      scores: Scores,
      same_in: SearchHit.shape.same_in.describe(
        'The same section word for word elsewhere (the page copied into other releases), best first; absent when nowhere.',
      ),
    }),
  ),
})

const ask = AskRequest.shape
export const AskInput = z.object({
  question: ask.question,
  collection: CollectionArg,
  version: VersionArg,
  thread_id: ask.threadId.describe('Continue a conversation (thread_id of an earlier answer).'),
  search_only: ask.searchOnly.describe('Return the best passages without generating an answer.'),
})

const collection = CollectionInfo.shape
const Collection = z.object({
  id: collection.id,
  root: collection.root.describe('The folder the collection was imported from.'),
  documents: collection.documents,
  failed: collection.failed.describe('Documents that could not be imported.'),
  chunks: collection.chunks,
  embedded: collection.embedded.describe('Chunks with a vector (vector search sees these).'),
  versions: collection.versions.describe('Versions present, oldest first.'),
  latest_version: z.string().nullable().describe('Highest released version (what version "latest" selects).'),
  last_sync_at: collection.last_sync_at,
  ocr_pages: collection.ocr_pages.describe('Pages read by text recognition (scans, images).'),
  low_confidence_pages: collection.low_confidence_pages.describe(
    'Of those, pages whose recognised text is unsure: quote them with care.',
  ),
  low_confidence_documents: collection.low_confidence_documents.describe('Documents with at least one such page.'),
  ocr: collection.ocr.describe('Whether text recognition of scanned pages and images is on for this collection.'),
})
export const ListOutput = z.object({ collections: z.array(Collection) })

const PassageInContext = Passage.extend({ position: z.number().int().nullable().describe('Order in its document, from 0.') })
export const GetPassageInput = z.object({
  chunk_id: z.string().min(1).max(100),
  neighbours: z
    .number()
    .int()
    .min(0)
    .max(5)
    .optional()
    .describe('Chunks to include before and after it in the same document (default 1).'),
})
export const GetPassageOutput = z.object({
  passage: PassageInContext,
  previous: z.array(PassageInContext).describe('Chunks before it, in document order (nearest last).'),
  next: z.array(PassageInContext).describe('Chunks after it, in document order (nearest first).'),
})

export const ImportInput = z.object({
  folder: InvokeMap['collections.import'].input.shape.folder.describe('Absolute path of the folder to import (or re-sync).'),
  collection: CollectionName.describe('Collection name; importing into an existing one syncs it.'),
})
/** The import report without the per-file skip list and the timings: what an assistant can act on. */
export const ImportOutput = ImportReport.omit({ skipped_files: true, timings: true })

export const RemoveInput = InvokeMap['collections.remove'].input
export const RemoveOutput = z.object({ collection: z.string(), ...InvokeMap['collections.remove'].output.shape })
