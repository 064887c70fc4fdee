import { useCallback, type KeyboardEvent, type MouseEvent } from 'react'
import { scrollWithin } from '../lib/scroll'

/**
 * Shows HTML that has already been through lib/sanitize. Clicks are handled by delegation: citation
 * chips call `onCite`; external links go to the main process as a new-window request, which asks
 * the person before handing them to the system browser; the app window itself never navigates.
 */
export function RichContent({
  html,
  className,
  onCite,
  contentRef,
  label,
}: {
  html: string
  className?: string
  onCite?: (n: number) => void
  contentRef?: (el: HTMLDivElement | null) => void
  label?: string
}) {
  const activate = useCallback(
    (target: EventTarget | null, container: HTMLElement): boolean => {
      if (!(target instanceof Element)) return false
      const chip = target.closest('[data-cite]')
      if (chip && onCite) {
        onCite(Number(chip.getAttribute('data-cite')))
        return true
      }
      const ext = target.closest('[data-href]')
      if (ext) {
        openExternalUrl(ext.getAttribute('data-href') ?? '')
        return true
      }
      const anchor = target.closest('[data-anchor]')
      if (anchor) {
        const id = anchor.getAttribute('data-anchor') ?? ''
        const dest = Array.from(container.querySelectorAll('[id]')).find((el) => el.id === id || el.id === `user-content-${id}`)
        if (dest) scrollWithin(dest, { block: 'start', behavior: 'smooth' })
        return true
      }
      return !!target.closest('a')
    },
    [onCite],
  )

  const onClick = (e: MouseEvent<HTMLDivElement>) => {
    if (activate(e.target, e.currentTarget)) e.preventDefault()
  }
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    // Chips are buttons (native Enter/Space); links made focusable here need Enter by hand.
    if (e.key !== 'Enter') return
    const t = e.target
    if (t instanceof Element && (t.matches('[data-href]') || t.matches('[data-anchor]'))) {
      e.preventDefault()
      activate(t, e.currentTarget)
    }
  }

  return (
    <div
      ref={contentRef}
      className={className}
      aria-label={label}
      onClick={onClick}
      onKeyDown={onKeyDown}
      // Sanitised by lib/sanitize (DOMPurify + URL neutralising) before it gets here.
      dangerouslySetInnerHTML={{ __html: html }}
    />
  )
}

/**
 * Web links never navigate the app window: they become a new-window request, which the main
 * process refuses and instead offers to the system browser after the person confirms
 * (src/main/window.ts, setWindowOpenHandler).
 */
export function openExternalUrl(url: string): void {
  if (!/^(https?:|mailto:)/i.test(url)) return
  window.open(url, '_blank', 'noopener,noreferrer')
}
