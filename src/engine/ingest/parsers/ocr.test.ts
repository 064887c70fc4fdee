import { describe, expect, it } from 'vitest'
import { scanImage } from './__fixtures__/scan'
import { joinLines, Recogniser } from './ocr'

// Real tesseract.js, with its wasm core and English data from node_modules. This machine (and CI's
// test job) has no internet: that these pass is the check that nothing is fetched.
describe('Recogniser', () => {
  it('reads an image of text: paragraphs, a mean confidence and word boxes as fractions of the image', async () => {
    const img = await scanImage(['The quick brown fox jumps over', 'the lazy dog near the riverbank.'])
    const rec = new Recogniser()
    try {
      const r = await rec.recognise(img.png, img.width, img.height)
      expect(r.paragraphs.map((p) => p.text).join(' ')).toBe('The quick brown fox jumps over the lazy dog near the riverbank.')
      expect(r.confidence).toBeGreaterThan(80)
      expect(r.words.map((w) => w.text)).toContain('riverbank.')
      for (const w of r.words) {
        const [x0, y0, x1, y1] = w.box
        expect(0 <= x0 && x0 < x1 && x1 <= 1 && 0 <= y0 && y0 < y1 && y1 <= 1).toBe(true)
      }
      // "quick" is drawn on the first line, 60 px from the left at 80 px down: its box is there.
      const quick = r.words.find((w) => w.text === 'quick')!
      expect(quick.box[1]).toBeLessThan(80 / img.height)
      expect(quick.box[3]).toBeGreaterThan(60 / img.height)
      expect(quick.box[0]).toBeGreaterThan(60 / img.width)
      // A second image on the same worker.
      const blank = await scanImage([], 200, 100)
      expect(await rec.recognise(blank.png, 200, 100)).toEqual({ paragraphs: [], confidence: 0, words: [] })
    } finally {
      await rec.close()
    }
  }, 60_000)

  it('closes without having started, and twice', async () => {
    const rec = new Recogniser()
    await rec.close()
    await rec.close()
  })

  it('joins lines, mending words hyphenated at a line end', () => {
    expect(joinLines(['I thought I would be-\n', 'have a while', '  ', 'by-and-by, one'])).toBe(
      'I thought I would behave a while by-and-by, one',
    )
    expect(joinLines(['route 66-', 'B'])).toBe('route 66- B')
  })
})
