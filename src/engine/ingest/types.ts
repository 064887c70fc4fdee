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
  /**
   * For a section under a level-4 or deeper heading: how many leading entries of `headings` name its
   * nearest level 1-3 section, the one it is packed with (chunker.ts). Absent when it has none, or
   * when a container (a tab) opened between the two.
   */
  anchor?: number
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
  /** Per page, for paged formats (PDF): what its text layer gave. */
  pages?: ParsedPage[]
  /**
   * What the person should know about a file that did import (pages left out, and why), in words,
   * without the file's name (the import report adds it).
   */
  notices?: string[]
  /**
   * Set, with nothing read, when ParseContext.deferOcrOver was given and the file has more pages
   * to recognise than that: how many. The import reads it again after the rest of the folder.
   */
  deferredOcrPages?: number
}

/** One page of a paged format, as its text layer read. */
export interface ParsedPage {
  /** 1-based page number. */
  page: number
  /** Characters of text kept from the page; 0 for a blank page, a scanned one, or an unreadable one. */
  chars: number
  /**
   * The page's text layer is mostly control or private-use characters (its font has no usable
   * ToUnicode map: see textcheck.ts, isUnreadableText). None of it was kept; only text
   * recognition of the rendered page can read it.
   */
  unreadable: boolean
  /** Set when the page's text came from text recognition of its rendered image (ocr.ts). */
  ocr?: PageOcr
}

/** A recognised word: its text and its box as fractions (0..1) of the page's width and height. */
export interface OcrWord {
  text: string
  /** [left, top, right, bottom], from the page's top left corner. */
  box: [number, number, number, number]
  /** Tesseract's confidence in the word, 0-100. */
  confidence: number
}

/** What text recognition made of one page. */
export interface PageOcr {
  /** Tesseract's mean word confidence, 0-100. */
  confidence: number
  words: OcrWord[]
}

/** How far a parser is inside one file: `pages` parsed (or `ocr`: pages read by text recognition). */
export interface FileProgress {
  stage: 'pages' | 'ocr'
  done: number
  total: number
}

/** What a parser may report while it reads one file. */
export interface ParseContext {
  /** Progress inside a long file, page by page. */
  onProgress?: (p: FileProgress) => void
  /** Read pages without a text layer (scans, images) by text recognition; on unless false. */
  ocr?: boolean
  /** The most pages of one file recognised in one parse (pdf-ocr.ts OCR_PAGE_CAP unless given). */
  ocrPageCap?: number
  /** Stop at once, returning deferredOcrPages, when more pages than this are to be recognised. */
  deferOcrOver?: number
}

/** A file a parser cannot read. The message is shown to the person, so it says what is wrong in words. */
export class ParseError extends Error {
  override readonly name = 'ParseError'
}

export type ParserFn = (bytes: Uint8Array, relativePath: string, ctx?: ParseContext) => Promise<ParsedDocument>
