import { decodeHTML } from 'entities'

/**
 * Small, bounded scanners for the JSX/HTML bits of Markdown and MDX: tags with attributes
 * (including multi-line tags and `{expression}` values), comments, and `{...}` expressions. Every
 * scan has a length limit, so malformed input cannot make parsing quadratic. Attribute strings
 * are decoded as HTML (`title="Q&amp;A"`), as JSX does.
 */

export type AttrValue = string | true

export interface ScannedTag {
  kind: 'open' | 'close' | 'self' | 'comment' | 'expr' | 'decl'
  /** Tag name as written ('' for fragments, comments and expressions). */
  name: string
  attrs: Record<string, AttrValue>
  start: number
  /** Index just past the construct. */
  end: number
}

const NAME_START = /[A-Za-z]/
const NAME_CHAR = /[\w.:-]/

/** Index just past the `}` matching the `{` at s[i], or -1 (unbalanced or longer than limit). */
export function skipExpression(s: string, i: number, limit = 20_000): number {
  let depth = 0
  const max = Math.min(s.length, i + limit)
  let j = i
  while (j < max) {
    const c = s[j]!
    if (c === '{') depth++
    else if (c === '}') {
      depth--
      if (depth === 0) return j + 1
    } else if (c === '"' || c === "'" || c === '`') {
      const close = s.indexOf(c, j + 1)
      if (close === -1 || close >= max) return -1
      j = close
    } else if (c === '/' && s[j + 1] === '*') {
      const close = s.indexOf('*/', j + 2)
      if (close === -1 || close >= max) return -1
      j = close + 1
    }
    j++
  }
  return -1
}

/** If the `{...}` expression is a plain string or number literal, its value. */
export function literalValue(expr: string): string | null {
  const t = expr.trim()
  const m = /^(["'`])([\s\S]*)\1$/.exec(t)
  if (m && !m[2]!.includes(m[1]!)) return m[2]!
  if (/^-?\d+(\.\d+)?$/.test(t)) return t
  return null
}

/**
 * Scan a tag, comment, declaration or (when allowExpr) `{expression}` starting at s[pos].
 * Returns null when the text there is not one (e.g. "a < b", "<3").
 */
export function scanTag(s: string, pos: number, limit = 4000, allowExpr = false): ScannedTag | null {
  const c0 = s[pos]
  if (c0 === '{') return allowExpr ? scanExpression(s, pos, limit) : null
  if (c0 !== '<') return null
  const max = Math.min(s.length, pos + limit)
  if (s.startsWith('<!--', pos) || s[pos + 1] === '!' || s[pos + 1] === '?') return scanCommentOrDecl(s, pos, max)
  return scanElement(s, pos, max)
}

/** `{...}` at s[pos]: an expression, or a comment when it holds only a block comment. */
function scanExpression(s: string, pos: number, limit: number): ScannedTag | null {
  const end = skipExpression(s, pos, limit)
  if (end === -1) return null
  const inner = s.slice(pos + 1, end - 1).trim()
  return { kind: inner.startsWith('/*') && inner.endsWith('*/') ? 'comment' : 'expr', name: inner, attrs: {}, start: pos, end }
}

/** `<!-- ... -->`, or a declaration or processing instruction (`<!DOCTYPE ...>`, `<?xml ...?>`). */
function scanCommentOrDecl(s: string, pos: number, max: number): ScannedTag | null {
  if (s.startsWith('<!--', pos)) {
    const close = s.indexOf('-->', pos + 4)
    if (close === -1 || close + 3 > max) return null
    return { kind: 'comment', name: '', attrs: {}, start: pos, end: close + 3 }
  }
  if (!/[A-Za-z[]/.test(s[pos + 2] ?? '') && s[pos + 1] === '!') return null
  const close = s.indexOf('>', pos + 2)
  if (close === -1 || close >= max) return null
  return { kind: 'decl', name: '', attrs: {}, start: pos, end: close + 1 }
}

/** An opening, closing or self-closing tag (or a fragment, `<>` / `</>`) at s[pos]. */
function scanElement(s: string, pos: number, max: number): ScannedTag | null {
  let i = pos + 1
  let closing = false
  if (s[i] === '/') {
    closing = true
    i++
  }
  if (s[i] === '>') {
    return { kind: closing ? 'close' : 'open', name: '', attrs: {}, start: pos, end: i + 1 }
  }
  if (!NAME_START.test(s[i] ?? '')) return null
  const nameStart = i
  while (i < max && NAME_CHAR.test(s[i]!)) i++
  const name = s.slice(nameStart, i)
  if (closing) {
    while (i < max && /\s/.test(s[i]!)) i++
    if (s[i] !== '>') return null
    return { kind: 'close', name, attrs: {}, start: pos, end: i + 1 }
  }
  return scanAttributes(s, pos, i, name, max)
}

/** The attributes of the tag named `name` from s[i] on, up to its `>` or `/>`. */
function scanAttributes(s: string, pos: number, i: number, name: string, max: number): ScannedTag | null {
  const attrs: Record<string, AttrValue> = {}
  for (;;) {
    const before = i
    while (i < max && /\s/.test(s[i]!)) i++
    if (i >= max) return null
    const c = s[i]!
    if (c === '>') return { kind: 'open', name, attrs, start: pos, end: i + 1 }
    if (c === '/' && s[i + 1] === '>') return { kind: 'self', name, attrs, start: pos, end: i + 2 }
    if (c === '{') {
      const e = skipExpression(s, i, max - i)
      if (e === -1) return null
      i = e
      continue
    }
    if (i === before) return null // attributes must be separated by whitespace
    const an = i
    while (i < max && !/[\s=/>{}"'<]/.test(s[i]!)) i++
    if (i === an) return null
    const attrName = s.slice(an, i)
    let j = i
    while (j < max && /\s/.test(s[j]!)) j++
    if (s[j] !== '=') {
      attrs[attrName] = true
      continue
    }
    j++
    while (j < max && /\s/.test(s[j]!)) j++
    const value = scanAttrValue(s, j, max)
    if (!value) return null
    if (value.value !== null) attrs[attrName] = value.value
    i = value.end
  }
}

/**
 * An attribute's value at s[j]: quoted, `{expression}` (kept only when it is a literal, else
 * null) or bare. Null when it is malformed.
 */
function scanAttrValue(s: string, j: number, max: number): { value: string | null; end: number } | null {
  const q = s[j]
  if (q === '"' || q === "'") {
    const close = s.indexOf(q, j + 1)
    if (close === -1 || close >= max) return null
    return { value: decodeHTML(s.slice(j + 1, close)), end: close + 1 }
  }
  if (q === '{') {
    const e = skipExpression(s, j, max - j)
    if (e === -1) return null
    return { value: literalValue(s.slice(j + 1, e - 1)), end: e }
  }
  const vs = j
  while (j < max && !/[\s>"'=<`]/.test(s[j]!)) j++
  if (j === vs) return null
  return { value: decodeHTML(s.slice(vs, j)), end: j }
}
