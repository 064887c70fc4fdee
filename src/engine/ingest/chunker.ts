import type { ParsedBlock, ParsedDocument } from './types'

/**
 * Heading-aware chunking. A chunk never straddles two sections; long sections are split at block,
 * then sentence, then word boundaries with a small overlap; code blocks and tables stay whole when
 * they fit. All sizes are in tokens of the embedding model's tokenizer (TokenCounter), counted on
 * the text the model actually sees: breadcrumb line + chunk text.
 */

export interface TokenCounter {
  /** Identifies the tokenizer, so a different tokenizer re-chunks documents (see chunkerSignature). */
  id: string
  count(text: string): number
}

/**
 * Used until an embedding model is installed. Approximates a WordPiece tokenizer (a token per
 * punctuation mark and per six letters of a word, plus 25% for sub-word splits). It errs high, so chunks stay inside the
 * model's window; documents are re-chunked with the real tokenizer once it is available.
 */
export const approximateTokenCounter: TokenCounter = {
  id: 'approx-wordpiece-v1',
  count(text: string): number {
    let n = 0
    for (const m of text.matchAll(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)) n += Math.max(1, Math.ceil(m[0].length / 6))
    return Math.ceil(n * 1.25)
  },
}

export interface ChunkOptions {
  /** Upper bound for breadcrumb + text, in embedding-model tokens. */
  maxTokens: number
  /** Tokens of trailing context repeated at the start of the next piece of a split section. */
  overlapTokens: number
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { maxTokens: 400, overlapTokens: 40 }

export interface Chunk {
  /** Title + heading chain, e.g. ["Transports", "Streamable HTTP"]. */
  breadcrumb: string[]
  /** Position among chunks with the same breadcrumb in this document (0-based). */
  ordinal: number
  text: string
  pageStart: number | null
  pageEnd: number | null
  tokenCount: number
}

export function chunkerSignature(counter: TokenCounter, opts: ChunkOptions = DEFAULT_CHUNK_OPTIONS): string {
  return `chunker-v2;max=${opts.maxTokens};overlap=${opts.overlapTokens};tok=${counter.id}`
}

/** The text given to the embedding model for a chunk: its breadcrumb line, then its text. */
export function embeddingText(breadcrumb: string[], text: string): string {
  return breadcrumb.length ? `${breadcrumb.join(' > ')}\n\n${text}` : text
}

interface Unit {
  text: string
  page: number | undefined
  prose: boolean
}

function blockText(b: ParsedBlock): string {
  if (b.kind === 'code') return '```\n' + b.text.replace(/\n+$/, '') + '\n```'
  return b.text.trim()
}

const SENTENCE = /[^.!?\n]+(?:[.!?]+["')\]]*|\n|$)\s*/g

function splitSentences(text: string): string[] {
  const parts = text.match(SENTENCE)?.map((s) => s) ?? [text]
  return parts.filter((s) => s.trim().length > 0)
}

/** Splits text that is too long into pieces under `budget` tokens: sentences first, then words. */
function splitToBudget(text: string, budget: number, counter: TokenCounter, byLines: boolean): string[] {
  const pieces = byLines ? text.split('\n').map((l) => l + '\n') : splitSentences(text)
  const out: string[] = []
  let cur = ''
  const flush = () => {
    if (cur.trim()) out.push(byLines ? cur.replace(/\n$/, '') : cur.trim())
    cur = ''
  }
  for (const piece of pieces) {
    if (counter.count(piece) > budget) {
      flush()
      // A single sentence or line longer than the budget: cut at word boundaries (or characters).
      const words = piece.split(/(\s+)/)
      for (const w of words) {
        if (counter.count(cur + w) > budget && cur.trim()) flush()
        if (counter.count(w) > budget) {
          for (let i = 0; i < w.length; i += budget * 2) {
            const slice = w.slice(i, i + budget * 2)
            if (counter.count(cur + slice) > budget) flush()
            cur += slice
          }
        } else cur += w
      }
      continue
    }
    if (counter.count(cur + piece) > budget) flush()
    cur += piece
  }
  flush()
  return out
}

function tailForOverlap(text: string, overlapTokens: number, counter: TokenCounter): string {
  if (overlapTokens <= 0) return ''
  const sentences = splitSentences(text)
  let tail = ''
  for (let i = sentences.length - 1; i >= 0; i--) {
    const next = sentences[i]! + tail
    if (counter.count(next) > overlapTokens) break
    tail = next
  }
  return tail.trim()
}

/**
 * Headings of level 4 and deeper are minor subdivisions (a parameter, an example) that would
 * otherwise make tiny chunks which match few query words. They are folded into their nearest
 * ancestor section of level 1-3, their heading kept as a line of text; the section is then split
 * by size like any other.
 */
export const FOLD_LEVEL = 3

export function foldDeepSections(sections: ParsedDocument['sections']): ParsedDocument['sections'] {
  const out: ParsedDocument['sections'] = []
  for (const section of sections) {
    const anchor = out[out.length - 1]
    const isDescendant =
      anchor !== undefined &&
      anchor.headings.length < section.headings.length &&
      anchor.headings.every((h, i) => section.headings[i] === h)
    if (section.level > FOLD_LEVEL && anchor && isDescendant && anchor.level <= FOLD_LEVEL) {
      const extra = section.headings.slice(anchor.headings.length).join(' > ')
      const page = section.blocks[0]?.page
      anchor.blocks.push({ kind: 'paragraph', text: extra, page }, ...section.blocks)
      continue
    }
    out.push({ ...section, blocks: [...section.blocks] })
  }
  return out
}

export function chunkDocument(doc: ParsedDocument, counter: TokenCounter, opts: ChunkOptions = DEFAULT_CHUNK_OPTIONS): Chunk[] {
  const chunks: Chunk[] = []
  const ordinals = new Map<string, number>()
  const title = doc.title?.trim() || null

  for (const section of foldDeepSections(doc.sections)) {
    const headings = section.headings.map((h) => h.trim()).filter(Boolean)
    const breadcrumb = title && headings[0] !== title ? [title, ...headings] : headings
    const crumbTokens = breadcrumb.length ? counter.count(breadcrumb.join(' > ')) + 2 : 0
    const budget = Math.max(32, opts.maxTokens - crumbTokens)

    const units: Unit[] = []
    for (const block of section.blocks) {
      const text = blockText(block)
      if (!text) continue
      const prose = block.kind === 'paragraph' || block.kind === 'list' || block.kind === 'quote'
      if (counter.count(text) <= budget) {
        units.push({ text, page: block.page, prose })
      } else {
        const inner = block.kind === 'code' ? block.text : text
        // Prose pieces leave room for the overlap carried over from the piece before.
        const pieceBudget = block.kind === 'code' ? budget - 4 : prose ? Math.max(16, budget - opts.overlapTokens - 2) : budget
        const pieces = splitToBudget(inner, pieceBudget, counter, !prose)
        for (const p of pieces) units.push({ text: block.kind === 'code' ? '```\n' + p + '\n```' : p, page: block.page, prose })
      }
    }
    if (units.length === 0) continue

    const key = breadcrumb.join('\u0000')
    let current: Unit[] = []
    let currentTokens = 0
    const emit = () => {
      if (current.length === 0) return
      const text = current.map((u) => u.text).join('\n\n')
      const pages = current.map((u) => u.page).filter((p): p is number => typeof p === 'number')
      const ordinal = ordinals.get(key) ?? 0
      ordinals.set(key, ordinal + 1)
      chunks.push({
        breadcrumb,
        ordinal,
        text,
        pageStart: pages.length ? Math.min(...pages) : null,
        pageEnd: pages.length ? Math.max(...pages) : null,
        tokenCount: crumbTokens + counter.count(text),
      })
    }

    for (const unit of units) {
      const unitTokens = counter.count(unit.text) + 1
      if (current.length > 0 && currentTokens + unitTokens > budget) {
        const last = current[current.length - 1]!
        emit()
        current = []
        currentTokens = 0
        // Overlap: repeat the end of the previous prose so a split sentence keeps its context.
        if (last.prose && unit.prose) {
          const tail = tailForOverlap(last.text, opts.overlapTokens, counter)
          const tailTokens = tail ? counter.count(tail) + 1 : 0
          if (tail && tailTokens + unitTokens <= budget) {
            current.push({ text: tail, page: last.page, prose: true })
            currentTokens = tailTokens
          }
        }
      }
      current.push(unit)
      currentTokens += unitTokens
    }
    emit()
  }
  return chunks
}
