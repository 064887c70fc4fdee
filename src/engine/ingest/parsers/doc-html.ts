import type { ParsedBlock, ParsedDocument } from '../types'

/**
 * A parsed document as plain HTML for the source viewer, for formats whose own rendering the app
 * cannot show (PPTX, ODT, ODS, XLSX): headings h1-h6, paragraphs, lists, tables, quotes and
 * code. Every piece of text is escaped here; the renderer sanitizes the result as every HTML source.
 */

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

/** A Markdown table row's cells: the renderer joins cells with " | " and escapes a cell's pipes as "\|". */
function cells(line: string): string[] {
  const inner = line.replace(/^\|\s?/, '').replace(/\s?\|$/, '')
  return inner.split(' | ').map((c) => c.replace(/\\\|/g, '|').trim())
}

function table(text: string): string {
  const lines = text.split('\n').filter((l) => l.startsWith('|'))
  const isSeparator = (l: string) => /^\|(\s*:?-{3,}:?\s*\|)+$/.test(l)
  const out: string[] = ['<table>']
  let head = true
  for (const line of lines) {
    if (isSeparator(line)) continue
    const tag = head ? 'th' : 'td'
    out.push(
      `<tr>${cells(line)
        .map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`)
        .join('')}</tr>`,
    )
    head = false
  }
  out.push('</table>')
  return out.join('')
}

/** A list block's "- " / "1. " lines, nested by their two-space indentation. */
function list(text: string): string {
  const out: string[] = []
  let depth = -1
  for (const line of text.split('\n')) {
    const m = /^( *)(?:[-*+]|\d+[.)]) (.*)$/.exec(line)
    if (!m) {
      // A continuation line of the item above.
      if (depth >= 0) out.push(` ${escapeHtml(line.trim())}`)
      continue
    }
    const d = Math.floor(m[1]!.length / 2)
    if (d > depth) {
      for (; depth < d; depth++) out.push('<ul><li>')
    } else {
      for (; depth > d; depth--) out.push('</li></ul>')
      out.push('</li><li>')
    }
    out.push(escapeHtml(m[2]!))
  }
  for (; depth >= 0; depth--) out.push('</li></ul>')
  return out.join('')
}

function block(b: ParsedBlock): string {
  switch (b.kind) {
    case 'table':
      return table(b.text)
    case 'list':
      return list(b.text)
    case 'code':
      return `<pre><code>${escapeHtml(b.text)}</code></pre>`
    case 'quote':
      return `<blockquote><p>${escapeHtml(b.text)}</p></blockquote>`
    default:
      return b.text
        .split(/\n{2,}/)
        .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
        .join('')
  }
}

export function documentHtml(doc: ParsedDocument): string {
  const out: string[] = []
  let prev: string[] = []
  for (const s of doc.sections) {
    // Headings not already open: a section's ancestors have no section of their own when they
    // hold no text, so they are written here, one level up each.
    let common = 0
    while (common < prev.length && common < s.headings.length && prev[common] === s.headings[common]) common++
    // Each section starts at a heading: one whose breadcrumb equals the last one's repeats its heading (two slides with one title).
    if (common === s.headings.length && common > 0) common--
    for (let i = common; i < s.headings.length; i++) {
      const level = Math.min(6, Math.max(1, s.level - (s.headings.length - 1 - i)))
      out.push(`<h${level}>${escapeHtml(s.headings[i]!)}</h${level}>`)
    }
    prev = s.headings
    for (const b of s.blocks) out.push(block(b))
  }
  return out.join('\n')
}
