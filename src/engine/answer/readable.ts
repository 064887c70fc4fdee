import type { VerificationRepair } from '../../shared/trace'
import type { PromptPassage, ReplySentence } from './prompt'
import { LIST_MARKER, splitUnits, type TextUnit } from './sentences'

/**
 * Lines taken out of a table or a list read as they do in their passage. Seen in the real model's
 * held-out answers (Qwen2.5-Coder 1.5B, docs/benchmarks.md), each verified and each unreadable:
 *
 * - **A table row without its table.** "| mode | string | form, url | The mode of the
 *   elicitation… | [2]" says nothing without the header that names its columns; "|
 *   authorization_response_iss_parameter_supported | iss in response | Client action |" is a header
 *   with no row at all. A run of table rows (copied, or written by the model) that a cited
 *   passage's table holds is shown as that table: its header, its separator and the run's rows, in
 *   Markdown that the app draws as a table. A header row alone is left out, and the trace says so.
 * - **A step whose items were left behind.** "4. If the input consists solely of JSON-RPC responses
 *   or notifications:", copied to finish a procedure, ended in a colon with the sub-items that say
 *   what happens then still in the passage. A copied item that ends in a colon brings the items
 *   nested under it (at most MAX_NESTED), indented under it.
 * - **A numbered item out of its list.** A key sentence copied from the middle of a numbered list
 *   read "3. MUST use the canonical URI…" after two sentences of prose: its number is a bullet
 *   (key-sentences.ts).
 *
 * Only the layout changes: every word shown is the passage's own or the model's checked sentence,
 * and each keeps its citations.
 */

/** At most this many nested items come with a copied item that introduces them. */
export const MAX_NESTED = 6

const ROW = /^\s*\|.*\|\s*$/
/** A Markdown table's separator row (`| --- | :-: |`). */
export const SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$/

const isRow = (text: string) => ROW.test(text) && !text.includes('\n')
const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim().replace(/\s+/g, ' ').toLowerCase())
    .join('|')

interface Table {
  header: string
  separator: string
  body: string[]
}

/** The tables of a passage: runs of table rows whose second row is a separator. */
function tablesOf(text: string): Table[] {
  const out: Table[] = []
  let run: string[] = []
  const flush = () => {
    if (run.length >= 2 && SEPARATOR.test(run[1]!)) out.push({ header: run[0]!, separator: run[1]!, body: run.slice(2) })
    run = []
  }
  for (const u of splitUnits(text)) {
    if (u.kind === 'table') run.push(u.text)
    else flush()
  }
  flush()
  return out
}

/** The table of the cited passages that holds every row of `rows`, with where each row is in it. */
function sourceTable(
  rows: string[],
  cites: number[],
  byN: ReadonlyMap<number, PromptPassage>,
  fullText: (p: PromptPassage) => string,
) {
  for (const n of cites) {
    const p = byN.get(n)
    if (!p) continue
    for (const t of tablesOf(fullText(p))) {
      const header = cells(t.header)
      const body = t.body.map(cells)
      const found = rows.every((r) => SEPARATOR.test(r) || cells(r) === header || body.includes(cells(r)))
      if (found) return t
    }
  }
  return null
}

/** Runs of table rows shown as their tables; a header alone left out. */
export function wholeTables<S extends ReplySentence & { added?: string }>(
  kept: S[],
  byN: ReadonlyMap<number, PromptPassage>,
  fullText: (p: PromptPassage) => string,
  repairs: VerificationRepair[],
): S[] {
  const out: S[] = []
  let headersAlone = 0
  let tables = 0
  for (let i = 0; i < kept.length;) {
    if (!isRow(kept[i]!.text)) {
      out.push(kept[i++]!)
      continue
    }
    let j = i
    while (j < kept.length && isRow(kept[j]!.text)) j++
    const run = kept.slice(i, j)
    i = j
    const cites = [...new Set(run.flatMap((s) => s.cites))]
    const table = sourceTable(
      run.map((s) => s.text),
      cites,
      byN,
      fullText,
    )
    if (!table) {
      out.push(...run)
      continue
    }
    const body = table.body.map(cells)
    const rows = [...new Set(run.map((s) => s.text.trim()).filter((r) => body.includes(cells(r))))]
    if (rows.length === 0) {
      headersAlone++
      continue
    }
    tables++
    // Copied when every row was; else the model's (its rows passed the support check).
    const { added: _added, ...first } = run[0]!
    const added = run.every((s) => s.added) ? run[0]!.added : undefined
    out.push({ ...first, text: [table.header, table.separator, ...rows].join('\n'), cites, ...(added ? { added } : {}) } as S)
  }
  if (tables > 0)
    repairs.push({
      code: 'table_shown_whole',
      message: `${tables === 1 ? 'A table row was' : `${tables} runs of table rows were`} shown under ${tables === 1 ? 'its' : 'their'} table's header, from the passage cited.`,
    })
  if (headersAlone > 0)
    repairs.push({
      code: 'table_shown_whole',
      message: `A table's header row was given without any of its rows; it was left out.`,
    })
  return out
}

/**
 * A copied list item that ends in a colon, with the items nested under it in its passage (the
 * units after it that are indented deeper, up to the next item at its level). Each nested item
 * keeps its own marker, indented under the item so Markdown nests it.
 */
export function withNested(text: string, units: readonly TextUnit[], at: number, source: string): string {
  const unit = units[at]!
  if (unit.kind !== 'list' || !/:\s*$/.test(unit.text)) return unit.text
  const indent = (u: TextUnit) => /^[ \t]*/.exec(source.slice(u.start))![0].length
  const level = indent(unit)
  const nested: string[] = []
  for (let k = at + 1; k < units.length; k++) {
    const u = units[k]!
    if (u.kind !== 'list' || indent(u) <= level) break
    // Only the first level below the item: deeper items are in the source, one click away.
    if (nested.length < MAX_NESTED && indent(u) === indent(units[at + 1]!)) nested.push(u.text)
  }
  if (nested.length === 0) return text
  const pad = ' '.repeat(LIST_MARKER.exec(text)?.[0].length ?? 2)
  return [text, ...nested.map((n) => pad + n)].join('\n')
}
