// @vitest-environment jsdom
import { act, cleanup, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import type { AskEvent } from '../../../shared/answer'
import type { SourceView } from '../../../shared/api'
import { askResult, COLLECTIONS } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'

afterEach(() => {
  cleanup()
  resetApp()
})

const citations = [
  {
    n: 1,
    chunk_id: 'c-transports',
    path: 'specification/2025-03-26/basic/transports.mdx',
    heading: 'Transports > Streamable HTTP',
    version: '2025-03-26',
    page: null,
    kind: 'Specification',
    collection: 'mcp-docs',
  },
  {
    n: 2,
    chunk_id: 'c-lifecycle',
    path: 'specification/2025-03-26/basic/lifecycle.mdx',
    heading: 'Lifecycle > Initialization',
    version: '2025-03-26',
    page: null,
    kind: 'Specification',
    collection: 'mcp-docs',
  },
]

const sourceView: SourceView = {
  chunk_id: 'c-transports',
  collection: 'mcp-docs',
  path: 'specification/2025-03-26/basic/transports.mdx',
  format: 'markdown',
  heading: 'Transports > Streamable HTTP',
  version: '2025-03-26',
  page: null,
  page_end: null,
  passage:
    'In the Streamable HTTP transport, the server operates as an independent process.\n\nIt can handle multiple client connections.',
  content:
    '---\ntitle: Transports\n---\n\n# Transports\n\nMCP uses JSON-RPC.\n\n## Streamable HTTP\n\nIn the **Streamable HTTP** transport, the server operates as an independent process. It can handle multiple client connections.\n\n## stdio\n\nThe client launches the server.\n',
  pdf_base64: null,
}

async function ask(question: string) {
  const box = screen.getByRole('textbox', { name: 'Ask a question about your documents' })
  await userEvent.click(box)
  await userEvent.keyboard(question)
  await userEvent.keyboard('{Enter}')
}

describe('chat', () => {
  it('streams stage messages and a marked draft, then replaces it with the verified answer and citation chips', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await ask('How does Streamable HTTP work?')
    // A new conversation's id is chosen when the question is sent, so the sidebar lists it at once.
    const [sent] = docent.callsTo('ask')
    expect(sent).toEqual({
      question: 'How does Streamable HTTP work?',
      scope: { collections: [], version: 'auto' },
      threadId: expect.stringMatching(/^[0-9a-f-]{32,36}$/),
    })

    const ev = (event: AskEvent) => act(() => docent.emit('ask.event', { requestId: 'req-1', event }))
    ev({ type: 'stage', stage: 'search', message: 'Searching the 2025-03-26 docs' })
    expect(await screen.findByText('Searching the 2025-03-26 docs')).toBeTruthy()
    ev({ type: 'stage', stage: 'generate', message: 'Writing the answer' })
    ev({ type: 'token', text: 'The server runs ', attempt: 1 })
    ev({ type: 'token', text: 'as its own process [1].', attempt: 1 })
    const draft = screen.getByLabelText('Draft answer, not yet checked')
    expect(within(draft).getByText('Draft — citations not checked yet')).toBeTruthy()
    expect(within(draft).getByText('The server runs as its own process [1].')).toBeTruthy()
    // A corrective retry starts a new draft rather than appending to the rejected one.
    ev({ type: 'token', text: 'Retried draft', attempt: 2 })
    expect(within(screen.getByLabelText('Draft answer, not yet checked')).getByText('Retried draft')).toBeTruthy()

    ev({
      type: 'final',
      result: askResult({
        answer: 'The server runs as an **independent process** [1] and starts with an initialization handshake [2].',
        citations,
        passages: ['c-transports', 'c-lifecycle'],
      }),
    })
    expect(screen.queryByLabelText('Draft answer, not yet checked')).toBeNull()
    const answer = await screen.findByLabelText('Answer')
    expect(within(answer).getByText('independent process').tagName).toBe('STRONG')
    const chip1 = within(answer).getByRole('button', { name: /Source 1: specification\/2025-03-26\/basic\/transports.mdx/ })
    expect(chip1.textContent).toBe('1')
    expect(within(answer).getByRole('button', { name: /Source 2/ })).toBeTruthy()
    expect(answer.textContent).not.toContain('[1]')

    const sources = screen.getByRole('region', { name: 'Sources' })
    expect(within(sources).getByText('specification/2025-03-26/basic/transports.mdx')).toBeTruthy()
    expect(within(sources).getByText('Transports › Streamable HTTP')).toBeTruthy()
    expect(within(sources).getAllByText('2025-03-26').length).toBe(2)
  })

  it('a citation chip opens the source viewer at the highlighted passage', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS, 'source.open': () => sourceView })
    await ask('How does Streamable HTTP work?')
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: { type: 'final', result: askResult({ answer: 'It is an independent process [1].', citations }) },
      }),
    )
    await userEvent.click(await screen.findByRole('button', { name: /Source 1:/ }))
    expect(docent.callsTo('source.open')).toEqual([{ chunkId: 'c-transports' }])
    const viewer = await screen.findByRole('complementary', { name: 'Source viewer' })
    const doc = await within(viewer).findByLabelText(`Contents of ${sourceView.path}`)
    await waitFor(() => expect(doc.querySelector('mark.passage-mark')).not.toBeNull())
    const marked = Array.from(doc.querySelectorAll('mark.passage-mark'))
      .map((m) => m.textContent)
      .join('')
    expect(marked.replace(/\s+/g, ' ')).toContain(
      'the server operates as an independent process. It can handle multiple client connections',
    )
    // Front matter is not content.
    expect(doc.textContent).not.toContain('title: Transports')

    await userEvent.click(within(viewer).getByRole('button', { name: 'Open in system app' }))
    expect(docent.opened).toEqual(['c-transports'])
  })

  it('shows an abstention as what it is: the reason in words and the closest sections, clickable', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS, 'source.open': () => sourceView })
    await ask('What is the pricing of MCP Cloud?')
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: {
          type: 'final',
          result: askResult({
            abstained: true,
            reason: 'no_relevant_sources',
            closest: [
              {
                chunk_id: 'c-transports',
                collection: 'mcp-docs',
                path: 'specification/2025-03-26/basic/transports.mdx',
                heading: 'Transports > Streamable HTTP',
                version: '2025-03-26',
                kind: 'Specification',
                page: null,
                snippet: 'In the Streamable HTTP transport…',
                scores: { keyword_rank: 1, vector_rank: 3, bm25: 4.2, rrf: 0.03, cosine: 0.4, reranker: -3.1 },
              },
            ],
          }),
        },
      }),
    )
    const note = await screen.findByRole('note', { name: 'No answer' })
    expect(within(note).getByText("The documents don't say")).toBeTruthy()
    expect(
      within(note).getByText('Nothing in the selected documents was close enough to the question to answer from.'),
    ).toBeTruthy()
    expect(within(note).getByText(/The closest sections in the 2025-03-26 docs/)).toBeTruthy()
    await userEvent.click(within(note).getByRole('button', { name: /Open specification\/2025-03-26\/basic\/transports.mdx/ }))
    expect(docent.callsTo('source.open')).toEqual([{ chunkId: 'c-transports' }])
    expect(await screen.findByRole('complementary', { name: 'Source viewer' })).toBeTruthy()
  })

  it('Enter sends, Shift+Enter adds a new line, Escape stops a streaming answer', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    const box = screen.getByRole('textbox', { name: 'Ask a question about your documents' }) as HTMLTextAreaElement
    await userEvent.click(box)
    await userEvent.keyboard('first line{Shift>}{Enter}{/Shift}second line')
    expect(box.value).toBe('first line\nsecond line')
    expect(docent.callsTo('ask')).toEqual([])
    await userEvent.keyboard('{Enter}')
    expect(docent.callsTo('ask').map((a) => a.question)).toEqual(['first line\nsecond line'])
    expect(box.value).toBe('')

    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: { type: 'stage', stage: 'search', message: 'Searching all versions' },
      }),
    )
    expect(screen.getByRole('button', { name: 'Stop answering (Escape)' })).toBeTruthy()
    await userEvent.keyboard('{Escape}')
    expect(docent.callsTo('ask.cancel')).toEqual([{ requestId: 'req-1' }])
    expect(
      await screen.findByText(/^Stopped after \d+ s, before the answer\. Nothing was checked, so no answer is shown\.$/),
    ).toBeTruthy()
    // Events after the stop are ignored.
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: { type: 'final', result: askResult({ answer: 'late [1]', citations }) },
      }),
    )
    expect(screen.queryByLabelText('Answer')).toBeNull()
  })

  it('keeps events that arrive before invoke("ask") returns its requestId', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => (release = r))
    const { docent } = await renderApp({
      'collections.list': () => COLLECTIONS,
      ask: async () => {
        await gate
        return { requestId: 'req-early' }
      },
    })
    await ask('Quick question')
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-early',
        event: { type: 'final', result: askResult({ answer: 'Early answer [1].', citations }) },
      }),
    )
    await act(async () => release())
    expect(await screen.findByLabelText('Answer')).toBeTruthy()
  })

  it('search-only results list the matching passages', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await ask('transports')
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: {
          type: 'final',
          result: askResult({ mode: 'search-only', citations, passages: ['c-transports', 'c-lifecycle'] }),
        },
      }),
    )
    expect(await screen.findByText('Matching passages')).toBeTruthy()
    expect(
      screen.getByRole('button', { name: /Open specification\/2025-03-26\/basic\/lifecycle.mdx, Lifecycle > Initialization/ }),
    ).toBeTruthy()
  })

  it('search-only passages show their excerpt with the question words marked, and the scope line says why', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await ask('How do transports work in 2024-11-05?')
    const closest = citations.map((c) => ({
      chunk_id: c.chunk_id,
      collection: c.collection,
      path: c.path,
      heading: c.heading,
      version: c.version,
      kind: c.kind,
      page: c.page,
      snippet: 'Two transports exist: stdio and Streamable HTTP.',
      scores: { keyword_rank: 1, vector_rank: null, bm25: 3, rrf: null, cosine: null, reranker: null },
    }))
    act(() =>
      docent.emit('ask.event', {
        requestId: 'req-1',
        event: {
          type: 'final',
          result: askResult({
            mode: 'search-only',
            citations,
            closest,
            passages: ['c-transports', 'c-lifecycle'],
            scope_label: '2024-11-05, named in your question',
            scope: {
              label: '2024-11-05, named in your question',
              source: 'named_in_question',
              collections: ['mcp-docs'],
              versions: { 'mcp-docs': ['2024-11-05'] },
              named: ['2024-11-05'],
              change_log_first: false,
            },
          }),
        },
      }),
    )
    expect(await screen.findByText('Searching 2024-11-05, named in your question')).toBeTruthy()
    const marks = Array.from(document.querySelectorAll('.hit-text mark')).map((m) => m.textContent)
    expect(marks).toContain('transports')
    expect(marks).not.toContain('Two')
  })

  it('shows a failed answer (ask.done with an error) with a retry', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await ask('Anything?')
    act(() => docent.emit('ask.done', { requestId: 'req-1', error: 'The chat model ran out of memory.' }))
    const alert = await screen.findByRole('alert')
    expect(within(alert).getByText('The chat model ran out of memory.')).toBeTruthy()
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }))
    expect(docent.callsTo('ask').map((a) => a.question)).toEqual(['Anything?', 'Anything?'])
  })
})
