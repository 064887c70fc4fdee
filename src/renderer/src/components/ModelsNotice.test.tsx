// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import type { ModelStatus } from '../../../shared/api'
import { useModels } from '../stores/models'
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
]

/** The notices the engine sends with every reply when no model is installed (src/engine/models/loaded.ts and the answer stages). */
const ENGINE_NOTICES = [
  'Vector search is unavailable: no embedding model is installed in /models. Showing keyword results only.',
  'Reranking is unavailable: no reranker model is installed in /models. Results are in fused order.',
  'No reranker was available, so relevance was judged from keyword and vector evidence only (less reliable).',
  'No language model is available (no language model is installed in /models); showing the best passages instead of an answer.',
]

function status(role: ModelStatus['role'], installed: boolean): ModelStatus {
  const name = installed ? `fixture-${role}` : null
  return {
    role,
    installed,
    active: name,
    name,
    sizeBytes: installed ? 1000 : null,
    source: installed ? 'folder' : null,
    problem: null,
  }
}

async function askAndGet(docent: Awaited<ReturnType<typeof renderApp>>['docent'], notices: string[]) {
  const box = screen.getByRole('textbox', { name: 'Ask a question about your documents' })
  await userEvent.click(box)
  await userEvent.keyboard('transports{Enter}')
  act(() =>
    docent.emit('ask.event', {
      requestId: 'req-1',
      event: {
        type: 'final',
        result: askResult({ mode: 'search-only', citations, passages: ['c-transports'], notices, degraded: true }),
      },
    }),
  )
  await screen.findByText('Matching passages')
}

describe('models notice', () => {
  it('with no models: one calm notice says what works and what to install, instead of four warnings per reply', async () => {
    const { docent } = await renderApp({
      'collections.list': () => COLLECTIONS,
      'models.status': () => [status('embedding', false), status('reranker', false), status('llm', false)],
    })
    await askAndGet(docent, ENGINE_NOTICES)

    const notices = screen.getAllByRole('status', { name: 'Models' })
    expect(notices).toHaveLength(1)
    const notice = notices[0]!
    expect(notice.textContent).toContain('Works now: keyword search and opening every source at its passage.')
    expect(notice.textContent).toContain(
      'To add: install the chat model for written answers, the embedding model for search by meaning and the reranker for better ordering.',
    )
    for (const n of ENGINE_NOTICES) expect(screen.queryByText(n)).toBeNull()
    // No warning box under the reply, not even the generic "some stages were unavailable".
    expect(document.querySelectorAll('.result .notice-warn')).toHaveLength(0)

    // A second reply adds no second notice.
    act(() => docent.emit('ask.done', { requestId: 'req-1', error: null }))
    await userEvent.click(screen.getByRole('textbox', { name: 'Ask a question about your documents' }))
    await userEvent.keyboard('stdio{Enter}')
    expect(docent.callsTo('ask').map((a) => a.question)).toEqual(['transports', 'stdio'])
    expect(screen.getAllByRole('status', { name: 'Models' })).toHaveLength(1)

    await userEvent.click(within(notice).getByRole('button', { name: 'Hide this notice' }))
    expect(screen.queryByRole('status', { name: 'Models' })).toBeNull()
    expect(screen.getByText('Matching passages')).toBeTruthy()
    // It comes back when what is missing changes (here: the chat model is installed).
    docent.handlers['models.status'] = () => [status('embedding', false), status('reranker', false), status('llm', true)]
    await act(async () => {
      await useModels.getState().refresh()
    })
    const again = await screen.findByRole('status', { name: 'Models' })
    expect(again.textContent).toContain('Works now: keyword search, opening every source at its passage and written answers.')

    await userEvent.click(within(again).getByRole('button', { name: /Models & Settings/ }))
    expect(await screen.findByRole('heading', { name: 'Models & Settings', level: 1 })).toBeTruthy()
  })

  it('names only what is missing, and keeps warnings that are not about a missing model', async () => {
    const { docent } = await renderApp({
      'collections.list': () => COLLECTIONS,
      'models.status': () => [status('embedding', true), status('reranker', true), status('llm', false)],
    })
    const broken = 'Vector search is unavailable: the embedding model failed to load (model.onnx is truncated).'
    await askAndGet(docent, [broken, ENGINE_NOTICES[3]!])

    const notice = screen.getByRole('status', { name: 'Models' })
    expect(notice.textContent).toContain('Works now: search by keywords and meaning and opening every source at its passage.')
    expect(notice.textContent).toContain('To add: install the chat model for written answers.')
    expect(screen.getByRole('note').textContent).toContain(broken)
    expect(screen.queryByText(ENGINE_NOTICES[3]!)).toBeNull()
  })

  it('shows nothing when every model is installed, and the engine notices as they are', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    await askAndGet(docent, [ENGINE_NOTICES[1]!])
    expect(screen.queryByRole('status', { name: 'Models' })).toBeNull()
    expect(screen.getByRole('note').textContent).toContain(ENGINE_NOTICES[1]!)
  })

  it('is shown once, not in every conversation, and not again after a restart', async () => {
    const onlyReranker = () => [status('embedding', true), status('reranker', false), status('llm', true)]
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS, 'models.status': onlyReranker })
    await askAndGet(docent, [ENGINE_NOTICES[1]!, ENGINE_NOTICES[2]!])
    expect(screen.getByRole('status', { name: 'Models' }).textContent).toContain(
      'To add: install the reranker for better ordering.',
    )

    await userEvent.click(screen.getByRole('button', { name: 'New conversation' }))
    await askAndGet(docent, [ENGINE_NOTICES[1]!])
    expect(screen.queryByRole('status', { name: 'Models' })).toBeNull()
    // The engine's notice about the missing reranker stays folded away: the notice has said it.
    expect(screen.queryByText(ENGINE_NOTICES[1]!)).toBeNull()

    cleanup()
    const restarted = await renderApp(
      { 'collections.list': () => COLLECTIONS, 'models.status': onlyReranker },
      { keepStorage: true },
    )
    await askAndGet(restarted.docent, [ENGINE_NOTICES[1]!])
    expect(screen.queryByRole('status', { name: 'Models' })).toBeNull()
    // Models & Settings still says it.
    expect(screen.getByRole('button', { name: /Models & Settings/ })).toBeTruthy()
  })
})
