/**
 * reStructuredText's inline markup and tables (rst.ts reads the blocks): markup is stripped to the
 * words a reader sees, tables become rows for renderTable.
 */

/**
 * Text without inline markup: ``literal`` -> literal, *emphasis* / **strong** -> their text,
 * `text <url>`_ -> text, :role:`text` (and :ref:`Title <label>`) -> text, reference_ -> reference,
 * |substitution| -> its name, footnote references ([1]_, [#note]_) dropped, backslash escapes
 * resolved. Literals are cut out first, so nothing inside them is touched.
 */
export function stripInline(s: string): string {
  const parts = s.split(/``(.+?)``/s)
  return parts
    .map((p, i) => (i % 2 === 1 ? p : stripOutsideLiterals(p)))
    .join('')
    .replace(/[ \t]{2,}/g, ' ')
}

/** `Title <target>` of a role or reference: the title; a bare `<target>` stays. */
function titleOf(t: string): string {
  const m = /^([\s\S]*?)\s*<([^<>]*)>$/.exec(t.trim())
  const title = m ? m[1]!.trim() || m[2]!.trim() : t.trim()
  // :ref:`~mod.func` shows only the last part; :doc:`!x` suppresses the link: neither mark is text.
  return title.replace(/^[~!]/, '')
}

function stripOutsideLiterals(s: string): string {
  return (
    s
      .replace(/:[\w.+:-]+:`([^`]*)`/g, (_, t: string) => titleOf(t))
      .replace(/`([^`]*)`:[\w.+:-]+:/g, (_, t: string) => titleOf(t))
      .replace(/`([^`]+)`__?/g, (_, t: string) => titleOf(t))
      .replace(/`([^`]+)`/g, (_, t: string) => titleOf(t))
      .replace(/\*\*(\S(?:[\s\S]*?\S)?)\*\*/g, '$1')
      .replace(/(^|[\s(['"-])\*(\S(?:[\s\S]*?\S)?)\*(?=$|[\s)\]'".,;:!?-])/g, '$1$2')
      .replace(/\s*\[(?:#[\w-]*|\*|\d+|[\w.-]+)\]_/g, '')
      .replace(/\|([^|\s](?:[^|]*[^|\s])?)\|(?:__?)?/g, '$1')
      .replace(/\b([A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?)__?(?=$|[\s.,;:!?)\]'"])/g, '$1')
      // `\ ` joins words in the source ("run\ s"); any other escaped character is itself.
      .replace(/\\ /g, '')
      .replace(/\\(.)/g, '$1')
  )
}

const SIMPLE_BORDER = /^=+(?: +=+)+ *$/
const GRID_BORDER = /^\+(?:[-=]+\+)+ *$/

export function isSimpleTableBorder(line: string): boolean {
  return SIMPLE_BORDER.test(line)
}

export function isGridTableBorder(line: string): boolean {
  return GRID_BORDER.test(line)
}

/**
 * A simple table starting at lines[start] (its top border): its rows and the index of the line
 * after it. Columns are the runs of `=` of the top border (the last one open to the end of the
 * line); a line whose first column is blank continues the row above; a middle border ends the
 * header. Column-span underlines (`-----  ----`) are left out.
 */
export function readSimpleTable(lines: string[], start: number): { rows: string[][]; next: number } {
  const border = lines[start]!
  const cols: [number, number][] = []
  for (const m of border.matchAll(/=+/g)) cols.push([m.index, m.index + m[0].length])
  const rows: string[][] = []
  let i = start + 1
  for (; i < lines.length; i++) {
    const line = lines[i]!
    if (SIMPLE_BORDER.test(line)) {
      // The border after the header is followed by more rows; the last one by a blank line or the end.
      const after = lines[i + 1]
      if (after === undefined || after.trim() === '') {
        i++
        break
      }
      continue
    }
    if (line.trim() === '' || /^[-\s]+$/.test(line)) continue
    const cells = cols.map(([a, b], k) => line.slice(a, k === cols.length - 1 ? undefined : b).trim())
    const prev = rows[rows.length - 1]
    if (prev && cells[0] === '' && prev.length === cols.length) {
      cells.forEach((c, k) => (prev[k] = [prev[k], c].filter(Boolean).join(' ')))
    } else rows.push(cells)
  }
  return { rows: rows.map((r) => r.slice(0, cols.length).map(stripInline)), next: i }
}

/**
 * A grid table starting at lines[start]: rows between the `+---+` separators, each cell the text
 * of its column's segments (between the `+` positions of the top border) joined by spaces. A cell
 * spanning columns comes out split at the column edges: its words are all there, in order.
 */
export function readGridTable(lines: string[], start: number): { rows: string[][]; next: number } {
  const border = lines[start]!
  const edges: number[] = []
  for (let k = 0; k < border.length; k++) if (border[k] === '+') edges.push(k)
  const rows: string[][] = []
  let current: string[][] | null = null
  let i = start + 1
  for (; i < lines.length; i++) {
    const line = lines[i]!.trimEnd()
    if (!line.startsWith('+') && !line.startsWith('|')) break
    if (GRID_BORDER.test(line)) {
      if (current) rows.push(current.map((c) => stripInline(c.join(' ').replace(/\s+/g, ' ').trim())))
      current = null
      continue
    }
    current ??= edges.slice(1).map(() => [])
    for (let k = 0; k + 1 < edges.length; k++) {
      const seg = line.slice(edges[k]! + 1, edges[k + 1]!).replace(/^\|/, '')
      current[k]!.push(seg.replace(/\|$/, '').trim())
    }
  }
  if (current) rows.push(current.map((c) => stripInline(c.join(' ').replace(/\s+/g, ' ').trim())))
  return { rows, next: i }
}
