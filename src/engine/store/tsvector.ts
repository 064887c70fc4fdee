/**
 * Reads PostgreSQL's text form of a tsvector (`'lexeme':1A,5 'it''s':3 'tools/call'`) into each
 * lexeme's BM25 term frequency, counted as retrieve/keyword.ts counts it in SQL: one per position,
 * plus one more per breadcrumb position (weight A), and at least 1 (exact tokens have no positions).
 */
export const HEADING_EXTRA = 1

export function parseTsvector(text: string): [string, number][] {
  const out: [string, number][] = []
  let i = 0
  const n = text.length
  while (i < n) {
    while (i < n && text[i] === ' ') i++
    if (i >= n) break
    if (text[i] !== "'") throw new Error(`unexpected tsvector text at ${i}: ${text.slice(i, i + 20)}`)
    i++
    let lexeme = ''
    for (;;) {
      const c = text[i]
      if (c === undefined) throw new Error('unterminated lexeme in tsvector text')
      if (c === "'") {
        if (text[i + 1] === "'") {
          lexeme += "'"
          i += 2
          continue
        }
        i++
        break
      }
      if (c === '\\') {
        lexeme += text[i + 1] ?? ''
        i += 2
        continue
      }
      lexeme += c
      i++
    }
    let positions = 0
    let heading = 0
    if (text[i] === ':') {
      i++
      while (i < n && text[i] !== ' ') {
        const c = text.charCodeAt(i)
        if (c === 44 /* , */) {
          i++
          continue
        }
        while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++
        positions++
        if (text[i] === 'A') heading++
        if (text[i] === 'A' || text[i] === 'B' || text[i] === 'C' || text[i] === 'D') i++
      }
    }
    out.push([lexeme, Math.max(positions + HEADING_EXTRA * heading, 1)])
  }
  return out
}
