import { PACK_LEVEL } from './parsers/builder'
import type { ParsedBlock, ParsedDocument, ParsedSection } from './types'
import type { TokenCounter } from '../core/model-ports'

/**
 * Heading-aware chunking. A chunk never straddles two sections of level 1-3 (small sections under
 * deeper headings are packed with their neighbours, each named in the breadcrumb); long sections are split at block,
 * then sentence, then word boundaries with a small overlap; code blocks and tables stay whole when
 * they fit. All sizes are in tokens of the embedding model's tokenizer (TokenCounter), counted on
 * the text the model actually sees: breadcrumb line + chunk text.
 */

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

// v4: a table split across chunks repeats its header row in every piece (issue 26).
export function chunkerSignature(counter: TokenCounter, opts: ChunkOptions = DEFAULT_CHUNK_OPTIONS): string {
  return `chunker-v4;max=${opts.maxTokens};overlap=${opts.overlapTokens};tok=${counter.id}`
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
  // The buffer's count is kept as pieces are added, rather than recounted whole each time (a long
  // code block split by lines recounted its growing buffer at every line: quadratic).
  let curTokens = 0
  const add = (piece: string, tokens: number) => {
    curTokens = joinedCount(cur, curTokens, piece, tokens, counter)
    cur += piece
  }
  const reset = () => {
    flush()
    curTokens = 0
  }
  for (const piece of pieces) {
    const pieceTokens = counter.count(piece)
    if (pieceTokens > budget) {
      reset()
      // A single sentence or line longer than the budget: cut at word boundaries (or characters).
      const words = piece.split(/(\s+)/)
      for (const w of words) {
        const wTokens = counter.count(w)
        if (joinedCount(cur, curTokens, w, wTokens, counter) > budget && cur.trim()) reset()
        if (wTokens > budget) {
          for (let i = 0; i < w.length; i += budget * 2) {
            const slice = w.slice(i, i + budget * 2)
            const sliceTokens = counter.count(slice)
            if (joinedCount(cur, curTokens, slice, sliceTokens, counter) > budget) reset()
            add(slice, sliceTokens)
          }
        } else add(w, wTokens)
      }
      continue
    }
    if (joinedCount(cur, curTokens, piece, pieceTokens, counter) > budget) reset()
    add(piece, pieceTokens)
  }
  flush()
  return out
}

const WORD_END = /[\p{L}\p{N}]$/u
const WORD_START = /^[\p{L}\p{N}]/u

/**
 * Tokens of `a + b`: the sum of each's for an additive counter (a word-piece tokenizer splits at
 * whitespace and punctuation before it splits words) where they meet at such a boundary; counted
 * whole where a word runs across the join (a word cut into slices) or the counter only estimates.
 */
function joinedCount(a: string, aTokens: number, b: string, bTokens: number, counter: TokenCounter): number {
  if (!a) return bTokens
  if (!b) return aTokens
  return counter.additive && !(WORD_END.test(a) && WORD_START.test(b)) ? aTokens + bTokens : counter.count(a + b)
}

/**
 * A Markdown table too long for one chunk is split between rows, and every piece starts with the
 * table's header row and its separator: a row of a parts list or a spreadsheet means nothing
 * without the column names, for the reader of a cited passage and for the embedder alike.
 * A table without a separator line (not Markdown) is split by lines as any other text.
 */
