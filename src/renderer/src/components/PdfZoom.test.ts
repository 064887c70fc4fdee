import { describe, expect, it } from 'vitest'
import { stepZoom } from './SourceViewer'

// The PDF view itself runs pdf.js, which needs a real browser: e2e/no-models.test.ts zooms a real PDF.
describe('PDF zoom steps', () => {
  it('steps from "fit width" to the next zoom above or below the scale it gave', () => {
    expect(stepZoom('fit', 0.83, 1)).toBe(1)
    expect(stepZoom('fit', 0.83, -1)).toBe(0.75)
    expect(stepZoom('fit', 1, 1)).toBe(1.25)
    expect(stepZoom(1.25, 0.83, -1)).toBe(1)
  })

  it('stays at the ends', () => {
    expect(stepZoom(3, 1, 1)).toBe(3)
    expect(stepZoom(0.5, 1, -1)).toBe(0.5)
  })
})
