import { describe, expect, it } from 'vitest'
import { extractExactTerms } from './exact-terms'

describe('extractExactTerms', () => {
  it('keeps method names, error codes, headers and identifiers whole', () => {
    const terms = extractExactTerms('Call tools/call; on error -32602 or E-04 send Mcp-Session-Id with listChanged and x.y_z.')
    expect(terms).toEqual(expect.arrayContaining(['tools/call', '-32602', 'e-04', 'mcp-session-id', 'listchanged', 'x.y_z']))
  })
  it('adds the tails of path-like tokens so partial method names match', () => {
    expect(extractExactTerms('notifications/tools/list_changed')).toEqual(
      expect.arrayContaining(['notifications/tools/list_changed', 'tools/list_changed']),
    )
  })
  it('extracts the same terms from a query as from the text it should match', () => {
    const doc = extractExactTerms('The server returns error code -32602 for tools/call.')
    for (const t of extractExactTerms('what does -32602 mean in tools/call')) expect(doc).toContain(t)
  })
  it('ignores plain decimals and ordinary words', () => {
    expect(extractExactTerms('version 1.5 is the plain text here')).toEqual([])
  })
})

describe('extractExactTerms on hostile text', () => {
  // A PDF title of megabytes, or a pasted blob, goes through the joined-token pattern. Unanchored, it
  // tried every position of a long letter run again: 40,000 letters took 0.8 s under tsx, 80,000 took
  // 3.3 s (quadratic). Vitest's workers happen to run the old pattern fast, so this test checks what
  // such text yields, not the time; the time is measured by hand: npx tsx -e on the pattern.
  it('reads a million-letter word and the names around it', () => {
    const blob = 'a'.repeat(1_000_000)
    expect(extractExactTerms(`${blob} tools/call ${blob}x-y`)).toEqual(['tools/call'])
  }, 60_000)
})
