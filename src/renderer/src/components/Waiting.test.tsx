// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AskEvent, PassagePreview } from '../../../shared/answer'
import { askResult, COLLECTIONS, type FakeDocent } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'

afterEach(() => {
  vi.useRealTimers()
  cleanup()
  resetApp()
})

const passages: PassagePreview[] = [
  {
    n: 1,
    chunk_id: 'c-transports',
    collection: 'mcp-docs',
    path: 'specification/2025-03-26/basic/transports.mdx',
    heading: 'Transports > Streamable HTTP',
    version: '2025-03-26',
    kind: 'Specification',
    page: null,
    sentences: [
      { text: 'MCP uses JSON-RPC to encode messages.', match: false },
      { text: 'In the Streamable HTTP transport, the server operates as an independent process.', match: true },
      { text: 'It can handle multiple client connections.', match: true },
    ],
  },
  {
    n: 2,
    chunk_id: 'c-lifecycle',
    collection: 'mcp-docs',
    path: 'specification/2025-03-26/basic/lifecycle.mdx',
    heading: 'Lifecycle > Initialization',
    version: '2025-03-26',
    kind: 'Specification',
    page: 4,
    sentences: [{ text: 'The initialization phase must be the first interaction.', match: false }],
  },
]

async function ask(question: string) {
  const box = screen.getByRole('textbox', { name: 'Ask a question about your documents' })
  await userEvent.click(box)
  await userEvent.keyboard(question)
  await userEvent.keyboard('{Enter}')
}

const emitter = (docent: FakeDocent) => (event: AskEvent) => act(() => docent.emit('ask.event', { requestId: 'req-1', event }))

const reading = (over: Partial<Extract<AskEvent, { type: 'progress' }>> = {}): AskEvent => ({
  type: 'progress',
  phase: 'reading',
  read: 640,
  total: 980,
  written: 0,
  elapsed_ms: 4000,
  eta_ms: 20_000,
  ...over,
})

