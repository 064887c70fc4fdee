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
 * one ("… server [2]."), on a line of their own after a closing code fence or list.
 */
export function appendMarkers(answer: string, citations: number[]): string {
  const marks = citations.map((c) => `[${c}]`).join('')
  const text = answer.trimEnd()
  if (endsInBlock(text)) return `${text}\n\n${marks}`
  const m = /([.!?:;])(["')\]]*)$/.exec(text)
  if (m && !/\.\.$/.test(text.slice(0, m.index + 1))) return `${text.slice(0, m.index)} ${marks}${m[1]}${m[2]}`
  return `${text} ${marks}`
}

const BLOCK_START = /^(?:[-*+]|\d{1,3}[.)])\s|^```|^\|/

/** The release label after a list item's marker ("- 2025-03-26: …"), so the item stays an item. */
function labelled(text: string, version: string): string {
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
  for (const s of sentences) {
    const text = s.version && !s.text.includes(s.version) ? labelled(s.text, s.version) : s.text
    const marked = appendMarkers(text, s.citations)
    const block = BLOCK_START.test(s.text)
    // Prose after a list item, a table row or code starts a paragraph of its own: on the next line
    // it would continue the item, or follow a code block's own markers ("[1] This array…") as if
    // they were its own.
    if (!out) out = marked
    else if (afterBlock && !block) out += `\n\n${marked}`
    else out += block || endsInBlock(out) ? `\n${marked}` : ` ${marked}`
    afterBlock = block || endsInBlock(s.text)
  }
  return out
}
