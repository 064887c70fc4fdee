// @vitest-environment jsdom
import { describe, expect, it } from 'vitest'
import type { AnswerSentence, Citation } from '../../../shared/answer'
import { renderAnswerHtml } from './sanitize'

const cite = (n: number): Citation => ({
  n,
  chunk_id: `c${n}`,
  path: `docs/p${n}.md`,
  heading: 'Tuning',
  version: `v${n}`,
  page: null,
  kind: null,
  collection: 'x',
})

function render(answer: string, sentences: AnswerSentence[], citations = [cite(1), cite(2)]): HTMLElement {
  const el = document.createElement('div')
  el.innerHTML = renderAnswerHtml(answer, citations, [], sentences)
  return el
}

describe('sentence markers on a rendered answer', () => {
  it('a release the engine wrote before a sentence ("v1: …") becomes its label, said once', () => {
    // As the engine renders sentences whose sources span releases (answer/markers.ts renderAnswer).
    const el = render('v1: Print the tuning tower [1]. v2: The default factor is .005 for direct drive [2].', [
      { text: 'Print the tuning tower.', citations: [1], version: 'v1' },
      { text: 'The default factor is .005 for direct drive.', citations: [2], version: 'v2' },
    ])
    expect(Array.from(el.querySelectorAll('.claim-version')).map((x) => x.textContent)).toEqual(['v1', 'v2'])
    expect(el.textContent).not.toMatch(/v[12]:/)
    expect(el.textContent?.replace(/\s+/g, ' ').trim()).toBe(
      'v1 Print the tuning tower 1. v2 The default factor is .005 for direct drive 2.',
    )
  })

  it('a sentence the text does not contain leaves the rendering as it is', () => {
    const el = render('Print the tuning tower [1].', [{ text: 'Something the answer never says.', citations: [2] }])
    expect(el.querySelectorAll('[data-claim]')).toHaveLength(0)
    expect(el.querySelectorAll('.cite-chip')).toHaveLength(1)
  })

  it('finds sentences across emphasis and links, and puts chips after the emphasis they end in', () => {
    const el = render('Use the [tuning tower](https://example.com/tower) at **high speed** [1].', [
      { text: 'Use the [tuning tower](https://example.com/tower) at high speed.', citations: [1] },
    ])
    const claims = el.querySelectorAll('[data-claim="0"]')
    expect(
      Array.from(claims)
        .map((c) => c.textContent)
        .join(''),
    ).toBe('Use the tuning tower at high speed')
    // The chip follows the <strong>, not its text inside.
    expect(el.querySelector('strong')!.nextElementSibling?.classList.contains('cite-chip')).toBe(true)
    expect(el.querySelectorAll('.cite-chip')).toHaveLength(1)
  })
})
