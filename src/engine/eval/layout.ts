/**
 * Lines of a rendered answer that a person cannot read as written, found without a judge. Each
 * kind was seen in the real model's held-out answers (answer/readable.ts, answer/markers.ts):
 *
 * - `table_row_alone`: table rows with no separator row under a header (Markdown draws no table;
 *   a row is a string of pipes, and a header alone names columns of nothing);
 * - `numbered_out_of_list`: an item numbered N > 1 that is not in a run of items in sequence
 *   ("3. MUST use the canonical URI…" alone after prose; a procedure's remaining steps 3 to 6 are a run);
 * - `run_together`: a sentence that ends without a full stop, its markers, then the next sentence
 *   on the same line ("(served over HTTPS) [1] The page presents…");
 * - `lead_in_to_nothing`: a line ending in a colon that no list, table or code follows, or a
 *   colon after markers that goes on with more prose ("is required [1]: Changes since…");
 * - `code_unclosed`: a code block whose closing fence is glued to its last line ("…  }```") or
 *   missing: Markdown shows everything after it as code;
 * - `list_inline`: a list run into one line after its lead-in's colon ("…includes: - name: … -
 *   title: … - description: …").
 */
import { BLOCK_START, INLINE_LIST } from '../answer/markers'
import { SEPARATOR } from '../answer/readable'
import { LIST_MARKER } from '../answer/sentences'

export type LayoutDefect =
  'table_row_alone' | 'numbered_out_of_list' | 'run_together' | 'lead_in_to_nothing' | 'code_unclosed' | 'list_inline'

const MARKERS = String.raw`(?:\s*\[\d+\])+`
const ROW = /^\s*\|.*\|\s*(?:\[\d+\]\s*)*$/
const NUMBERED = /^\s*(\d{1,3})[.)]\s/
const RUN_TOGETHER = new RegExp(String.raw`[^\s.!?:;]${MARKERS}\s+[A-Z0-9]`)
const COLON_THEN_PROSE = new RegExp(String.raw`${MARKERS}:\s+[A-Z]`)

export function layoutDefects(answer: string): LayoutDefect[] {
  const found = new Set<LayoutDefect>()
  const lines = answer.split('\n')
  let inCode = false
  let lastNumber = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (/\S```\s*$/.test(line) && !/^\s*```[\w+-]*\s*$/.test(line)) found.add('code_unclosed')
    if (/^\s*```/.test(line)) {
      inCode = !inCode
      continue
    }
    if (inCode) continue
    if (ROW.test(line) && !SEPARATOR.test(line)) {
      // A table is a row, then a separator: a row that neither has one under it nor follows one is alone.
      const start = (() => {
        let k = i
        while (k > 0 && ROW.test(lines[k - 1]!)) k--
        return k
      })()
      if (!SEPARATOR.test(lines[start + 1] ?? '')) found.add('table_row_alone')
    }
    const n = NUMBERED.exec(line)
    if (n) {
      const value = Number(n[1])
      // A run of items in sequence (a procedure's remaining steps, "3." then "4.") reads as a list;
      // a lone "3." does not.
      const nextItem = lines.slice(i + 1).find((l) => l.trim() && !/^\s+\S/.test(l))
      const continues = nextItem !== undefined && Number(NUMBERED.exec(nextItem)?.[1]) === value + 1
      if (value > 1 && value !== lastNumber + 1 && !continues) found.add('numbered_out_of_list')
      lastNumber = value
    } else if (!/^\s+\S/.test(line) && line.trim()) lastNumber = 0
    if (!ROW.test(line) && RUN_TOGETHER.test(line)) found.add('run_together')
    if (COLON_THEN_PROSE.test(line)) found.add('lead_in_to_nothing')
    if (!BLOCK_START.test(line.trimStart()) && INLINE_LIST.test(line) && (line.match(/\s-\s+\S/g)?.length ?? 0) >= 3)
      found.add('list_inline')
    if (/:\s*$/.test(line)) {
      const next = lines.slice(i + 1).find((l) => l.trim())
      const indent = (l: string) => /^\s*/.exec(l)![0].length
      // An item that introduces items needs them nested under it: the next item at its own level is not one of them.
      const sibling = next !== undefined && LIST_MARKER.test(line) && LIST_MARKER.test(next) && indent(next) <= indent(line)
      if (next === undefined || !BLOCK_START.test(next.trimStart()) || sibling) found.add('lead_in_to_nothing')
    }
  }
  if (inCode) found.add('code_unclosed')
  return [...found]
}
