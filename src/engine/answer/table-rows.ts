import { escapeRegExp } from '../core/regexp'
import { SEPARATOR } from './readable'
import { RESTATED, contentWords, type TextUnit } from './sentences'

/** Table rows as the answer's completions read them (procedure.ts): their first cell, their body, and whether a sentence gives one. */

/** A table row's first cell, as plain text; null when empty. */
export function firstCell(row: string): string | null {
  // Markdown emphasis and code marks are not part of the value ("`-32602`", "**3**").
  const cell = (row.trim().replace(/^\|/, '').split('|')[0] ?? '').replace(/[`*]/g, '').trim()
  return cell.length > 0 ? cell : null
}

/** Whether the text holds the value as a token of its own ("3" in "code 3 means", not in "30"). */
export function holdsToken(text: string, value: string): boolean {
  const v = escapeRegExp(value.toLowerCase())
  return new RegExp(`(?:^|[^\\p{L}\\p{N}_])${v}(?:$|[^\\p{L}\\p{N}_])`, 'u').test(text.toLowerCase())
}

/**
 * The body rows of the table that starts at `units[from]` (its header and separator left out: the
 * app shows copied rows under their table's header, readable.ts); null when it has none.
 */
export function tableRows(units: TextUnit[], from: number): TextUnit[] | null {
  const run: TextUnit[] = []
  for (let k = from; k < units.length && units[k]!.kind === 'table'; k++) run.push(units[k]!)
  const headed = run.length >= 2 && SEPARATOR.test(run[1]!.text)
  const body = (headed ? run.slice(2) : run).filter((u) => !SEPARATOR.test(u.text))
  return body.length > 0 ? body : null
}

/**
 * Whether a sentence gives a table row: it names the row's first cell and holds nearly all the
 * words of its other cells besides those of that name ("method" is in "Mcp-Method", and says
 * nothing of what the row gives for it).
 */
export function givesRow(sentence: string, row: string): boolean {
  const key = firstCell(row)!
  if (!holdsToken(sentence, key)) return false
  const rest = [...new Set(contentWords(row.replace(/^\s*\|[^|]*/, '')))]
  const without = sentence.replace(new RegExp(escapeRegExp(key), 'gi'), ' ')
  const have = new Set(contentWords(without))
  return rest.length === 0 || rest.filter((w) => have.has(w)).length / rest.length >= RESTATED
}
