// @vitest-environment jsdom
import { describe, expect, it } from 'vitest'
import { markdownToSafeHtml, renderAnswerHtml, sanitizeHtml, stripMarkdownPreamble } from './sanitize'

const cite = (n: number) => ({
  n,
  chunk_id: `c${n}`,
  path: `doc${n}.md`,
  heading: 'H',
  version: null,
  page: null,
  kind: null,
  collection: 'x',
})

describe('sanitize', () => {
  it('turns [n] markers of known citations into chips, leaving unknown numbers and code alone', () => {
    const html = renderAnswerHtml('Use `arr[1]` here [1] and [2, 1]; not [7].', [cite(1), cite(2)])
    const div = document.createElement('div')
    div.innerHTML = html
    expect(Array.from(div.querySelectorAll('button.cite-chip')).map((b) => b.getAttribute('data-cite'))).toEqual(['1', '2', '1'])
    expect(div.querySelector('code')!.textContent).toBe('arr[1]')
    expect(div.textContent).toContain('not [7].')
  })

  it('keeps data: images, drops remote ones, and never leaves a navigable href', () => {
    const html = sanitizeHtml(
      '<img src="data:image/png;base64,iVBORw0KGgo=" alt="ok"><img src="http://x.example/a.png" alt="remote"><a href="https://a.example">web</a><a href="#frag">anchor</a><a href="./other.md">doc</a>',
    )
    const div = document.createElement('div')
    div.innerHTML = html
    expect(div.querySelectorAll('img')).toHaveLength(1)
    expect(div.querySelector('img')!.getAttribute('src')).toMatch(/^data:image\/png/)
    expect(div.querySelectorAll('[href]')).toHaveLength(0)
    expect(div.querySelector('[data-href]')!.getAttribute('data-href')).toBe('https://a.example')
    expect(div.querySelector('[data-anchor]')!.getAttribute('data-anchor')).toBe('frag')
    expect(div.querySelector('.document-link')!.textContent).toBe('doc')
  })

  it('strips front matter and MDX import lines before rendering', () => {
    expect(stripMarkdownPreamble('---\ntitle: X\nversion: 1\n---\nimport A from "./a"\n\n# Hello')).toBe('\n# Hello')
    expect(markdownToSafeHtml('---\ntitle: X\n---\n# Hello')).toBe('<h1>Hello</h1>\n')
  })
})
