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

  it('draws a copied table row under its header as a table, its chip in the last cell, and nested step items as a nested list', () => {
    // As the engine renders them (answer/markers.ts, answer/readable.ts).
    const answer =
      'URL mode keeps credentials away from the client [1].\n' +
      '| Name | Type | Description |\n| --- | --- | --- |\n| mode | string | The mode of the elicitation. [2] |\n\n' +
      '3. The body of the POST request MUST be one of the following [1]:\n   - a single request\n   - an array of requests'
    const div = document.createElement('div')
    div.innerHTML = renderAnswerHtml(answer, [cite(1), cite(2)])
    expect(Array.from(div.querySelectorAll('th')).map((th) => th.textContent)).toEqual(['Name', 'Type', 'Description'])
    expect(div.querySelector('tbody td:last-child button.cite-chip')!.getAttribute('data-cite')).toBe('2')
    expect(div.querySelector('ol')!.getAttribute('start')).toBe('3')
    expect(Array.from(div.querySelectorAll('ol > li > ul > li')).map((li) => li.textContent)).toEqual(['a single request', 'an array of requests'])
  })

  it('marks unverified claims where they appear, not inside citation chips or longer numbers', () => {
    const html = renderAnswerHtml(
      'The limit is 45 requests [1], not 145 [12]. Run `docent purge` or "go now" [1].',
      [cite(1), cite(12)],
      ['45', '12', 'docent purge', 'go now'],
    )
    const div = document.createElement('div')
    div.innerHTML = html
    const marks = Array.from(div.querySelectorAll('mark[data-unverified]'))
    expect(marks.map((m) => m.textContent)).toEqual(['45', 'docent purge', 'go now'])
    expect(marks.every((m) => m.getAttribute('title')!.includes('not verified'))).toBe(true)
    expect(div.querySelector('code mark')!.textContent).toBe('docent purge')
    expect(Array.from(div.querySelectorAll('button.cite-chip')).map((b) => b.textContent)).toEqual(['1', '12', '1'])
    // Screen readers hear it too.
    expect(div.querySelectorAll('.visually-hidden')).toHaveLength(3)
    expect(renderAnswerHtml('Plain 45 [1].', [cite(1)])).not.toContain('<mark')
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
    // Hugo's and Zola's TOML front matter: it rendered as a paragraph of text before.
    expect(markdownToSafeHtml('+++\ntitle = "X"\nversion = 1.10\n+++\n# Hello')).toBe('<h1>Hello</h1>\n')
  })

  describe('a document cannot dress up as the app', () => {
    // The app's positioned or overlay classes (styles.css: fixed/absolute/z-index) and a few it uses
    // for meaning. The sanitiser drops every class, so any other class is covered by the `[class]` check.
    const appClasses = [
      'modal-backdrop',
      'modal',
      'drop-overlay',
      'popover',
      'toasts',
      'skip-link',
      'visually-hidden',
      'textLayer',
      'cite-chip',
      'external-link',
      'notice',
      'notice-error',
    ]

    function parse(html: string): HTMLDivElement {
      const div = document.createElement('div')
      div.innerHTML = html
      return div
    }

    for (const [name, render] of [
      ['sanitizeHtml', sanitizeHtml],
      ['markdownToSafeHtml', markdownToSafeHtml],
      ['renderAnswerHtml', (s: string) => renderAnswerHtml(s, [cite(1)])],
    ] as const) {
      it(`${name} drops every class a document sets, including the app's overlay classes`, () => {
        const hostile = appClasses.map((c) => `<div class="${c}">x</div>`).join('\n')
        const div = parse(render(`<div class="modal-backdrop"><p class="modal">Fake dialog</p></div>\n\n${hostile}`))
        expect(div.querySelectorAll('[class]')).toHaveLength(0)
        expect(div.querySelector('.modal-backdrop')).toBeNull()
        expect(div.textContent).toContain('Fake dialog')
      })
    }

    it('keeps the classes the app itself adds after sanitising', () => {
      const div = parse(renderAnswerHtml('See [1] and <a href="https://a.example">web</a>.', [cite(1)]))
      expect(div.querySelector('button.cite-chip')).not.toBeNull()
      expect(div.querySelector('a.external-link')).not.toBeNull()
      // A class that only came from markdown code fences is gone too (the app does not style it).
      expect(markdownToSafeHtml('```js\nx\n```')).not.toContain('class=')
    })

    it('cannot forge a citation chip or an external link from document markup', () => {
      const div = parse(
        sanitizeHtml(
          '<span class="cite-chip" data-cite="1">1</span><span class="external-link" data-href="https://e.example">x</span>',
        ),
      )
      expect(div.querySelector('[data-cite], [data-href], [class]')).toBeNull()
    })

    it('drops style (no fixed-position overlays)', () => {
      const div = parse(sanitizeHtml('<div style="position:fixed;inset:0;z-index:9999;background:#fff">cover</div>'))
      expect(div.querySelector('[style]')).toBeNull()
    })

    it('prefixes ids and names so a document cannot take an id the app uses or clobber globals', () => {
      const div = parse(
        sanitizeHtml('<div id="root">a</div><p id="question">b</p><a name="composer-hint">c</a><h2 id="intro">d</h2>'),
      )
      const ids = Array.from(div.querySelectorAll('[id]'), (el) => el.id)
      expect(ids).toEqual(['user-content-root', 'user-content-question', 'user-content-intro'])
      expect(div.querySelector('a')!.getAttribute('name')).toBe('user-content-composer-hint')
    })

    it('drops attributes that reference an element by id (label for, aria-owns, aria-labelledby…)', () => {
      const div = parse(
        sanitizeHtml(
          '<label for="question">click</label><div aria-owns="root" aria-labelledby="settings-title" aria-describedby="x" aria-controls="y" aria-label="kept">z</div>',
        ),
      )
      expect(div.querySelector('label')!.hasAttribute('for')).toBe(false)
      const el = div.querySelector('div')!
      expect(el.getAttributeNames()).toEqual(['aria-label'])
    })
  })
})
