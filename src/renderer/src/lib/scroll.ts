/**
 * Scroll an element into view inside its own scrolling container only.
 *
 * `Element.scrollIntoView` scrolls every scrollable ancestor, the page included; when anything
 * makes the page a little taller than the window, opening a source at a deep passage also scrolls
 * the whole app, and the top bars leave the window. This moves the nearest ancestor that scrolls
 * (the source viewer's document, the PDF page area, the transcript) and nothing outside it.
 */
export function scrollWithin(el: Element, opts: { block?: 'start' | 'center'; behavior?: ScrollBehavior } = {}): void {
  const box = scrollingAncestor(el)
  if (!box || typeof box.scrollTo !== 'function') return
  const r = el.getBoundingClientRect()
  const b = box.getBoundingClientRect()
  const offset = r.top - b.top - box.clientTop
  const top = opts.block === 'start' ? box.scrollTop + offset : box.scrollTop + offset - (box.clientHeight - r.height) / 2
  const max = box.scrollHeight - box.clientHeight
  box.scrollTo({ top: Math.max(0, Math.min(max, top)), behavior: opts.behavior ?? 'auto' })
}

/** The nearest ancestor whose content scrolls vertically (overflow-y auto or scroll). */
export function scrollingAncestor(el: Element): HTMLElement | null {
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const oy = getComputedStyle(p).overflowY
    if (oy === 'auto' || oy === 'scroll') return p
  }
  return null
}
