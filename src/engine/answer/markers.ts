import type { AnswerSentence } from '../../shared/answer'
import { LIST_MARKER } from './sentences'

/**
 * Markers in the rendered answer: every sentence carries its own [n] markers (claim-level
 * citations), so a reader sees which passage says which sentence.
 */

/** Text that ends in a closing code fence or a list item (after a line break): its markers go on a line of their own. */
function endsInBlock(text: string): boolean {
  return /```\s*$/.test(text) || /\n\s*(?:[-*+]|\d+[.)])\s[^\n]*$/.test(text)
}

/**
 * Places citation markers at the end of an answer: before its closing full stop when it ends with
 * one ("… server [2]."), on a line of their own after a closing code fence or list, in the last
 * cell of a table, on the first line of a list item with nested items.
 */
export function appendMarkers(answer: string, citations: number[]): string {
  const marks = citations.map((c) => `[${c}]`).join('')
  const text = answer.trimEnd()
  if (citations.length === 0) return text
  // A table (answer/readable.ts): the markers go in the last row's last cell, where Markdown keeps them.
  const lastLine = text.slice(text.lastIndexOf('\n') + 1)
  if (/^\s*\|.*\|$/.test(lastLine)) return `${text.slice(0, -1).trimEnd()} ${marks} |`
  // A list item with the items nested under it: the markers go on the item's own line.
  const [first, ...nested] = text.split('\n')
  if (nested.length && LIST_MARKER.test(first!) && nested.every((l) => /^\s+(?:[-*+]|\d{1,3}[.)])\s|^\s{2,}\S/.test(l)))
    return [appendMarkers(first!, citations), ...nested].join('\n')
  if (endsInBlock(text)) return `${text}\n\n${marks}`
  const m = /([.!?:;])(["')\]]*)$/.exec(text)
  // Not a mark that is itself the thing named: "dot (.)" or "a colon (:)" ends in brackets around it.
  const named = m && /[([]$/.test(text.slice(0, m.index))
  if (m && !named && !/\.\.$/.test(text.slice(0, m.index + 1))) return `${text.slice(0, m.index)} ${marks}${m[1]}${m[2]}`
  return `${text} ${marks}`
}

/** The start of a block a line can open: a list item, a code fence, a table row. */
export const BLOCK_START = /^(?:[-*+]|\d{1,3}[.)])\s|^```|^\|/

/**
 * The release label after a list item's marker ("- 2025-03-26: …"), so the item stays an item. A
 * code block or a table row carries none: before its fence or its first pipe the label would turn
 * it into a line of text ("2025-11-25: ```"); the sentence that introduces it carries the label.
 */
function labelled(text: string, version: string): string {
  if (/^```|^\|/.test(text)) return text
  const marker = LIST_MARKER.exec(text)?.[0] ?? ''
  return `${marker}${version}: ${text.slice(marker.length)}`
}

/**
 * The answer text from its sentences: each with its markers, prose sentences joined by spaces,
 * list items, table rows and code on lines of their own, and a release label when the sentence
 * carries one ("2025-03-26: …").
 */
export function renderAnswer(sentences: readonly AnswerSentence[]): string {
  let out = ''
  let afterBlock = false
  const shaped = unrun(sentences.map((s) => s.text)).map(unfoldList)
  sentences.forEach((s, i) => {
    const own = shaped[i]!
    const text = s.version && !own.includes(s.version) ? labelled(own, s.version) : own
    const marked = appendMarkers(text, s.citations)
    const block = BLOCK_START.test(own)
    // Prose after a list item, a table row or code starts a paragraph of its own: on the next line
    // it would continue the item, or follow a code block's own markers ("[1] This array…") as if
    // they were its own.
    if (!out) out = marked
    else if (afterBlock && !block) out += `\n\n${marked}`
    else out += block || endsInBlock(out) ? `\n${marked}` : ` ${marked}`
    afterBlock = block || endsInBlock(own)
  })
  return out
}

/**
 * A list the model wrote inside one sentence, its items after the lead-in's colon and each after
 * " - ": "A tool definition includes: - name: Unique identifier for the tool - title: Optional
 * human-readable name… - description: …" (seen with the real 1.5B model, q05 of mcp-docs' fit
 * half). At least three items are shown as the list they are, under the lead-in; the words stay.
 */
export const INLINE_LIST = /^([^\n]*?:)\s+-\s+(\S[^\n]*)$/
const ITEM_SEPARATOR = /\s+-\s+(?=\S)/

function unfoldList(text: string): string {
  if (BLOCK_START.test(text)) return text
  const m = INLINE_LIST.exec(text)
  if (!m) return text
  const items = m[2]!.split(ITEM_SEPARATOR)
  if (items.length < 3) return text
  return [m[1]!, ...items.map((it) => `- ${it.trim()}`)].join('\n')
}

/** A prose sentence that ends without a full stop (or other closing mark): an item or a line, not a sentence. */
const unended = (text: string) => !text.includes('\n') && !BLOCK_START.test(text) && !/[.!?:;]["'’”)\]*_`]*$/.test(text.trim())

/**
 * Sentences that end without a full stop ran into each other when joined by spaces: "… (served over
 * HTTPS) [1] The page presents a branded form [1] Users enter …", the model's copy of a passage's
 * list items, or change-log lines. Two or more in a row are shown as a list; one alone, before
 * more prose, gets its full stop, and so does a lead-in ending in a colon that no list, table or
 * code follows. A numbered item alone, out of its list, is a bullet. Only the layout and
 * punctuation change, never the words.
 */
function unrun(texts: readonly string[]): string[] {
  const out = [...texts]
  for (let i = 0; i < texts.length;) {
    if (!unended(texts[i]!)) {
      i++
      continue
    }
    let j = i
    while (j < texts.length && unended(texts[j]!)) j++
    if (j - i >= 2) for (let k = i; k < j; k++) out[k] = `- ${texts[k]!.trim()}`
    // Not after an opening bracket or a comma ("… request LLM sampling ("): the model broke the sentence there.
    else if (j < texts.length && !BLOCK_START.test(texts[j]!) && /[\p{L}\p{N})\]"'’”`*_]$/u.test(texts[i]!.trimEnd()))
      out[i] = `${texts[i]!.trimEnd()}.`
    i = j
  }
  // A numbered item alone ("5. Clients that no longer need…" after prose): out of its list, its number
  // means nothing. A run in sequence ("3." then "4.", a procedure's remaining steps) keeps its numbers.
  const number = (t: string | undefined) => (t === undefined ? NaN : Number(/^(\d{1,3})[.)]\s/.exec(t)?.[1]))
  out.forEach((t, i) => {
    const n = number(t)
    if (n > 1 && number(out[i - 1]) !== n - 1 && number(out[i + 1]) !== n + 1) out[i] = t.replace(/^\d{1,3}[.)]\s+/, '- ')
  })
  // A lead-in ("… is required:") that nothing follows, or only more prose: it introduces nothing.
  out.forEach((t, i) => {
    const next = out[i + 1]
    if (!t.includes('\n') && /:\s*$/.test(t) && (next === undefined || !BLOCK_START.test(next))) out[i] = t.replace(/:\s*$/, '.')
  })
  return out
}
