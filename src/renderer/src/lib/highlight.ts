/**
 * Finds a stored passage inside a rendered document and marks it. The stored chunk text and the
 * rendered DOM differ in whitespace, Markdown syntax (fences, pipes, emphasis) and list markers, so
 * both sides are reduced to letters and digits before matching; positions map back to text nodes.
 * The passage's first sentences are tried as one run, longest first, so an overlap carried from the
 * previous chunk or a sentence that rendered differently costs only the tail of the highlight.
 */

const KEEP = /[\p{L}\p{N}]/u
const MIN_NEEDLE = 12

/** The letters and digits of a rendered text, each mapped to its text node and offset in it. */
export interface Haystack {
  text: string
  nodes: Text[]
  offsets: number[]
}

/** Collects the haystack of `root`'s text nodes, leaving out those `skip` names. */
export function collectText(root: Node, skip?: (t: Text) => boolean): Haystack {
  const doc = root.ownerDocument ?? (root as Document)
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT)
  let text = ''
  const nodes: Text[] = []
  const offsets: number[] = []
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const t = n as Text
    if (skip?.(t)) continue
    const data = t.data
    for (let i = 0; i < data.length; i++) {
      const ch = data[i]!
      if (!KEEP.test(ch)) continue
      text += ch.toLowerCase()
      nodes.push(t)
      offsets.push(i)
    }
  }
  return { text, nodes, offsets }
}

/** A string reduced to the haystack's alphabet: letters and digits, lower case. */
export function reduce(s: string): string {
  let out = ''
  for (const ch of s) if (KEEP.test(ch)) out += ch.toLowerCase()
  return out
}

/** Splits a stored passage into sentence-like pieces, dropping Markdown-only lines (fences, table rules). */
export function passageSentences(passage: string): string[] {
  const cleaned = passage
    .split('\n')
    .filter((line) => !/^\s*(```|~~~|\|?\s*:?-{3,})/.test(line))
    .join('\n')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
  return cleaned
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => reduce(s).length > 0)
}

/** Where in the reduced document text the longest run of the passage's first sentences occurs. */
export function locatePassage(docText: string, passage: string): { start: number; end: number } | null {
  const sentences = passageSentences(passage).map(reduce)
  for (let i = 0; i < sentences.length; i++) {
    for (let k = sentences.length; k > i; k--) {
      const needle = sentences.slice(i, k).join('')
      if (needle.length < MIN_NEEDLE && !(i === 0 && k === sentences.length)) continue
      if (!needle) continue
      const at = docText.indexOf(needle)
      if (at >= 0) return { start: at, end: at + needle.length }
    }
  }
  return null
}

/** Wraps the passage in `<mark>` elements (one per text node it spans) and returns the first one. */
export function highlightPassage(root: HTMLElement, passage: string, className = 'passage-mark'): HTMLElement | null {
  clearHighlights(root, className)
  const hay = collectText(root)
  const found = locatePassage(hay.text, passage)
  if (!found) return null
  // Group the matched characters by text node, then wrap each node's slice once.
  const { spans, order } = nodeSlices(hay, found.start, found.end, /[.!?:;,)\]"'”’]/)
  const doc = root.ownerDocument
  let first: HTMLElement | null = null
  for (const node of order) {
    const { from, to } = spans.get(node)!
    if (!node.parentNode) continue
    const target = from > 0 ? node.splitText(from) : node
    if (to - from < target.data.length) target.splitText(to - from)
    const mark = doc.createElement('mark')
    mark.className = className
    target.parentNode!.insertBefore(mark, target)
    mark.appendChild(target)
    first ??= mark
  }
  return first
}

export function clearHighlights(root: HTMLElement, className = 'passage-mark'): void {
  for (const mark of Array.from(root.querySelectorAll(`mark.${className}`))) {
    const parent = mark.parentNode
    if (!parent) continue
    while (mark.firstChild) parent.insertBefore(mark.firstChild, mark)
    parent.removeChild(mark)
    parent.normalize()
  }
}

/**
 * The matched characters `start`..`end` of a haystack, grouped by text node: one slice per node.
 * The match is contiguous: every node but the first runs to its end, every node but the last
 * starts at 0, so spaces and punctuation between matched letters are marked too; the last one
 * takes the `closing` punctuation that follows it.
 */
export function nodeSlices(
  hay: Haystack,
  start: number,
  end: number,
  closing: RegExp,
): { spans: Map<Text, { from: number; to: number }>; order: Text[] } {
  const spans = new Map<Text, { from: number; to: number }>()
  const order: Text[] = []
  for (let i = start; i < end; i++) {
    const node = hay.nodes[i]!
    const off = hay.offsets[i]!
    const span = spans.get(node)
    if (span) span.to = off + 1
    else {
      spans.set(node, { from: off, to: off + 1 })
      order.push(node)
    }
  }
  order.forEach((node, i) => {
    const span = spans.get(node)!
    if (i > 0) span.from = 0
    if (i < order.length - 1) span.to = node.data.length
    else while (span.to < node.data.length && closing.test(node.data[span.to]!)) span.to++
  })
  return { spans, order }
}
