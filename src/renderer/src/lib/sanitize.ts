import DOMPurify from 'dompurify'
import { Marked } from 'marked'
import type { AnswerSentence, Citation } from './ask-types'
import { markSentences } from './claims'

/**
 * Everything that turns untrusted text (model answers, indexed documents) into HTML goes through
 * here. Documents are data, never code: scripts, event handlers, frames, forms, styles and SVG are
 * removed by DOMPurify, and every URL is neutralised afterwards so nothing remote loads and no
 * click can navigate the app window. The CSP in index.html is the second line of defence.
 */

const markdown = new Marked({ gfm: true, breaks: false, async: false })

const FORBID_TAGS = [
  'script',
  'style',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'form',
  'input',
  'button',
  'textarea',
  'select',
  'option',
  'optgroup',
  'fieldset',
  'link',
  'meta',
  'base',
  'video',
  'audio',
  'source',
  'track',
  'picture',
  'canvas',
  'template',
  'noscript',
  'dialog',
  'portal',
  'svg',
  'math',
]
/**
 * `class` and `style` are dropped: a document must not be able to borrow the app's own classes (a
 * `<div class="modal-backdrop">` would draw a full-window overlay over the app) or position itself
 * over the UI. The classes the app needs (links, chips, image notes) are added after sanitising.
 * `id` and `name` stay, but SANITIZE_NAMED_PROPS prefixes them with `user-content-`, so a document
 * can neither clobber DOM globals nor take an id the app looks up (`root`, `question`). The
 * attributes that point at an id by name are dropped for the same reason: an unprefixed reference
 * names the app's elements, so `<label for>` would let a click on document text toggle an app
 * control, and `aria-owns`/`aria-labelledby`… would pull app elements into a document's meaning.
 */
const FORBID_ATTR = [
  'class',
  'style',
  'for',
  'aria-labelledby',
  'aria-describedby',
  'aria-controls',
  'aria-owns',
  'aria-activedescendant',
  'aria-details',
  'aria-errormessage',
  'aria-flowto',
  'srcset',
  'action',
  'formaction',
  'background',
  'poster',
  'ping',
  'target',
  'xlink:href',
  'lowsrc',
  'dynsrc',
  'longdesc',
  'cite',
]

const SAFE_EXTERNAL = /^(https?:|mailto:)/i
const SAFE_IMAGE_DATA = /^data:image\/(png|gif|jpe?g|webp|bmp);/i

let purifier: ReturnType<typeof DOMPurify> | null = null
function purify(): ReturnType<typeof DOMPurify> {
  // One instance bound to the current window (jsdom in tests, the renderer in the app).
  purifier ??= DOMPurify(window)
  return purifier
}

/**
 * Chromium checks the CSP for an inline handler as soon as markup with `on…=` is parsed, even in the
 * inert document DOMPurify parses into: nothing runs, but every hostile document would log a CSP
 * violation. Renaming handler attributes inside tags first avoids that noise; DOMPurify (which
 * drops all data-* attributes here) stays the actual defence.
 */
function defuseInlineHandlers(html: string): string {
  return html.replace(/<[a-zA-Z][^>]*>/g, (tag) => tag.replace(/(\s|\/)(on[a-z]+\s*=)/gi, '$1data-defused-$2'))
}

/** Sanitises HTML into a fragment of an inert document (nothing in it loads or runs), then rewrites URLs. */
function sanitizeToFragment(html: string): DocumentFragment {
  const fragment = purify().sanitize(defuseInlineHandlers(html), {
    USE_PROFILES: { html: true },
    FORBID_TAGS,
    FORBID_ATTR,
    ALLOW_DATA_ATTR: false,
    SANITIZE_NAMED_PROPS: true,
    RETURN_DOM_FRAGMENT: true,
  }) as DocumentFragment
  neutraliseUrls(fragment)
  return fragment
}

function neutraliseUrls(root: DocumentFragment): void {
  const doc = root.ownerDocument
  for (const el of Array.from(root.querySelectorAll('[src]'))) {
    const src = el.getAttribute('src') ?? ''
    if (el.tagName === 'IMG' && SAFE_IMAGE_DATA.test(src)) continue
    el.removeAttribute('src')
    if (el.tagName === 'IMG') {
      // A remote or relative image would load something: show what it was instead.
      const alt = el.getAttribute('alt')?.trim()
      const note = doc.createElement('span')
      note.className = 'image-placeholder'
      note.textContent = alt ? `Image: ${alt}` : 'Image not shown'
      note.title = 'Images from documents are not loaded in Docent'
      el.replaceWith(note)
    }
  }
  for (const a of Array.from(root.querySelectorAll('[href]'))) {
    const href = a.getAttribute('href') ?? ''
    a.removeAttribute('href')
    if (a.tagName !== 'A') continue
    if (SAFE_EXTERNAL.test(href)) {
      a.setAttribute('data-href', href)
      a.setAttribute('role', 'link')
      a.setAttribute('tabindex', '0')
      a.setAttribute('title', `${href} (opens in your browser after you confirm)`)
      a.classList.add('external-link')
    } else if (href.startsWith('#') && href.length > 1) {
      a.setAttribute('data-anchor', href.slice(1))
      a.setAttribute('role', 'link')
      a.setAttribute('tabindex', '0')
      a.classList.add('anchor-link')
    } else {
      a.classList.add('document-link')
      if (href) a.setAttribute('title', `Link to ${href} inside the documents`)
    }
  }
}

