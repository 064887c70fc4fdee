/**
 * Exact tokens: identifiers that a stemmer or word splitter would break (`tools/call`, `-32602`,
 * `E-04`, `Mcp-Session-Id`, `listChanged`, `x.y_z`). They are extracted by this one function at
 * index time (stored verbatim in chunks.exact_terms) and at query time, so both sides always
 * tokenise them the same way (docs/lessons.md, "Hybrid retrieval and exact tokens").
 */

// Alphanumeric runs joined by / - _ . : (at least one joiner), e.g. tools/call, E-04, 2025-03-26.
// A match starts only where a run starts: without the look-behind every position inside a long run
// of letters would be tried again (quadratic: a 40,000-letter word took 1.9 s, on the engine thread).
const JOINED = /(?<![A-Za-z0-9])[A-Za-z0-9]+(?:[/_.:-][A-Za-z0-9]+)+/g
// Signed integers such as JSON-RPC error codes.
const SIGNED_INT = /(?<![\w-])-\d{2,}\b/g
// camelCase / PascalCase identifiers with an inner capital.
const CAMEL = /\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b/g

const MAX_TERMS = 256

export function extractExactTerms(text: string): string[] {
  const out = new Set<string>()
  const add = (t: string) => {
    const term = t.toLowerCase().replace(/[.:]+$/, '')
    if (term.length >= 2 && term.length <= 100) out.add(term)
  }
  for (const m of text.matchAll(JOINED)) {
    const token = m[0]
    // Sentence punctuation such as "e.g" or version-free decimals like "1.5" are ordinary words.
    if (/^\d+\.\d+$/.test(token)) continue
    add(token)
    // Path-like tokens also match their tails: notifications/tools/list_changed -> tools/list_changed.
    if (token.includes('/')) {
      const parts = token.split('/')
      for (let i = 1; i < parts.length - 1; i++) add(parts.slice(i).join('/'))
    }
    if (out.size >= MAX_TERMS) break
  }
  for (const m of text.matchAll(SIGNED_INT)) add(m[0])
  for (const m of text.matchAll(CAMEL)) add(m[0])
  return [...out].slice(0, MAX_TERMS)
}

/** Words in a text, the document length used by BM25. */
export function countWords(text: string): number {
  const m = text.match(/[\p{L}\p{N}]+/gu)
  return m ? m.length : 0
}
