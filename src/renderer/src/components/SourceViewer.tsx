import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react'
import type { SourceView } from '../../../shared/api'
import { docent } from '../docent'
import { highlightPassage } from '../lib/highlight'
import { scrollWithin } from '../lib/scroll'
import { markdownToSafeHtml, sanitizeHtml } from '../lib/sanitize'
import { useNav } from '../stores/nav'
import { useViewer } from '../stores/viewer'
import { AlertIcon, ExternalIcon, Spinner } from './Icons'
import { drawOcrBoxes, ImageDocument, OcrNotice } from './OcrOverlay'
import { RichContent } from './RichContent'

export function SourceViewer() {
  const source = useViewer((s) => s.source)
  if (!source) return <p className="panel-empty muted">Open a citation to see it in its document.</p>
  if (source.status === 'loading')
    return (
      <div className="panel-empty">
        <Spinner label={`Opening ${source.label ?? 'source'}`} />{' '}
        <span className="muted">Opening {source.label ?? 'the source'}…</span>
      </div>
    )
  if (source.status === 'error' || !source.view)
    return (
      <div className="notice notice-error panel-notice" role="alert">
        <AlertIcon size={15} /> <span>Couldn't open the source: {source.error}</span>
      </div>
    )
  return <SourceDocument key={source.chunkId} view={source.view} label={source.label} />
}

function SourceDocument({ view, label }: { view: SourceView; label: string | null }) {
  const [found, setFound] = useState<HTMLElement | null | undefined>(undefined)
  const notify = useNav((s) => s.notify)
  const crumbs = view.heading.split(' > ').filter(Boolean)
  const pages =
    view.page != null
      ? view.page_end != null && view.page_end !== view.page
        ? `pages ${view.page}–${view.page_end}`
        : `page ${view.page}`
      : null

  const openExternally = async () => {
    try {
      const res = await docent().openExternal(view.chunk_id)
      if (!res.ok) notify(`Couldn't open the file: ${res.error.message}`, 'error')
    } catch (err) {
      notify(`Couldn't open the file: ${err instanceof Error ? err.message : String(err)}`, 'error')
    }
  }

  return (
    <div className="source-view">
      <div className="source-header">
        {label && <div className="source-label">{label}</div>}
        <div className="source-file" title={view.path}>
          {view.path}
        </div>
        {crumbs.length > 0 && <div className="source-crumb">{crumbs.join(' › ')}</div>}
        <div className="source-tags">
          <span className="chip chip-muted">{view.collection}</span>
          {view.version && <span className="chip">{view.version}</span>}
          {pages && <span className="chip chip-muted">{pages}</span>}
          <span className="chip chip-muted">{view.format.toUpperCase()}</span>
        </div>
        <div className="source-actions">
          <button type="button" className="btn btn-small" onClick={() => void openExternally()}>
            <ExternalIcon size={13} /> Open in system app
          </button>
          {found && (
            <button
              type="button"
              className="btn btn-small btn-quiet"
              onClick={() => scrollWithin(found, { block: 'center', behavior: 'smooth' })}
            >
              Jump to passage
            </button>
          )}
        </div>
      </div>
      {found === null && (
        <div className="notice notice-muted panel-notice" role="note">
          <span>The cited passage couldn't be pinpointed in this rendering. Here it is as stored:</span>
          <blockquote className="passage-quote">{view.passage}</blockquote>
        </div>
      )}
      <OcrNotice view={view} />
      {view.format === 'pdf' ? (
        <PdfDocument view={view} onHighlight={setFound} />
      ) : view.format === 'image' ? (
        <ImageDocument view={view} onHighlight={setFound} />
      ) : (
        <TextDocument view={view} onHighlight={setFound} />
      )}
    </div>
  )
}

function TextDocument({ view, onHighlight }: { view: SourceView; onHighlight: (el: HTMLElement | null) => void }) {
  const content = view.content ?? ''
  const asHtml = view.format === 'markdown' || view.format === 'html' || (view.format === 'docx' && /^\s*</.test(content))
  const html = useMemo(() => {
    if (!asHtml) return null
    return view.format === 'markdown' ? markdownToSafeHtml(content) : sanitizeHtml(content)
  }, [asHtml, view.format, content])
  const ref = useRef<HTMLElement | null>(null)

  useLayoutEffect(() => {
    const el = ref.current
    if (!el) return
    const mark = highlightPassage(el, view.passage)
    onHighlight(mark)
    if (mark) scrollWithin(mark, { block: 'center' })
  }, [html, content, view.passage, onHighlight])

  if (html !== null)
    return (
      <RichContent
        className="markdown document"
        html={html}
        label={`Contents of ${view.path}`}
        contentRef={(el) => {
          ref.current = el
        }}
      />
    )
  return (
    <pre
      className="document document-text"
      aria-label={`Contents of ${view.path}`}
      ref={(el) => {
        ref.current = el
      }}
    >
      {content}
    </pre>
  )
}