describe('while the answer is written', () => {
  it('shows the passages being read at once, matching sentences highlighted, and the verified answer replaces them', async () => {
    const { docent } = await renderApp({
      'collections.list': () => COLLECTIONS,
      'source.open': () => Promise.reject(new Error('gone')),
    })
    await ask('How does Streamable HTTP handle many clients?')
    const ev = emitter(docent)
    ev({ type: 'stage', stage: 'read', message: 'Reading 2 passages' })
    ev({ type: 'passages', scope_label: 'the 2025-03-26 docs', passages })

    const region = screen.getByRole('region', { name: 'Passages being read' })
    expect(within(region).getByText(/the 2 passages the model is reading/)).toBeTruthy()
    const marks = Array.from(region.querySelectorAll('mark.preview-match')).map((m) => m.textContent)
    expect(marks).toEqual([
      'In the Streamable HTTP transport, the server operates as an independent process.',
      'It can handle multiple client connections.',
    ])
    // The sentence that does not match is shown, but not marked.
    expect(region.textContent).toContain('MCP uses JSON-RPC to encode messages.')
    expect(within(region).getByText('p. 4')).toBeTruthy()
    await userEvent.click(
      within(region).getByRole('button', { name: /Open passage 2: specification\/2025-03-26\/basic\/lifecycle.mdx/ }),
    )
    expect(docent.callsTo('source.open')).toEqual([{ chunkId: 'c-lifecycle' }])

    ev({
      type: 'final',
      result: askResult({
        answer: 'The server is an independent process that can handle multiple client connections [1].',
        citations: [{ ...passages[0]!, n: 1 }].map(({ sentences: _s, ...c }) => c),
        sentences: [
          { text: 'The server is an independent process that can handle multiple client connections.', citations: [1] },
        ],
      }),
    })
    expect(screen.queryByRole('region', { name: 'Passages being read' })).toBeNull()
    expect(await screen.findByLabelText('Answer')).toBeTruthy()
  })

  it('says how much context the model has read, the time so far (ticking) and the time left from its rate', async () => {
    // Date and the one-second tick are the test's; everything else runs as usual.
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] })
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await ask('How does Streamable HTTP work?')
    const ev = emitter(docent)
    ev({ type: 'stage', stage: 'generate', message: 'Writing the answer' })
    const elapsed = () => screen.getByLabelText('Time so far').textContent
    expect(elapsed()).toBe('0 s')
    act(() => vi.advanceTimersByTime(3000))
    expect(elapsed()).toBe('3 s')

    ev({ type: 'progress', phase: 'loading', read: 0, total: 0, written: 0, elapsed_ms: 3000, eta_ms: null })
    const group = () => screen.getByRole('group', { name: 'Model progress' })
    expect(within(group()).getByText(/Loading the chat model/)).toBeTruthy()

    ev(reading({ eta_ms: null }))
    expect(within(group()).getByText('estimating the time left…')).toBeTruthy()
    // The engine's stage says "Writing the answer" from the start; while the model reads, the screen says so.
    expect(screen.getByText('The model is reading the passages…')).toBeTruthy()
    expect(screen.queryByText('Writing the answer')).toBeNull()
    ev(reading())
    expect(within(group()).getByText('Read 640 of 980 tokens of context (a token is about ¾ of a word)')).toBeTruthy()
    expect(within(group()).getByText('about 20 s left')).toBeTruthy()
    expect(within(group()).getByText(/Your computer's processor does this work/)).toBeTruthy()
    const bar = within(group()).getByRole('progressbar', { name: 'Context read by the model' })
    expect([bar.getAttribute('aria-valuenow'), bar.getAttribute('aria-valuemax')]).toEqual(['640', '980'])

    // Between events the estimate counts down, and ends as "almost done", never "under a second".
    act(() => vi.advanceTimersByTime(10_000))
    expect(within(group()).getByText('about 10 s left')).toBeTruthy()
    act(() => vi.advanceTimersByTime(30_000))
    expect(within(group()).getByText('almost done')).toBeTruthy()
    expect(group().textContent).not.toMatch(/under a second|-\d/)
    expect(elapsed()).toBe('43 s')

    ev({ type: 'progress', phase: 'writing', read: 980, total: 980, written: 45, elapsed_ms: 30_000, eta_ms: 8000 })
    expect(within(group()).getByText('Writing: 45 tokens so far')).toBeTruthy()
    expect(screen.getByText('Writing the answer')).toBeTruthy()
    expect(within(group()).getByText('about 10 s left')).toBeTruthy()
    ev({ type: 'progress', phase: 'writing', read: 980, total: 980, written: 60, elapsed_ms: 31_000, eta_ms: null })
    expect(within(group()).getByText('Writing: 60 tokens so far')).toBeTruthy()
    expect(group().textContent).not.toMatch(/estimating|left/)
  })

  it('Stop keeps the passages, marked as stopped before the answer, and a late result is ignored', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await ask('How does Streamable HTTP handle many clients?')
    const ev = emitter(docent)
    ev({ type: 'passages', scope_label: 'the 2025-03-26 docs', passages })
    ev(reading())
    await userEvent.click(screen.getByRole('button', { name: 'Stop answering (Escape)' }))
    expect(docent.callsTo('ask.cancel')).toEqual([{ requestId: 'req-1' }])

    expect(
      screen.getByText(/^Stopped after \d+ s, before the answer\. Nothing was checked, so no answer is shown\.$/),
    ).toBeTruthy()
    expect(screen.queryByRole('region', { name: 'Passages being read' })).toBeNull()
    const kept = screen.getByRole('region', { name: 'Passages read before the answer stopped' })
    expect(within(kept).getByText(/Stopped before the answer: the 2 passages the model was reading/)).toBeTruthy()
    expect(kept.querySelectorAll('mark.preview-match')).toHaveLength(2)
    expect(screen.queryByRole('group', { name: 'Model progress' })).toBeNull()

    ev({ type: 'final', result: askResult({ answer: 'Too late [1].' }) })
    expect(screen.queryByLabelText('Answer')).toBeNull()
    expect(screen.getByRole('region', { name: 'Passages read before the answer stopped' })).toBeTruthy()
  })

  it('lists the conversation in the sidebar when the question is sent, not after its answer', async () => {
    let stored: { id: string; title: string; updated_at: string }[] = []
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS, 'threads.list': () => stored })
    const threads = () => screen.getByRole('region', { name: 'Conversations' })
    expect(within(threads()).getByText('Your questions and answers will be kept here.')).toBeTruthy()

    await ask('How does Streamable HTTP work?')
    const threadId = docent.callsTo('ask')[0]!.threadId!
    const item = within(threads()).getByRole('button', { name: /^How does Streamable HTTP work\?/ })
    expect(item.getAttribute('aria-current')).toBe('true')
    expect(within(item).getByText('being answered')).toBeTruthy()

    // The engine stores the thread when it starts; the list then comes from the store, still one entry.
    stored = [{ id: threadId, title: 'How does Streamable HTTP work?', updated_at: new Date().toISOString() }]
    const ev = emitter(docent)
    ev({ type: 'stage', stage: 'search', message: 'Searching all versions' })
    await act(async () => {})
    ev({ type: 'final', result: askResult({ thread_id: threadId, abstained: true, reason: 'not_in_context' }) })
    await act(async () => {})
    const items = within(threads()).getAllByRole('button', { name: /^How does Streamable HTTP work\?/ })
    expect(items).toHaveLength(1)
    expect(within(items[0]!).queryByText('being answered')).toBeNull()

    // A follow-up continues the same conversation.
    await ask('And stdio?')
    expect(docent.callsTo('ask')[1]!.threadId).toBe(threadId)
  })

  it('an unversioned folder is not searched in "all versions"', async () => {
    const manuals = [{ ...COLLECTIONS[1]!, id: 'printer-manuals', versions: [] }]
    const { docent } = await renderApp({ 'collections.list': () => manuals })
    await ask('How do I calibrate pressure advance?')
    const ev = emitter(docent)
    ev({ type: 'stage', stage: 'search', message: 'Searching all versions' })
    expect(screen.getByText('Searching printer-manuals')).toBeTruthy()
    ev({
      type: 'final',
      result: askResult({
        abstained: true,
        reason: 'not_in_context',
        scope_label: 'all versions',
        scope: {
          label: 'all versions',
          source: 'default',
          collections: ['printer-manuals'],
          versions: { 'printer-manuals': 'all' },
          named: [],
          change_log_first: false,
        },
      }),
    })
    const line = await screen.findByText('Searching printer-manuals')
    expect(line.getAttribute('title')).toBe('These documents have no versions: all of them were searched.')
    expect(screen.queryByText(/all versions/)).toBeNull()
  })

  it('a versioned library still says "all versions"', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await ask('How does Streamable HTTP work?')
    emitter(docent)({ type: 'stage', stage: 'search', message: 'Searching all versions' })
    expect(screen.getByText('Searching all versions')).toBeTruthy()
  })
})
