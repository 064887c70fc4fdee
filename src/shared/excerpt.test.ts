import { describe, expect, it } from 'vitest'
import { excerpt, markTerms, queryTerms } from './excerpt'

const marked = (text: string, query: string) =>
  markTerms(text, queryTerms(query))
    .filter((s) => s.hit)
    .map((s) => s.text)

describe('queryTerms', () => {
  it('drops stop words and keeps identifiers whole', () => {
    expect(queryTerms('How do I call tools/call with -32602?')).toEqual(['call', 'tools/call', '-32602'])
  })
})

describe('markTerms', () => {
  it('marks words sharing a stem with a query word, case-insensitively', () => {
    expect(marked('The Tool lists tools; retrying a request retries.', 'how does a tool retry')).toEqual([
      'Tool',
      'tools',
      'retrying',
      'retries',
    ])
  })

  it('does not mark stop words or unrelated words', () => {
    expect(marked('It is what it is: a toolbox.', 'what is a tool')).toEqual([])
  })

  it('keeps the text intact', () => {
    const text = 'Servers send notifications/tools/list_changed when tools change.'
    const segs = markTerms(text, queryTerms('list_changed notification'))
    expect(segs.map((s) => s.text).join('')).toBe(text)
    expect(segs.filter((s) => s.hit).map((s) => s.text)).toEqual([])
    expect(marked(text, 'notifications/tools/list_changed')).toEqual(['notifications/tools/list_changed'])
  })

  it('marks nothing without terms', () => {
    expect(markTerms('plain text', [])).toEqual([{ text: 'plain text', hit: false }])
  })
})

describe('excerpt', () => {
  it('returns short passages whole, flattened', () => {
    expect(excerpt('A\n\n```js\ncode\n```', [])).toBe('A code')
  })

  it('centres long passages on the stretch with the query words', () => {
    const text = `${'filler words here '.repeat(40)}the retry limit is two ${'more filler text '.repeat(40)}`
    const e = excerpt(text, queryTerms('retry limit'), 120)
    expect(e).toContain('retry limit is two')
    expect(e.startsWith('…')).toBe(true)
    expect(e.endsWith('…')).toBe(true)
    expect(e.length).toBeLessThanOrEqual(122)
  })
})