type PdfModule = typeof import('../lib/pdf')

/** Zoom steps of the PDF view; 'fit' fits the page to the panel's width. */
export const PDF_ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3] as const
export type PdfZoom = 'fit' | (typeof PDF_ZOOMS)[number]

/** The next zoom step in or out from the current one (from 'fit', from the scale that fit gave). */
export function stepZoom(zoom: PdfZoom, fitScale: number, dir: 1 | -1): PdfZoom {
  const current = zoom === 'fit' ? fitScale : zoom
  const next = dir > 0 ? PDF_ZOOMS.find((z) => z > current + 0.01) : [...PDF_ZOOMS].reverse().find((z) => z < current - 0.01)
  return next ?? zoom
}
type PdfDoc = Awaited<ReturnType<PdfModule['openPdf']>>

type LoadedPdf = { mod: PdfModule; pdf: PdfDoc }

/** Loads pdf.js on demand and opens the document; it is destroyed when the view changes or closes. */
function useLoadedPdf(pdfBase64: string | null | undefined, onError: (message: string) => void): LoadedPdf | null {
  const [doc, setDoc] = useState<LoadedPdf | null>(null)
  useEffect(() => {
    let cancelled = false
    let loaded: PdfDoc | null = null
    ;(async () => {
      if (!pdfBase64) throw new Error('the PDF data is missing')
      const mod = await import('../lib/pdf')
      loaded = await mod.openPdf(pdfBase64)
      if (!cancelled) setDoc({ mod, pdf: loaded })
    })().catch((err: unknown) => {
      if (!cancelled) onError(err instanceof Error ? err.message : String(err))
    })
    return () => {
      cancelled = true
      void loaded?.destroy()
    }
  }, [pdfBase64])
  return doc
}

/**
 * Renders the shown page (canvas and text layer) at the zoom, into `pageRef`, whenever the page or
 * zoom changes; on a cited page it marks the passage and reports the mark.
 */
function usePdfPage(
  doc: LoadedPdf | null,
  pageNum: number,
  zoom: PdfZoom,
  view: SourceView,
  onHighlight: (el: HTMLElement | null) => void,
  onError: (message: string) => void,
) {
  const [rendering, setRendering] = useState(false)
  const [scaleShown, setScaleShown] = useState(1)
  const wrapRef = useRef<HTMLDivElement>(null)
  const fitScale = useRef(1)
  const pageRef = useRef<HTMLDivElement>(null)

  useEffect(() => {
    if (!doc || !pageRef.current || !wrapRef.current) return
    let cancelled = false
    const host = pageRef.current
    const cited = view.page != null && pageNum >= view.page && pageNum <= (view.page_end ?? view.page)
    setRendering(true)
    ;(async () => {
      const page = await doc.pdf.getPage(pageNum)
      const base = page.getViewport({ scale: 1 })
      const width = Math.max(280, wrapRef.current!.clientWidth - 32)
      const scale = zoom === 'fit' ? Math.min(2, width / base.width) : zoom
      if (zoom === 'fit') fitScale.current = scale
      setScaleShown(scale)
      const viewport = page.getViewport({ scale })
      const ratio = window.devicePixelRatio || 1
      const { canvas, textLayer } = preparePage(host, scale, viewport, ratio)
      await page.render({ canvas, viewport, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined }).promise
      if (cancelled) return
      const layer = new doc.mod.pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container: textLayer, viewport })
      await layer.render()
      if (cancelled) return
      if (cited) {
        // A recognised page (a scan) has no text layer: its passage is drawn from the word boxes.
        const ocrPage = view.ocr?.find((p) => p.page === pageNum)
        const mark = ocrPage ? drawOcrBoxes(host, ocrPage) : highlightPassage(textLayer, view.passage)
        onHighlight(mark)
        if (mark) scrollWithin(mark, { block: 'center' })
      }
    })()
      .catch((err: unknown) => {
        if (!cancelled && !(err instanceof Error && err.name === 'RenderingCancelledException'))
          onError(err instanceof Error ? err.message : String(err))
      })
      .finally(() => {
        if (!cancelled) setRendering(false)
      })
    return () => {
      cancelled = true
    }
  }, [doc, pageNum, zoom, view.page, view.page_end, view.passage, view.ocr, onHighlight])

  return { rendering, scaleShown, wrapRef, fitScale, pageRef }
}

