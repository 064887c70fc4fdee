// @vitest-environment jsdom
import { describe, expect, it } from 'vitest'
import { highlightPassage, locatePassage, passageSentences } from './highlight'
import { markdownToSafeHtml } from './sanitize'

function rendered(markdown: string): HTMLElement {
  const div = document.createElement('div')
  div.innerHTML = markdownToSafeHtml(markdown)
  document.body.appendChild(div)
  return div
}

const marked = (root: HTMLElement) =>
  Array.from(root.querySelectorAll('mark.passage-mark'))
    .map((m) => m.textContent)
    .join('')

describe('highlightPassage', () => {
  it('finds a stored passage in rendered Markdown despite emphasis, code spans, links and whitespace', () => {
    const root = rendered(
      '# Tools\n\nIntro text.\n\n## Calling\n\nTo invoke a tool, clients send a `tools/call` request.\nThe **server** answers with [the result](https://example.com).\n\n## Errors\n\nUse -32602 for bad params.',
    )
    const first = highlightPassage(
      root,
      'To invoke a tool, clients send a tools/call request. The server answers with the result.',
    )
    expect(first?.tagName).toBe('MARK')
    // The final period sits outside the link's text node; the words are what must be marked.
    expect(marked(root).replace(/\s+/g, ' ')).toBe(
      'To invoke a tool, clients send a tools/call request. The server answers with the result',
    )
  })

  it('falls back to the longest run of first sentences when the tail does not match', () => {
    const root = rendered('Alpha sentence one is here. Beta sentence two follows.\n\nSomething else entirely.')
    highlightPassage(root, 'Alpha sentence one is here. Beta sentence two follows. Gamma was never rendered.')
    expect(marked(root).replace(/\s+/g, ' ')).toBe('Alpha sentence one is here. Beta sentence two follows.')
  })

  it('spans code blocks and table rows the way the chunker stores them', () => {
    const root = rendered(
      'Example:\n\n```json\n{"method": "tools/list"}\n```\n\n| Code | Meaning |\n| --- | --- |\n| -32602 | Invalid params |\n',
    )
    const found = highlightPassage(
      root,
      '```\n{"method": "tools/list"}\n```\n\n| Code | Meaning |\n| --- | --- |\n| -32602 | Invalid params |',
    )
    expect(found).not.toBeNull()
    expect(marked(root)).toContain('Invalid params')
  })

  it('returns null (and marks nothing) when the passage is not there, and clears earlier marks', () => {
    const root = rendered('One paragraph about widgets and their many uses.')
    expect(highlightPassage(root, 'One paragraph about widgets')).not.toBeNull()
    expect(highlightPassage(root, 'Completely different words that do not appear')).toBeNull()
    expect(root.querySelector('mark')).toBeNull()
  })

  it('splits passages into sentences and ignores fence and table-rule lines', () => {
    expect(passageSentences('A first. A second!\n```\ncode\n```\n|---|---|')).toEqual(['A first.', 'A second!', 'code'])
    expect(locatePassage('abcdefghijklmnop', 'nothing')).toBeNull()
  })
})
