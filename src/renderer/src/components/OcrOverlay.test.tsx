// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { SourceView } from '../../../shared/api'
import { drawOcrBoxes, ImageDocument, OcrNotice } from './OcrOverlay'

afterEach(cleanup)

const base: SourceView = {
  chunk_id: 'c1',
  collection: 'scans',
  path: 'note.png',
  format: 'image',
  heading: '',
  version: null,
  page: 1,
  page_end: 1,
  passage: 'Warranty card for the marmot mixer.',
  content: null,
  pdf_base64: null,
  image_base64: 'iVBORw0KGgo=',
  image_type: 'image/png',
  ocr: [
    {
      page: 1,
      confidence: 91,
      low_confidence: false,
      boxes: [
        [0.1, 0.2, 0.3, 0.25],
        [0.32, 0.2, 0.4, 0.25],
      ],
    },
  ],
}

describe('recognised text in the viewer', () => {
  it('draws the passage’s word boxes over the image, as fractions of it, and reports the first as found', () => {
    const onHighlight = vi.fn()
    const { container } = render(<ImageDocument view={base} onHighlight={onHighlight} />)
    const img = screen.getByRole('img', { name: 'The image note.png' })
    expect(img.getAttribute('src')).toBe('data:image/png;base64,iVBORw0KGgo=')
    expect(container.querySelectorAll('.ocr-box')).toHaveLength(0)
    fireEvent.load(img)
    const boxes = [...container.querySelectorAll<HTMLElement>('.ocr-box')]
    expect(boxes.map((b) => [b.style.left, b.style.top, b.style.width, b.style.height])).toEqual([
      ['10%', '20%', '20%', '5%'],
      ['32%', '20%', '8%', '5%'],
    ])
    expect(onHighlight).toHaveBeenLastCalledWith(boxes[0])
  })

  it('says an image the viewer cannot show (TIFF) cannot be shown here, and that the passage was not pinpointed', () => {
    const onHighlight = vi.fn()
    render(<ImageDocument view={{ ...base, image_type: 'image/tiff', path: 'fax.tif' }} onHighlight={onHighlight} />)
    fireEvent.error(screen.getByRole('img'))
    expect(screen.getByText(/cannot be shown here; open it in its app/)).toBeTruthy()
    expect(onHighlight).toHaveBeenLastCalledWith(null)
  })

  it('tells a recognised page from a low-confidence one: "check the page"', () => {
    const { rerender } = render(<OcrNotice view={base} />)
    expect(screen.getByRole('note').textContent).toMatch(/^Recognised text \(this page is a scan\)/)
    rerender(<OcrNotice view={{ ...base, ocr: [{ ...base.ocr![0]!, confidence: 52.4, low_confidence: true }] }} />)
    expect(screen.getByRole('note').textContent).toMatch(
      /Recognised text: check the page\. Text recognition was unsure of page 1 \(confidence 52 of 100\)/,
    )
    rerender(<OcrNotice view={{ ...base, ocr: undefined, format: 'pdf' }} />)
    expect(screen.queryByRole('note')).toBeNull()
  })

  it('adds the boxes to a page host and gives none for a page without them', () => {
    const host = document.createElement('div')
    expect(drawOcrBoxes(host, { page: 2, confidence: 80, low_confidence: false, boxes: [] })).toBeNull()
    expect(host.querySelector('.ocr-layer')!.getAttribute('aria-hidden')).toBe('true')
  })
})
