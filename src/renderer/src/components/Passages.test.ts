import { describe, expect, it } from 'vitest'
import { visibleSentences } from './Passages'

const sentence = (text: string, match = false) => ({ text, match })
const passage = (sentences: { text: string; match: boolean }[]) => ({
  n: 1,
  chunk_id: 'c',
  collection: 'x',
  path: 'a.md',
  heading: '',
  version: null,
  kind: null,
  page: null,
  sentences,
})

describe('which sentences of a passage are shown while the model reads', () => {
  const long = (i: number, match = false) => sentence(`Sentence ${i} ${'is long enough to count '.repeat(4)}.`, match)

  it('a short passage is shown whole', () => {
    const p = passage([sentence('One.'), sentence('Two.', true)])
    expect(visibleSentences(p)).toEqual(p.sentences)
  })

  it('a long one shows its matching sentences with a neighbour on each side, and marks what it left out', () => {
    const p = passage(Array.from({ length: 12 }, (_, i) => long(i, i === 6)))
    const out = visibleSentences(p)
    expect(out.map((x) => ('gap' in x ? '…' : x.text.split(' ')[1]))).toEqual(['…', '5', '6', '7', '…'])
  })

  it('at most six sentences, and the start when nothing matches', () => {
    const many = passage(Array.from({ length: 20 }, (_, i) => long(i, i % 2 === 0)))
    expect(visibleSentences(many).filter((x) => !('gap' in x))).toHaveLength(6)
    const none = passage(Array.from({ length: 10 }, (_, i) => long(i)))
    expect(visibleSentences(none).map((x) => ('gap' in x ? '…' : x.text.split(' ')[1]))).toEqual(['0', '1', '2', '…'])
  })
})
