import { describe, expect, it } from 'vitest'
import { parseText, parseTextString } from './text'

describe('text', () => {
  it('makes one intro section with paragraphs split on blank lines', () => {
    const d = parseTextString('First line\nsecond line\n\n\n  \nSecond para\r\n\r\nThird   \n')
    expect(d).toEqual({
      title: null,
      meta: {},
      sections: [
        {
          headings: [],
          level: 0,
          blocks: [
            { kind: 'paragraph', text: 'First line\nsecond line' },
            { kind: 'paragraph', text: 'Second para' },
            { kind: 'paragraph', text: 'Third' },
          ],
        },
      ],
    })
  })

  it('returns no sections for an empty or blank file', () => {
    expect(parseTextString('').sections).toEqual([])
    expect(parseTextString('\n \n\t\n').sections).toEqual([])
  })

  it('parses a 5 MB single-line file', async () => {
    const line = 'word '.repeat(1024 * 1024).trim()
    const t0 = Date.now()
    const d = await parseText(new TextEncoder().encode(line), 'big.txt')
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(d.sections[0]!.blocks).toHaveLength(1)
    expect(d.sections[0]!.blocks[0]!.text.length).toBe(line.length)
  })
})
