/**
 * What a parser hands to the chunker. Parsers know formats; the chunker knows sizes.
 *
 * A document is a list of sections. A section is the text under one heading (or the part of a
 * document before its first heading, with an empty breadcrumb). A chunk never straddles two
 * sections, so parsers must start a new section at every heading they recognise.
 */
export type BlockKind = 'paragraph' | 'code' | 'table' | 'list' | 'quote'

export interface ParsedBlock {
  kind: BlockKind
  /** Plain text of the block. Code keeps its line breaks; tables are rendered as Markdown rows. */
  text: string
  /** 1-based page number for paged formats (PDF); undefined elsewhere. */
  page?: number
}

export interface ParsedSection {
  /** Heading breadcrumb from the outermost heading to this section's own, e.g. ["Transports", "Streamable HTTP"]. Empty for text before the first heading. */
  headings: string[]
  /** Heading level of this section's own heading (1-6), 0 for the intro. */
  level: number
  blocks: ParsedBlock[]
}

export interface ParsedDocument {
  /** Title from front matter, <title>, PDF metadata or the first H1; null when none. */
  title: string | null
  /** Front matter (Markdown) or metadata (other formats); `version` here sets the document's version. */
  meta: Record<string, unknown>
  sections: ParsedSection[]
  /** Number of pages for paged formats. */
  pageCount?: number
}

/** A file a parser cannot read. The message is shown to the person, so it says what is wrong in words. */
export class ParseError extends Error {
  override readonly name = 'ParseError'
}

export type ParserFn = (bytes: Uint8Array, relativePath: string) => Promise<ParsedDocument>