function splitTable(text: string, budget: number, counter: TokenCounter): string[] {
  const lines = text.split('\n')
  const sep = lines.findIndex((l) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(l))
  if (sep < 1 || sep > 3) return splitToBudget(text, budget, counter, true)
  const head = lines.slice(0, sep + 1).join('\n')
  const rowBudget = budget - counter.count(head + '\n')
  // A header so wide that no row fits beside it: the rows go out on their own rather than not at all.
  if (rowBudget < 16) return splitToBudget(text, budget, counter, true)
  return splitToBudget(lines.slice(sep + 1).join('\n'), rowBudget, counter, true).map((rows) => head + '\n' + rows)
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
 * Sections under level 4-6 headings are often small (a CLI flag, a config key, an API method):
 * alone they make tiny chunks that match few query words. Consecutive ones under the same level
 * 1-3 section are packed together (with that section's own text) up to the size budget, and a
 * chunk's breadcrumb names every one of them, so a passage under `#### someOption` is cited under
 * its own heading (docs/contracts.md, "Evaluation questions").
 */
export const PACKED_HEADINGS_JOINER = ' · '

/** Sections packed together: the first, then deep sections anchored at the same level 1-3 section. */
function packGroups(sections: readonly ParsedSection[]): ParsedSection[][] {
  const groups: ParsedSection[][] = []
  let key: string | null = null
  for (const s of sections) {
    const own = s.anchor === undefined ? null : s.headings.slice(0, s.anchor).join('\u0000')
    if (own !== null && own === key) {
      groups[groups.length - 1]!.push(s)
      continue
    }
    groups.push([s])
    // A section at level 1-3 anchors the deep sections that follow it; a deep one, its siblings.
    key = s.anchor === undefined ? (s.level <= PACK_LEVEL ? s.headings.join('\u0000') : null) : own
  }
  return groups
}

/**
 * The breadcrumb of a chunk holding parts of these sections of one group: a single section's own,
 * else the anchor's followed by the headings of the deep sections it holds.
 */
function packedBreadcrumb(parts: readonly ParsedSection[]): string[] {
  if (parts.length === 0) return []
  if (parts.length === 1) return parts[0]!.headings
  const deep = parts.filter((p) => p.anchor !== undefined)
  const anchorLen = deep[0]?.anchor ?? 0
  const prefix = parts[0]!.headings.slice(0, anchorLen)
  if (deep.length === 1) return deep[0]!.headings
  return [...prefix, deep.map((p) => p.headings[p.headings.length - 1]!).join(PACKED_HEADINGS_JOINER)]
}

function withTitle(title: string | null, headings: readonly string[]): string[] {
  const clean = headings.map((h) => h.trim()).filter(Boolean)
  return title && clean[0] !== title ? [title, ...clean] : clean
}

function crumbTokensOf(breadcrumb: readonly string[], counter: TokenCounter): number {
  return breadcrumb.length ? counter.count(breadcrumb.join(' > ')) + 2 : 0
}

interface PackUnit extends Unit {
  section: ParsedSection
  /** A deep section's heading, written before its first unit when that is not where the chunk starts. */
  lead: string | null
  /** Tokens it adds to a chunk: its text, its lead and the blank line before it. */
  tokens: number
}

/** Splits a section's blocks into units that each fit `budget`. */
function sectionUnits(section: ParsedSection, budget: number, counter: TokenCounter, opts: ChunkOptions): Unit[] {
  const units: Unit[] = []
  for (const block of section.blocks) {
    const text = blockText(block)
    if (!text) continue
    const prose = block.kind === 'paragraph' || block.kind === 'list' || block.kind === 'quote'
    if (counter.count(text) <= budget) {
      units.push({ text, page: block.page, prose })
      continue
    }
    if (block.kind === 'table') {
      for (const p of splitTable(text, budget, counter)) units.push({ text: p, page: block.page, prose })
      continue
    }
    const inner = block.kind === 'code' ? block.text : text
    // Prose pieces leave room for the overlap carried over from the piece before.
    const pieceBudget = block.kind === 'code' ? budget - 4 : prose ? Math.max(16, budget - opts.overlapTokens - 2) : budget
    const pieces = splitToBudget(inner, pieceBudget, counter, !prose)
    for (const p of pieces) units.push({ text: block.kind === 'code' ? '```\n' + p + '\n```' : p, page: block.page, prose })
  }
  return units
}

export function chunkDocument(doc: ParsedDocument, tokens: TokenCounter, opts: ChunkOptions = DEFAULT_CHUNK_OPTIONS): Chunk[] {
  const counter = rememberingCounts(tokens)
  const chunks: Chunk[] = []
  const ordinals = new Map<string, number>()
  const title = doc.title?.trim() || null
  for (const group of packGroups(doc.sections)) chunkGroup(group, title, counter, opts, chunks, ordinals)
  return chunks
}

/** The same counter, remembering its counts for one document: a block's text is counted as a unit, then again in its chunk. */
function rememberingCounts(counter: TokenCounter): TokenCounter {
  const seen = new Map<string, number>()
  return {
    id: counter.id,
    ...(counter.additive ? { additive: true } : {}),
    count(text: string): number {
      let n = seen.get(text)
      if (n === undefined) {
        n = counter.count(text)
        seen.set(text, n)
      }
      return n
    },
  }
}

/** Chunks one group of sections: never across groups, and across sections only within a group. */
function chunkGroup(
  group: readonly ParsedSection[],
  title: string | null,
  counter: TokenCounter,
  opts: ChunkOptions,
  chunks: Chunk[],
  ordinals: Map<string, number>,
): void {
  const units: PackUnit[] = []
  for (const section of group) {
    // Each section's pieces must fit beside its own breadcrumb, the longest a chunk of one section has.
    const budget = Math.max(32, opts.maxTokens - crumbTokensOf(withTitle(title, section.headings), counter))
    const lead = section.anchor !== undefined && group.length > 1 ? section.headings[section.headings.length - 1]! : null
    sectionUnits(section, budget, counter, opts).forEach((u, i) => {
      const own = i === 0 ? lead : null
      units.push({ ...u, section, lead: own, tokens: counter.count(u.text) + 1 + (own ? counter.count(own) + 1 : 0) })
    })
  }
  if (units.length === 0) return

  let current: PackUnit[] = []
  let currentTokens = 0
  const sections = new Set<ParsedSection>()
  let crumbTokens = 0
  const crumbOf = (list: Iterable<ParsedSection>) => withTitle(title, packedBreadcrumb([...list]))
  const start = (first: PackUnit[]) => {
    current = first
    currentTokens = first.reduce((n, u) => n + u.tokens, 0)
    sections.clear()
    for (const u of first) sections.add(u.section)
    crumbTokens = crumbTokensOf(crumbOf(sections), counter)
  }
  const emit = () => {
    if (current.length === 0) return
    const breadcrumb = crumbOf(sections)
    const text = current.map((u, i) => (i > 0 && u.lead ? `${u.lead}\n\n${u.text}` : u.text)).join('\n\n')
    const key = breadcrumb.join('\u0000')
    const ordinal = ordinals.get(key) ?? 0
    ordinals.set(key, ordinal + 1)
    const pages = current.map((u) => u.page).filter((p): p is number => typeof p === 'number')
    chunks.push({
      breadcrumb,
      ordinal,
      text,
      pageStart: pages.length ? Math.min(...pages) : null,
      pageEnd: pages.length ? Math.max(...pages) : null,
      tokenCount: crumbTokensOf(breadcrumb, counter) + counter.count(text),
    })
  }

  for (const unit of units) {
    // A section joining the chunk lengthens its breadcrumb: the budget is counted with the new one.
    const crumbWith = sections.has(unit.section) ? crumbTokens : crumbTokensOf(crumbOf([...sections, unit.section]), counter)
    if (current.length > 0 && crumbWith + currentTokens + unit.tokens > opts.maxTokens) {
      const last = current[current.length - 1]!
      emit()
      start([])
      // Overlap: repeat the end of the previous prose of the same section so a split sentence keeps its context.
      if (last.prose && unit.prose && last.section === unit.section) {
        const tail = tailForOverlap(last.text, opts.overlapTokens, counter)
        const tokens = tail ? counter.count(tail) + 1 : 0
        if (tail && crumbTokensOf(crumbOf([unit.section]), counter) + tokens + unit.tokens <= opts.maxTokens)
          start([{ text: tail, page: last.page, prose: true, section: last.section, lead: null, tokens }])
      }
      current.push(unit)
      currentTokens += unit.tokens
      if (!sections.has(unit.section)) {
        sections.add(unit.section)
        crumbTokens = crumbTokensOf(crumbOf(sections), counter)
      }
      continue
    }
    current.push(unit)
    currentTokens += unit.tokens
    sections.add(unit.section)
    crumbTokens = crumbWith
  }
  emit()
}
