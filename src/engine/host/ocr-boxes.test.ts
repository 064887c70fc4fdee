import { describe, expect, it } from 'vitest'
import type { OcrPageRow } from '../store/passages'
import { passageBoxes } from './ocr-boxes'

const page = (n: number, text: string, confidence = 90): OcrPageRow => ({
  page: n,
  confidence,
  words: text.split(' ').map((t, k) => [t, k / 100, n / 10, (k + 1) / 100, n / 10 + 0.02]),
})

describe('passageBoxes', () => {
  it('finds the passage as a run of the page words, past a misread word, not at an earlier "the"', () => {
    const p = page(1, 'the cat sat. Then the widow she didn’t scold, but only cleaned off the grease')
    const got = passageBoxes('the widow she didn\u2019t scold, but only cleened off the grease', [p])
    const texts = got[0]!.boxes.map((b) => p.words.find((w) => w[1] === b[0])![0])
    expect(texts).toEqual(['the', 'widow', 'she', 'didn’t', 'scold,', 'but', 'only', 'off', 'the', 'grease'])
    expect(got[0]!.low_confidence).toBe(false)
  })

  it('follows a passage over two pages, joins hyphen-mended words, and flags a low-confidence page', () => {
    const a = page(1, 'Intro text. I would be- have a while')
    const b = page(2, 'if I could. Then Miss Watson', 55)
    const got = passageBoxes('I would behave a while if I could.', [a, b])
    // Page 1: I would be- have a while (6 words); page 2: if I could. (3)
    expect(got.map((g) => [g.page, g.boxes.length, g.low_confidence])).toEqual([
      [1, 6, false],
      [2, 3, true],
    ])
  })

  it('gives no boxes on a page that does not hold the passage', () => {
    expect(passageBoxes('nothing of this', [page(3, 'entirely different words here')])[0]!.boxes).toEqual([])
  })
})
