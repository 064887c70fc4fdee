import { parse as parseCsvRows } from 'csv-parse/sync'
import type { BlockKind, ParsedDocument, ParserFn } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { renderTable } from './html-walker'
import { isGridTableBorder, isSimpleTableBorder, readGridTable, readSimpleTable, stripInline } from './rst-markup'
import { checkText } from './textcheck'

/**
 * reStructuredText, read by hand: the npm `restructured` parser (0.0.11) has not been maintained
 * for years and does not know much of today's Sphinx markup, and docutils itself is Python. What
 * search needs is the structure, not a full reader:
 *
 * - Section titles: a title line with an underline (and optionally a matching overline) of one
 *   repeated punctuation character at least as long as the title. Levels are not fixed per
 *   character: the first adornment style met is level 1, the next new one level 2, and so on;
 *   overline+underline of a character is another style than underline alone of the same one.
 * - Literal blocks (a paragraph ending in `::` followed by an indented block, `>>>` doctest
 *   blocks, the code-block / code / sourcecode / math directives) are code blocks.
 * - Bullet and enumerated lists are list blocks (nested lists indented).
 * - Admonitions (note, warning, admonition, topic, ...) keep their content as quotes; block
 *   quotes are quotes; other directives keep their content (toctree, image, include, raw, ...
 *   have none worth reading: dropped, and include is never read).
 * - Comments, hyperlink targets (`.. _label:`) and substitution definitions are dropped.
 * - A field list at the top (`:version: 1.2`, before any text but titles) is the document's
 *   metadata (`version` there sets the document's version), and stays text: docutils shows it.
 * - Inline markup is stripped to its text (rst-markup.ts).
 * - Simple and grid tables, csv-table and list-table become Markdown tables (a cell spanning
 *   columns of a grid table is split at the column edges; its words are all kept).
 */

interface Out {
  add(kind: BlockKind, text: string): void
  /** Only at the top level: sections cannot open inside indented content. */
  heading?(level: number, text: string): void
}

interface State {
  /** Adornment styles in the order met: index + 1 is the level. */
  styles: string[]
  meta: Record<string, unknown>
  /** Nothing but titles and comments seen yet: a field list here is the document's metadata. */
  top: boolean
  /** How many block quotes, list items and directives the current lines are inside. */
  depth: number
}

/**
 * Nesting (quotes in list items in directives ...) deeper than this is read as flat text: each
 * level re-reads the lines inside it, so a file indenting every line one step deeper than the one
 * before would otherwise cost time quadratic in its length (and the stack as deep as its lines).
 */
const MAX_DEPTH = 24

const VCS_KEYWORD = /^\$[A-Za-z]+(?::[^$]*)?\$$/