function serialise(fragment: DocumentFragment): string {
  const holder = fragment.ownerDocument.createElement('div')
  holder.appendChild(fragment)
  return holder.innerHTML
}

/** Front matter and MDX import/export lines are metadata, not content. */
export function stripMarkdownPreamble(source: string): string {
  let text = source.replace(/^\uFEFF/, '')
  // YAML between `---` (or closed by `...`), or Hugo's and Zola's TOML between `+++`.
  const fm = /^(?:---\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)|\+\+\+\r?\n[\s\S]*?\r?\n\+\+\+)[ \t]*(?:\r?\n|$)/.exec(text)
  if (fm) text = text.slice(fm[0].length)
  return text.replace(/^(?:import|export)\s[^\n]*\n/gm, '')
}

export function markdownToSafeHtml(source: string): string {
  const html = markdown.parse(stripMarkdownPreamble(source)) as string
  return serialise(sanitizeToFragment(html))
}

export function sanitizeHtml(html: string): string {
  return serialise(sanitizeToFragment(html))
}

const CITE_MARK = /\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]/g

/**
 * Renders a verified answer: sanitised Markdown where every `[n]` that names one of the answer's
 * citations becomes a chip button. Chips are built from DOM nodes after sanitising, so a marker
 * can never smuggle markup in. `unverified` are the numbers and quotes the cited passages do not
 * contain (AskResult.unverified_claims): each is marked where it appears, so it never reads as verified.
 * `sentences` (AskResult.sentences) give each sentence its own marker (lib/claims.ts).
 */
export function renderAnswerHtml(
  answer: string,
  citations: Citation[],
  unverified: readonly string[] = [],
  sentences: readonly AnswerSentence[] = [],
): string {
  const fragment = sanitizeToFragment(markdown.parse(answer) as string)
  const byN = new Map(citations.map((c) => [c.n, c]))
  const doc = fragment.ownerDocument
  const walker = doc.createTreeWalker(fragment, NodeFilter.SHOW_TEXT)
  const texts: Text[] = []
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if ((n.parentElement?.closest('code, pre') ?? null) === null) texts.push(n as Text)
  }
  for (const text of texts) {
    const value = text.data
    CITE_MARK.lastIndex = 0
    if (!CITE_MARK.test(value)) continue
    CITE_MARK.lastIndex = 0
    const out = doc.createDocumentFragment()
    let last = 0
    for (let m = CITE_MARK.exec(value); m; m = CITE_MARK.exec(value)) {
      const numbers = m[1]!.split(/[,;]/).map((s) => Number(s.trim()))
      if (!numbers.every((n) => byN.has(n))) continue
      out.append(value.slice(last, m.index))
      for (const n of numbers) {
        const c = byN.get(n)!
        const chip = doc.createElement('button')
        chip.type = 'button'
        chip.className = 'cite-chip'
        chip.setAttribute('data-cite', String(n))
        chip.setAttribute('aria-label', `Source ${n}: ${c.path}${c.heading ? `, ${c.heading}` : ''}`)
        chip.title = `${c.path}${c.heading ? ` — ${c.heading}` : ''}`
        chip.textContent = String(n)
        out.append(chip)
      }
      last = m.index + m[0].length
    }
    out.append(value.slice(last))
    text.replaceWith(out)
  }
  markSentences(fragment, sentences, citations)
  markUnverified(fragment, unverified)
  return serialise(fragment)
}

const UNVERIFIED_TITLE = 'Not found in the cited sources: not verified'

/**
 * Wraps each occurrence of an unverified claim in a `<mark>` (text of chips excluded: "[12]" is a
 * citation, not the number 12). A claim that starts or ends with a letter or digit must not touch
 * another one there, so the number 45 is not marked inside 145.
 */
function markUnverified(fragment: DocumentFragment, claims: readonly string[]): void {
  const wanted = [...new Set(claims.map((c) => c.trim()).filter(Boolean))].sort((a, b) => b.length - a.length)
  if (wanted.length === 0) return
  const escape = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const edge = /^[\p{L}\p{N}]/u
  const pattern = new RegExp(
    wanted
      .map((c) => `${edge.test(c) ? '(?<![\\p{L}\\p{N}])' : ''}${escape(c)}${edge.test(c.slice(-1)) ? '(?![\\p{L}\\p{N}])' : ''}`)
      .join('|'),
    'gu',
  )
  const doc = fragment.ownerDocument
  const walker = doc.createTreeWalker(fragment, NodeFilter.SHOW_TEXT)
  const texts: Text[] = []
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    // Chips and a sentence's own labels are not answer text: "[12]" is a citation, not the number 12.
    if ((n.parentElement?.closest('.cite-chip, .claim-version, .claim-copied') ?? null) === null) texts.push(n as Text)
  }
  for (const text of texts) {
    const value = text.data
    const matches = Array.from(value.matchAll(pattern))
    if (matches.length === 0) continue
    const out = doc.createDocumentFragment()
    let last = 0
    for (const m of matches) {
      out.append(value.slice(last, m.index))
      const mark = doc.createElement('mark')
      mark.className = 'unverified-claim'
      mark.setAttribute('data-unverified', '')
      mark.title = UNVERIFIED_TITLE
      mark.textContent = m[0]
      // Screen readers do not announce <mark> or its title; say it in words.
      const note = doc.createElement('span')
      note.className = 'visually-hidden'
      note.textContent = ' (not verified)'
      out.append(mark, note)
      last = m.index + m[0].length
    }
    out.append(value.slice(last))
    text.replaceWith(out)
  }
}
