import { useLayoutEffect, useRef, useState } from 'react'
import type { SourceView } from '../../../shared/api'
import { scrollWithin } from '../lib/scroll'
import { AlertIcon } from './Icons'

/**
 * Recognised text in the viewer. A scanned page has no text layer to highlight the passage in, so
 * the passage's word boxes (SourceView.ocr, fractions of the page) are drawn as highlight
 * rectangles over the page image, at whatever scale it is shown; a page tesseract was unsure of
 * says so, for the person to check the text against the page.
 */

type OcrPage = NonNullable<SourceView['ocr']>[number]

const pct = (f: number) => `${Math.round(f * 100_000) / 1000}%`

/** Adds the word boxes of `page` over `host` (the page's box, positioned); returns the first. */
export function drawOcrBoxes(host: HTMLElement, page: OcrPage): HTMLElement | null {
  const layer = document.createElement('div')
  layer.className = 'ocr-layer'
  layer.setAttribute('aria-hidden', 'true')
  let first: HTMLElement | null = null
  for (const [x0, y0, x1, y1] of page.boxes) {
    const box = document.createElement('div')
    box.className = 'ocr-box'
    box.style.left = pct(x0)
    box.style.top = pct(y0)
    box.style.width = pct(x1 - x0)
    box.style.height = pct(y1 - y0)
    layer.append(box)
    first ??= box
  }
  host.append(layer)
  return first
}

/** The notice for the passage's recognised pages: always that the text was recognised, and which pages to check. */
export function OcrNotice({ view }: { view: SourceView }) {
  const pages = view.ocr ?? []
  if (pages.length === 0) return null
  const low = pages.filter((p) => p.low_confidence)
  if (low.length === 0)
    return (
      <div className="notice notice-muted panel-notice" role="note">
        <span>Recognised text (this page is a scan): the passage is marked on the page.</span>
      </div>
    )
  return (
    <div className="notice notice-warn panel-notice" role="note">
      <AlertIcon size={15} />{' '}
      <span>
        Recognised text: check the page. Text recognition was unsure of{' '}
        {low.length === 1 ? `page ${low[0]!.page}` : `pages ${low.map((p) => p.page).join(', ')}`} (confidence{' '}
        {low.map((p) => Math.round(p.confidence)).join(', ')} of 100), so the stored text may differ from it.
      </span>
    </div>
  )
}

/** An image file with the passage's word boxes over it. */
export function ImageDocument({ view, onHighlight }: { view: SourceView; onHighlight: (el: HTMLElement | null) => void }) {
  const hostRef = useRef<HTMLDivElement>(null)
  const [loaded, setLoaded] = useState(false)
  const [broken, setBroken] = useState(false)
  const page = view.ocr?.[0]

  useLayoutEffect(() => {
    const host = hostRef.current
    if (!host || !loaded) return
    host.querySelector('.ocr-layer')?.remove()
    const first = page ? drawOcrBoxes(host, page) : null
    onHighlight(first)
    if (first) scrollWithin(first, { block: 'center' })
  }, [loaded, page, onHighlight])

  if (!view.image_base64 || !view.image_type) return <p className="panel-empty muted">The image data is missing.</p>
  if (broken)
    return (
      <div className="notice notice-muted panel-notice" role="note">
        <span>This image ({view.image_type}) cannot be shown here; open it in its app. Its recognised text is above.</span>
      </div>
    )
  return (
    <div className="pdf-scroll" tabIndex={0} aria-label={`Image ${view.path}`}>
      <div className="pdf-page image-page" ref={hostRef}>
        <img
          src={`data:${view.image_type};base64,${view.image_base64}`}
          alt={`The image ${view.path}`}
          onLoad={() => setLoaded(true)}
          onError={() => {
            setBroken(true)
            onHighlight(null)
          }}
        />
      </div>
    </div>
  )
}