const ADORNMENT = /^([!-/:-@[-`{-~])\1+ *$/
const BULLET = /^([-*+•‣⁃])(?: +(.*))?$/
const ENUM = /^(\(?)(\d+|#|[a-zA-Z]|[ivxlcdm]+|[IVXLCDM]+)([.)]) +(.*)$/
const FIELD = /^:([^:\s][^:]*):(?: +(.*))?$/
const DIRECTIVE = /^([\w][\w:+.-]*)::(?: +(.*))?$/
const OPTION = /^:[\w-][\w\s-]*:(?: .*)?$/

const CODE = new Set(['code-block', 'code', 'sourcecode', 'math', 'highlight-code', 'parsed-literal'])
/** Admonitions and the label docutils (and Sphinx) shows before their text. */
const ADMONITIONS = new Map<string, string>([
  ...'note warning tip important caution danger attention hint error todo'
    .split(' ')
    .map((n): [string, string] => [n, n[0]!.toUpperCase() + n.slice(1)]),
  ['seealso', 'See also'],
  ['versionadded', 'New in version'],
  ['versionchanged', 'Changed in version'],
  ['deprecated', 'Deprecated since version'],
])
const TITLED = new Set(['admonition', 'topic', 'sidebar', 'rubric', 'table', 'figure', 'tab', 'contents'])
const DROPPED = new Set(
  'image toctree include literalinclude raw index meta highlight sectnum autosummary default-role role title class target-notes footer header'.split(
    ' ',
  ),
)

const blank = (l: string | undefined) => l === undefined || l.trim() === ''
const indentOf = (l: string) => l.length - l.trimStart().length
const isAdornment = (l: string | undefined) => l !== undefined && ADORNMENT.test(l) && l.trim() !== '..' && l.trim() !== '::'
const width = (s: string) => [...s.trim()].length

function expandTabs(line: string): string {
  if (!line.includes('\t')) return line
  let out = ''
  for (const ch of line) out += ch === '\t' ? ' '.repeat(8 - (out.length % 8)) : ch
  return out
}

/** Lines with their common indentation removed (blank lines stay blank). */
function dedent(lines: string[]): string[] {
  const ind = Math.min(...lines.filter((l) => !blank(l)).map(indentOf))
  return Number.isFinite(ind) ? lines.map((l) => (blank(l) ? '' : l.slice(ind))) : lines.map(() => '')
}

/** Index after the lines from `from` that are blank or indented at least `min`, trailing blank lines not included. */
function indentedEnd(lines: string[], from: number, min: number): number {
  let j = from
  while (j < lines.length && (blank(lines[j]) || indentOf(lines[j]!) >= min)) j++
  while (j > from && blank(lines[j - 1])) j--
  return j
}

function titleAt(lines: string[], i: number): { style: string; text: string; next: number } | null {
  if (i > 0 && !blank(lines[i - 1])) return null
  const [a, b, c] = [lines[i]!, lines[i + 1], lines[i + 2]]
  if (isAdornment(a)) {
    const ch = a[0]!
    if (b === undefined || blank(b) || isAdornment(b) || !isAdornment(c) || c![0] !== ch) return null
    if (width(b) > width(a) || width(c!) !== width(a)) return null
    return { style: `over${ch}`, text: b.trim(), next: i + 3 }
  }
  if (indentOf(a) > 0 || !isAdornment(b) || width(b!) < width(a)) return null
  return { style: `under${b![0]!}`, text: a.trim(), next: i + 2 }
}

/** Options of a directive (`:linenos:`, `:caption: x`) at the start of its body: left out. */
function withoutOptions(body: string[]): string[] {
  let k = 0
  while (k < body.length && OPTION.test(body[k]!)) k++
  return body.slice(k)
}

function collector(): Out & { blocks: { kind: BlockKind; text: string }[] } {
  const blocks: { kind: BlockKind; text: string }[] = []
  return { blocks, add: (kind, text) => void (text.trim() && blocks.push({ kind, text })) }
}

/** Quotes: paragraphs inside become quote blocks; lists, code and tables stay what they are. */
const quoting = (out: Out): Out => ({ add: (kind, text) => out.add(kind === 'paragraph' ? 'quote' : kind, text) })

function emitTable(rows: string[][], out: Out): void {
  const t = renderTable(rows)
  if (t) out.add('table', t)
}

function listTable(body: string[]): string[][] {
  const rows: string[][] = []
  for (const line of body) {
    const row = /^[-*+] +- +(.*)$/.exec(line) ?? /^[-*+] *$/.exec(line)
    const cell = /^ +[-*+](?: +(.*))?$/.exec(line)
    if (row && !/^ /.test(line)) rows.push(row[1] !== undefined ? [row[1]] : [])
    else if (cell && rows.length > 0) rows[rows.length - 1]!.push(cell[1] ?? '')
    else if (!blank(line) && rows.length > 0) {
      const r = rows[rows.length - 1]!
      if (r.length > 0) r[r.length - 1] = `${r[r.length - 1]} ${line.trim()}`
    }
  }
  return rows.map((r) => r.map((c) => stripInline(c.trim())))
}

function csvTable(args: string[], body: string[]): string[][] {
  const header = args.find((l) => l.startsWith(':header:'))?.slice(':header:'.length)
  const parse = (s: string) =>
    parseCsvRows(s, { relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true }) as string[][]
  try {
    return [...(header ? parse(header) : []), ...parse(body.join('\n'))].map((r) => r.map(stripInline))
  } catch {
    // A csv-table the CSV reader cannot split still has its words: one cell per line.
    return body.filter((l) => !blank(l)).map((l) => [stripInline(l)])
  }
}

function directive(name: string, arg: string, rawBody: string[], out: Out, st: State, quote: boolean): void {
  if (DROPPED.has(name)) return
  const body = withoutOptions(rawBody)
  if (CODE.has(name)) {
    const code = dedent(body)
      .join('\n')
      .replace(/^\n+|\s+$/g, '')
    if (code) out.add('code', code)
    return
  }
  if (name === 'list-table' || name === 'csv-table') {
    if (arg) out.add('paragraph', stripInline(arg))
    emitTable(name === 'list-table' ? listTable(dedent(body)) : csvTable(rawBody, body), out)
    return
  }
  const label = ADMONITIONS.get(name)
  if (label) {
    readBlocks([`${label}: ${arg}`.trim(), ...body], quoting(out), st, true)
    return
  }
  if (name === 'contents') {
    // The table of contents itself is made by docutils from the titles; only its own title is text.
    if (arg) out.add('paragraph', stripInline(arg))
    return
  }
  const target = quote || name === 'admonition' || name === 'topic' || name === 'sidebar' ? quoting(out) : out
  if (TITLED.has(name) && arg && name !== 'figure') target.add('paragraph', stripInline(arg))
  const subtitle = rawBody.find((l) => l.startsWith(':subtitle:'))
  if (name === 'sidebar' && subtitle) target.add('paragraph', stripInline(subtitle.slice(':subtitle:'.length).trim()))
  readBlocks(body, target, st, quote)
}

/** An explicit markup block (`.. ` ...) at lines[i]; returns the index after it. */
function explicit(lines: string[], i: number, rest: string, out: Out, st: State, quote: boolean): number {
  // `..` alone before a blank line is an empty comment: it ends there (it separates a block quote from what precedes it).
  if (rest === '' && blank(lines[i + 1])) return i + 1
  const end = indentedEnd(lines, i + 1, 1)
  const body = dedent(lines.slice(i + 1, end))
  const d = DIRECTIVE.exec(rest)
  if (d) directive(d[1]!.toLowerCase(), d[2] ?? '', body, out, st, quote)
  else {
    const note = /^\[([^\]]+)\](?: +(.*))?$/.exec(rest)
    // Footnotes and citations are text the reader sees; targets, substitution definitions and comments are not.
    if (note) {
      // With its label, as references show it ([1], [CIT2002]); an auto-numbered one's number is not known here.
      const label = /^[#*]/.test(note[1]!) ? '' : `[${note[1]}] `
      readBlocks([`${label}${note[2] ?? ''}`.trim(), ...body], out, st, quote)
    }
  }
  return end
}

interface Marker {
  type: string
  label: string
  indent: number
  text: string
}

function markerOf(line: string): Marker | null {
  const b = BULLET.exec(line)
  if (b) return { type: b[1]!, label: '- ', indent: b[2] === undefined ? 2 : line.length - b[2].length, text: b[2] ?? '' }
  const e = ENUM.exec(line)
  if (e && (e[1] === '' || e[3] === ')')) {
    return {
      type: `${e[1]}${e[2] === '#' ? '#' : ''}${e[3]}`,
      label: e[2] === '#' ? '#' : `${e[2]}. `,
      indent: line.length - e[4]!.length,
      text: e[4]!,
    }
  }
  return null
}

/** A bullet or enumerated list at lines[i]: one list block; returns the index after it. */
function readList(lines: string[], i: number, first: Marker, out: Out, st: State): number {
  const rendered: string[] = []
  let n = i
  let number = 1
  while (n < lines.length) {
    if (blank(lines[n])) {
      let j = n
      while (blank(lines[j]) && j < lines.length) j++
      const next = j < lines.length && indentOf(lines[j]!) === 0 ? markerOf(lines[j]!) : null
      if (next?.type !== first.type) break
      n = j
      continue
    }
    const m = indentOf(lines[n]!) === 0 ? markerOf(lines[n]!) : null
    if (m?.type !== first.type) break
    const end = indentedEnd(lines, n + 1, m.indent)
    const c = collector()
    readBlocks([m.text, ...lines.slice(n + 1, end).map((l) => l.slice(m.indent))], c, st, false)
    const label = m.label === '#' ? `${number}. ` : m.label
    number++
    const itemLines = c.blocks.flatMap((blk) =>
      (blk.kind === 'paragraph' || blk.kind === 'quote' ? blk.text.replace(/\s*\n\s*/g, ' ') : blk.text).split('\n'),
    )
    if (itemLines.length === 0) itemLines.push('')
    itemLines.forEach((l, k) => rendered.push(k === 0 ? `${label}${l}`.trimEnd() : `  ${l}`))
    n = end
  }
  out.add('list', rendered.join('\n'))
  return n
}

/** A field list at lines[i] (`:name: value` with indented continuation lines); returns the fields and the index after it. */
function readFields(lines: string[], i: number): { fields: [string, string][]; next: number } {
  const fields: [string, string][] = []
  let n = i
  while (n < lines.length) {
    const f = FIELD.exec(lines[n]!)
    if (!f) break
    const end = indentedEnd(lines, n + 1, 1)
    const value = [f[2] ?? '', ...lines.slice(n + 1, end)].map((l) => l.trim()).join(' ')
    fields.push([f[1]!.trim(), stripInline(value).trim()])
    n = end
    while (blank(lines[n]) && n < lines.length && FIELD.test(lines[n + 1] ?? '')) n++
  }
  return { fields, next: n }
}

function paragraph(lines: string[], i: number, out: Out): number {
  let j = i
  while (j < lines.length && !blank(lines[j])) j++
  const para = lines.slice(i, j)
  if (para.every((l) => isAdornment(l))) return j
  if (para[0]!.startsWith('>>>')) {
    out.add('code', para.join('\n'))
    return j
  }
  let text: string
  if (para.every((l) => /^\|( |$)/.test(l))) text = para.map((l) => stripInline(l.replace(/^\| ?/, ''))).join('\n')
  else text = stripInline(para.map((l) => l.trim()).join(' '))
  if (!/::$/.test(text)) {
    out.add('paragraph', text)
    return j
  }
  // `Paragraph::` is "Paragraph:" and the indented block after it is literal; ` ::` and a lone `::` vanish.
  out.add('paragraph', /(^|\s)::$/.test(text) ? text.replace(/\s*::$/, '') : text.replace(/::$/, ':'))
  let k = j
  while (k < lines.length && blank(lines[k])) k++
  if (k >= lines.length || indentOf(lines[k]!) === 0) return j
  const end = indentedEnd(lines, k, 1)
  out.add('code', dedent(lines.slice(k, end)).join('\n'))
  return end
}

function readBlocks(lines: string[], out: Out, st: State, quote: boolean): void {
  if (st.depth >= MAX_DEPTH) {
    out.add(
      'paragraph',
      stripInline(
        lines
          .map((l) => l.trim())
          .filter(Boolean)
          .join(' '),
      ),
    )
    return
  }
  st.depth++
  try {
    readLines(lines, out, st, quote)
  } finally {
    st.depth--
  }
}

function readLines(lines: string[], out: Out, st: State, quote: boolean): void {
  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    if (blank(line)) {
      i++
      continue
    }
    if (indentOf(line) > 0) {
      const end = indentedEnd(lines, i, 1)
      readBlocks(dedent(lines.slice(i, end)), quoting(out), st, true)
      i = end
      continue
    }
    const title = out.heading ? titleAt(lines, i) : null
    if (title) {
      let level = st.styles.indexOf(title.style) + 1
      if (level === 0) level = st.styles.push(title.style)
      out.heading!(level, stripInline(title.text))
      i = title.next
      continue
    }
    if (isSimpleTableBorder(line) || isGridTableBorder(line)) {
      const { rows, next } = isSimpleTableBorder(line) ? readSimpleTable(lines, i) : readGridTable(lines, i)
      emitTable(rows, out)
      i = Math.max(next, i + 1)
      continue
    }
    const ex = /^\.\.(?: +(.*))?$/.exec(line)
    if (ex) {
      i = explicit(lines, i, (ex[1] ?? '').trim(), out, st, quote)
      continue
    }
    const m = markerOf(line)
    if (m && (m.text !== '' || m.type !== '#')) {
      i = readList(lines, i, m, out, st)
      continue
    }
    if (FIELD.test(line)) {
      const { fields, next } = readFields(lines, i)
      if (st.top && out.heading) {
        for (const [k, v] of fields) st.meta[k.toLowerCase()] = v
        // `:Version: $Revision: 9923 $` is a version-control keyword (docutils' own docs have it), not a release.
        if (typeof st.meta['version'] === 'string' && VCS_KEYWORD.test(st.meta['version'])) delete st.meta['version']
      }
      // Kept as text too: docutils shows the docinfo at the top of the page (unlike hidden front matter).
      out.add('paragraph', fields.map(([k, v]) => `${k}: ${v}`).join('\n'))
      i = next
      continue
    }
    i = paragraph(lines, i, out)
  }
}

const REPLACE = /^\.\. +\|([^|]+)\| +replace:: *(.*)$/

/**
 * `|name|` references of `.. |name| replace:: text` definitions replaced by their text (the
 * definitions themselves are dropped as explicit markup); other substitutions (images) keep their name.
 */
function substitute(lines: string[]): string[] {
  const subs = new Map<string, string>()
  lines.forEach((l, i) => {
    const m = REPLACE.exec(l)
    if (!m) return
    const more = lines.slice(i + 1, indentedEnd(lines, i + 1, 1)).map((x) => x.trim())
    subs.set(m[1]!, [m[2]!, ...more].join(' ').trim())
  })
  if (subs.size === 0) return lines
  return lines.map((l) =>
    REPLACE.test(l) ? l : l.replace(/\|([^|\s](?:[^|]*[^|\s])?)\|(__?)?/g, (all, name: string) => subs.get(name) ?? all),
  )
}

export function parseRstString(text: string): ParsedDocument {
  const lines = substitute(
    text
      .replace(/\r\n?/g, '\n')
      .split('\n')
      .map((l) => expandTabs(l).trimEnd()),
  )
  const b = new DocBuilder()
  const st: State = { styles: [], meta: {}, top: true, depth: 0 }
  const out: Out = {
    add: (kind, t) => {
      st.top = false
      b.add(kind, t)
    },
    heading: (level, t) => b.heading(level, t),
  }
  readBlocks(lines, out, st, false)
  const meta = st.meta
  const title = b.firstH1
  if (title) meta.title = title
  return { title, meta, sections: b.finish() }
}

export const parseRst: ParserFn = guarded('reStructuredText', (bytes) => parseRstString(checkText(bytes)))
