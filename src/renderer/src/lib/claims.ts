import type { AnswerSentence, Citation } from '../../../shared/answer'
import { collectText, nodeSlices, reduce, type Haystack } from './highlight'

/**
 * Claim-level structure on a rendered answer. The answer is rendered from its Markdown (lists,
 * code and emphasis kept); each sentence of `AskResult.sentences` is then found in that rendering
 * and wrapped, so every sentence carries its own marker: its citation chips (added where the text
 * has none for it), its release when the sources span releases, and a note when Docent copied it
 * from the source rather than the model writing it. Text is compared on letters and digits only,
 * as the source viewer finds passages (lib/highlight.ts); a sentence that cannot be found keeps
 * the rendering as it is.
 */

const ELEMENT = 1
const TEXT = 3

/** The letters and digits of the answer outside citation chips, each mapped to its text node. */
function answerText(root: DocumentFragment): Haystack {
  return collectText(root, (t) => !!t.parentElement?.closest('.cite-chip'))
}

/** A sentence as the model wrote it may keep Markdown links and [n] markers: neither is rendered as letters. */
function needleOf(sentence: string): string {
  return reduce(sentence.replace(/\]\([^)]*\)/g, ']').replace(/\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]/g, ''))
}

interface Range {
  index: number
  start: number
  end: number
}

/** Where each sentence is, in order; sentences not found are left out. */
function locate(hay: Haystack, sentences: AnswerSentence[]): Range[] {
  const found: Range[] = []
  let from = 0
  sentences.forEach((s, index) => {
    const needle = needleOf(s.text)
    if (!needle) return
    const at = hay.text.indexOf(needle, from)
    if (at < 0) return
    found.push({ index, start: at, end: at + needle.length })
    from = at + needle.length
  })
  return found
}

/** Wraps one sentence's characters, one span per text node it touches; returns the last span. */
function wrap(hay: Haystack, r: Range, s: AnswerSentence, doc: Document): { first: HTMLElement; last: HTMLElement } | null {
  const { spans: slices, order } = nodeSlices(hay, r.start, r.end, /[.!?:;,)"'”’]/)
  let last: HTMLElement | null = null
  let first: HTMLElement | null = null
  // Back to front, so splitting a node does not move the offsets of the slices still to wrap.
  for (const node of [...order].reverse()) {
    const { from, to } = slices.get(node)!
    const target = from > 0 ? node.splitText(from) : node
    if (to - from < target.data.length) target.splitText(to - from)
    const span = doc.createElement('span')
    span.className = s.added ? 'claim claim-added' : 'claim'
    span.setAttribute('data-claim', String(r.index))
    target.parentNode!.insertBefore(span, target)
    span.appendChild(target)
    last ??= span
    first = span
  }
  return first && last ? { first, last } : null
}

/**
 * The engine writes a sentence's release before it ("2025-03-26: …") when its sources span
 * releases: that prefix becomes the sentence's label, so the release is not said twice.
 */
function labelPrefix(first: HTMLElement, version: string, doc: Document): boolean {
  const before = first.previousSibling
  if (!before || before.nodeType !== TEXT) return false
  const text = before as Text
  const at = text.data.lastIndexOf(`${version}:`)
  if (at < 0 || text.data.slice(at + version.length + 1).trim() !== '') return false
  const prefix = text.splitText(at)
  const label = tag(doc, 'claim-version', version, `From the ${version} release`)
  prefix.parentNode!.insertBefore(label, prefix)
  // Keep the space between the label and the sentence.
  prefix.data = prefix.data.slice(version.length + 1)
  return true
}

function isBlank(n: Node | null): boolean {
  return !!n && n.nodeType === TEXT && /^\s*$/.test((n as Text).data)
}

const INLINE = new Set(['STRONG', 'EM', 'B', 'I', 'CODE', 'A', 'SPAN', 'DEL', 'MARK', 'SUB', 'SUP'])

function restIsBlank(n: Node): boolean {
  for (let next = n.nextSibling; next; next = next.nextSibling) if (!isBlank(next)) return false
  return true
}

function chip(doc: Document, c: Citation): HTMLElement {
  const el = doc.createElement('button')
  el.type = 'button'
  el.className = 'cite-chip'
  el.setAttribute('data-cite', String(c.n))
  el.setAttribute('aria-label', `Source ${c.n}: ${c.path}${c.heading ? `, ${c.heading}` : ''}`)
  el.title = `${c.path}${c.heading ? ` — ${c.heading}` : ''}`
  el.textContent = String(c.n)
  return el
}

function tag(doc: Document, className: string, text: string, title: string): HTMLElement {
  const el = doc.createElement('span')
  el.className = className
  el.textContent = text
  el.title = title
  return el
}

/** After a sentence: the chips that follow it, the ones it lacks, then its release (unless labelled before) and whether it was copied. */
function addMarkers(
  doc: Document,
  lastSpan: HTMLElement,
  s: AnswerSentence,
  byN: Map<number, Citation>,
  labelled: boolean,
): void {
  let anchor: Node = lastSpan
  // A sentence that ends in emphasis or code: its chips follow the inline element, not the text inside it.
  while (restIsBlank(anchor) && anchor.parentElement && INLINE.has(anchor.parentElement.tagName)) anchor = anchor.parentElement
  const shown = new Set<number>()
  for (let next = anchor.nextSibling; next; next = next.nextSibling) {
    if (next.nodeType === ELEMENT && (next as Element).classList.contains('cite-chip')) {
      shown.add(Number((next as Element).getAttribute('data-cite')))
      anchor = next
    } else if (!isBlank(next)) break
  }
  const extra: Node[] = []
  for (const n of s.citations) {
    const c = byN.get(n)
    if (c && !shown.has(n)) extra.push(chip(doc, c))
  }
  // A chip added after the text itself ("value." then 1) needs the space the model's markers have.
  if (extra.length > 0 && shown.size === 0) extra.unshift(doc.createTextNode(' '))
  if (s.version && !labelled) extra.push(tag(doc, 'claim-version', s.version, `From the ${s.version} release`))
  if (s.added)
    extra.push(
      tag(
        doc,
        'claim-copied',
        'copied from the source',
        `Docent copied this ${{ procedure: 'step', list: 'item', quote: 'sentence' }[s.added]} from the cited source; the model did not write it`,
      ),
    )
  let at = anchor
  for (const el of extra) {
    at.parentNode!.insertBefore(el, at.nextSibling)
    at = el
  }
}

/** Marks every sentence it can find in the rendered answer; returns how many it found. */
export function markSentences(fragment: DocumentFragment, sentences: readonly AnswerSentence[], citations: Citation[]): number {
  if (sentences.length === 0) return 0
  const hay = answerText(fragment)
  const ranges = locate(hay, [...sentences])
  const byN = new Map(citations.map((c) => [c.n, c]))
  const doc = fragment.ownerDocument
  // Back to front: wrapping a sentence splits text nodes that later sentences' offsets point into.
  for (const r of [...ranges].reverse()) {
    const s = sentences[r.index]!
    const spans = wrap(hay, r, s, doc)
    if (!spans) continue
    const labelled = !!s.version && labelPrefix(spans.first, s.version, doc)
    addMarkers(doc, spans.last, s, byN, labelled)
  }
  return ranges.length
}
