import { describe, expect, it } from 'vitest'
import { joinWords } from './words'

describe('joinWords', () => {
  it('says a list as a sentence does', () => {
    expect(joinWords([])).toBe('')
    expect(joinWords(['a'])).toBe('a')
    expect(joinWords(['a', 'b'])).toBe('a and b')
    expect(joinWords(['a', 'b', 'c'])).toBe('a, b and c')
    expect(joinWords(['"x"', '"y"'], 'or')).toBe('"x" or "y"')
  })
})