function PdfDocument({ view, onHighlight }: { view: SourceView; onHighlight: (el: HTMLElement | null) => void }) {
  const [error, setError] = useState<string | null>(null)
  const [pageNum, setPageNum] = useState(view.page ?? 1)
  const [zoom, setZoom] = useState<PdfZoom>('fit')
  const doc = useLoadedPdf(view.pdf_base64, setError)
  const { rendering, scaleShown, wrapRef, fitScale, pageRef } = usePdfPage(doc, pageNum, zoom, view, onHighlight, setError)

  const zoomBy = (dir: 1 | -1) => setZoom((z) => stepZoom(z, fitScale.current, dir))
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (zoomKey(e, zoomBy, () => setZoom('fit'))) e.preventDefault()
  }

  const total = doc?.pdf.numPages ?? null
  return (
    <div className="pdf-view" ref={wrapRef} onKeyDown={onKeyDown}>
      <div className="pdf-toolbar" role="toolbar" aria-label="PDF pages">
        <button
          type="button"
          className="btn btn-small"
          disabled={pageNum <= 1}
          onClick={() => setPageNum((p) => p - 1)}
          aria-label="Previous page"
        >
          ‹
        </button>
        <span className="small">
          Page {pageNum}
          {total ? ` of ${total}` : ''}
          {view.page != null && pageNum !== view.page && (
            <button type="button" className="link-btn" onClick={() => setPageNum(view.page!)}>
              back to cited page {view.page}
            </button>
          )}
        </span>
        <button
          type="button"
          className="btn btn-small"
          disabled={total != null && pageNum >= total}
          onClick={() => setPageNum((p) => p + 1)}
          aria-label="Next page"
        >
          ›
        </button>
        <ZoomControls zoom={zoom} scale={scaleShown} onStep={zoomBy} onFit={() => setZoom('fit')} />
        {rendering && <Spinner label="Rendering page" />}
      </div>
      {error ? (
        <div className="notice notice-error panel-notice" role="alert">
          <AlertIcon size={15} /> <span>Couldn't show the PDF: {error}</span>
        </div>
      ) : (
        <div className="pdf-scroll" tabIndex={0} aria-label="PDF page: + and - zoom, 0 fits the width">
          <div className="pdf-page" ref={pageRef} />
        </div>
      )}
    </div>
  )
}

/** Empties the page's box and sizes it, its canvas and its text layer for pdf.js at this scale. */
function preparePage(
  host: HTMLDivElement,
  scale: number,
  viewport: { width: number; height: number },
  ratio: number,
): { canvas: HTMLCanvasElement; textLayer: HTMLDivElement } {
  host.replaceChildren()
  host.style.setProperty('--scale-factor', String(scale))
  host.style.setProperty('--total-scale-factor', String(scale))
  host.style.setProperty('--user-unit', '1')
  host.style.setProperty('--scale-round-x', '1px')
  host.style.setProperty('--scale-round-y', '1px')
  host.style.width = `${Math.floor(viewport.width)}px`
  host.style.height = `${Math.floor(viewport.height)}px`
  const canvas = document.createElement('canvas')
  canvas.width = Math.floor(viewport.width * ratio)
  canvas.height = Math.floor(viewport.height * ratio)
  canvas.style.width = `${Math.floor(viewport.width)}px`
  canvas.style.height = `${Math.floor(viewport.height)}px`
  canvas.setAttribute('aria-hidden', 'true')
  const textLayer = document.createElement('div')
  textLayer.className = 'textLayer'
  host.append(canvas, textLayer)
  return { canvas, textLayer }
}

/** Plain keys while the PDF has focus; Ctrl/Cmd with + and - stay the whole window's zoom (View menu). */
function zoomKey(e: KeyboardEvent<HTMLDivElement>, step: (dir: 1 | -1) => void, fit: () => void): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey || e.target instanceof HTMLButtonElement) return false
  if (e.key === '+' || e.key === '=') step(1)
  else if (e.key === '-') step(-1)
  else if (e.key === '0' || e.key === 'w') fit()
  else return false
  return true
}

function ZoomControls({
  zoom,
  scale,
  onStep,
  onFit,
}: {
  zoom: PdfZoom
  scale: number
  onStep: (dir: 1 | -1) => void
  onFit: () => void
}) {
  return (
    <span className="pdf-zoom" role="group" aria-label="Zoom">
      <button
        type="button"
        className="btn btn-small"
        onClick={() => onStep(-1)}
        disabled={scale <= PDF_ZOOMS[0] + 0.01}
        aria-label="Zoom out (-)"
      >
        −
      </button>
      <span className="small pdf-zoom-level" aria-live="polite">
        {Math.round(scale * 100)} %
      </span>
      <button
        type="button"
        className="btn btn-small"
        onClick={() => onStep(1)}
        disabled={scale >= PDF_ZOOMS.at(-1)! - 0.01}
        aria-label="Zoom in (+)"
      >
        +
      </button>
      <button
        type="button"
        className="btn btn-small btn-quiet"
        aria-pressed={zoom === 'fit'}
        onClick={onFit}
        aria-label="Fit width (0)"
      >
        Fit width
      </button>
    </span>
  )
}
