import type { Db } from '../store/db'
import { chunkId, documentId, sha256Hex } from '../store/ids'
import { replaceDocument, type ChunkRow } from '../store/writer'
import { countWords, extractExactTerms } from '../core/exact-terms'

/** A chunk as the keyword index reads it (no embedding), for stores the keyword tests write by hand. */
export function keywordChunk(collection: string, rel: string, heading: string, text: string): ChunkRow {
  return {
    id: chunkId(collection, rel, [heading], 0),
    ordinal: 0,
    heading,
    pageStart: null,
    pageEnd: null,
    text,
    embedHash: sha256Hex(text),
    tokenCount: 10,
    lexLen: countWords(text),
    exactTerms: extractExactTerms(text),
    embedding: null,
    embeddingModel: null,
  }
}

/** Writes one document with its chunks through the store's writer, as an import would, with no file behind it. */
export async function writeKeywordDoc(
  db: Db,
  collection: string,
  rel: string,
  version: string | null,
  chunks: ChunkRow[],
): Promise<void> {
  await replaceDocument(
    db,
    {
      id: documentId(collection, rel),
      collectionId: collection,
      path: rel,
      size: 1,
      mtimeMs: 1,
      sha256: sha256Hex(rel + chunks.map((c) => c.text).join()),
      version,
      kind: null,
      title: null,
      pageCount: null,
      chunker: 'test',
    },
    chunks,
  )
}
