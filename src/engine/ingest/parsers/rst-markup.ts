/**
 * reStructuredText's inline markup and tables (rst.ts reads the blocks): markup is stripped to the
 * words a reader sees, tables become rows for renderTable.
 */

/**
 * (Every span is bounded, here to 4,000 characters, so that a paragraph of openers without closers
 * costs linear time, not quadratic.)
 *
 * Text without inline markup: ``literal`` -> literal, *emphasis* / **strong** -> their text,
 * `text <url>`_ -> text, :role:`text` (and :ref:`Title <label>`) -> text, reference_ -> reference,
 * |substitution| -> its name (rst.ts puts replace:: texts in first), footnote and citation
 * references -> their label ([1]_ -> [1], [#]_ dropped), backslash escapes
 * resolved. Literals are cut out first, so nothing inside them is touched.
 */
export function stripInline(s: string): string {
  const parts = s.split(/``([^]{1,4000}?)``/)
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
      .replace(
        /:(pep|rfc)(?:-reference)?:`([^`]{0,4000})`/gi,
        (_, role: string, t: string) => `${role.toUpperCase()} ${titleOf(t)}`,
      )
      .replace(/:[\w.+:-]{1,100}:`([^`]{0,4000})`/g, (_, t: string) => titleOf(t))
      .replace(/`([^`]{0,4000})`:[\w.+:-]{1,100}:/g, (_, t: string) => titleOf(t))
      .replace(/`([^`]{1,4000})`__?/g, (_, t: string) => titleOf(t))
      .replace(/`([^`]{1,4000})`/g, (_, t: string) => titleOf(t))
      .replace(/\*\*(\S(?:[^]{0,4000}?\S)?)\*\*/g, '$1')
      .replace(/(^|[\s(['"-])\*(\S(?:[^]{0,4000}?\S)?)\*(?=$|[\s)\]'".,;:!?-])/g, '$1$2')
      // Footnote and citation references show their label ([1], [CIT2002]); an auto-numbered one's number is not known here.
      .replace(/(\s*)\[#([\w-]*)\]_/g, (_, sp: string, l: string) => (l ? `${sp}[${l}]` : ''))
      .replace(/\[(\*|\d+|[\w.-]+)\]_/g, '[$1]')
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
 * after it. Columns start where the runs of `=` of the top border start (text between two runs
 * belongs to the column on its left, the last column is open to the end of the line); a line whose
 * first column is blank continues the row above; a middle border ends the header. A column-span
 * underline (`------------  ------`) re-splits the row above it by its runs of `-`: a spanning
 * cell's text goes to the first column it spans.
 */
export function readSimpleTable(lines: string[], start: number): { rows: string[][]; next: number } {
  const starts = [...lines[start]!.matchAll(/=+/g)].map((m) => m.index)
  const split = (line: string, at: number[]) => {
    const cells = starts.map(() => '')
    let col = 0
    at.forEach((a, k) => {
      while (col + 1 < starts.length && starts[col + 1]! <= a) col++
      const text = line.slice(k === 0 ? 0 : a, k === at.length - 1 ? undefined : at[k + 1]).trim()
      cells[col] = [cells[col], text].filter(Boolean).join(' ')
    })
    return cells
  }
  const rows: string[][] = []
  let lastRaw: string | null = null
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
    if (line.trim() === '') continue
    if (/^[-\s]+$/.test(line)) {
      if (lastRaw !== null && rows.length > 0) {
        rows[rows.length - 1] = split(
          lastRaw,
          [...line.matchAll(/-+/g)].map((m) => m.index),
        )
        lastRaw = null
      }
      continue
    }
    const cells = split(line, starts)
    const prev = rows[rows.length - 1]
    if (prev && cells[0] === '') {
      cells.forEach((c, k) => (prev[k] = [prev[k], c].filter(Boolean).join(' ')))
      lastRaw = null
    } else {
      rows.push(cells)
      lastRaw = line
    }
  }
  return { rows: rows.map((r) => r.map(stripInline)), next: i }
}

/**
 * A grid table starting at lines[start]: rows between the full `+---+` borders. A line is split at
 * the column edges of the top border where it has a `|` or `+`, so a cell spanning columns is one
 * piece of text, given to the first column it spans; pieces of partial borders (a cell spanning
 * rows) are left out, and the text of a spanning row stays in the row it started in.
 */
export function readGridTable(lines: string[], start: number): { rows: string[][]; next: number } {
  const border = lines[start]!
  const edges: number[] = []
  for (let k = 0; k < border.length; k++) if (border[k] === '+') edges.push(k)
  const rows: string[][] = []
  let current: string[][] | null = null
  const flush = () => {
    if (current) rows.push(current.map((c) => stripInline(c.join(' ').replace(/\s+/g, ' ').trim())))
    current = null
  }
  let i = start + 1
  for (; i < lines.length; i++) {
    const line = lines[i]!.trimEnd()
    if (!line.startsWith('+') && !line.startsWith('|')) break
    if (GRID_BORDER.test(line)) {
      flush()
      continue
    }
    const cells: string[][] = (current ??= edges.slice(1).map(() => []))
    const cuts = edges.map((e, k): [number, number] => [e, k]).filter(([e]) => line[e] === '|' || line[e] === '+')
    for (let k = 0; k + 1 < cuts.length; k++) {
      const piece = line.slice(cuts[k]![0] + 1, cuts[k + 1]![0])
      if (/^[-=]+$/.test(piece)) continue
      cells[cuts[k]![1]]?.push(piece.trim())
    }
  }
  flush()
  return { rows, next: i }
}
