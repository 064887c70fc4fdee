// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import type { ModelStatus } from '../../../shared/api'
import { useNav } from '../stores/nav'
import { renderApp, resetApp } from '../test/setup'
import { downloadAdvice } from './ModelsSettings'

afterEach(() => {
  cleanup()
  resetApp()
})

const status = (role: ModelStatus['role'], source: ModelStatus['source']): ModelStatus => ({
  role,
  installed: source !== null,
  active: source ? `${role}-model` : null,
  name: source ? `${role}-model` : null,
  sizeBytes: source ? 1000 : null,
  source,
  problem: null,
})

describe('Models & Settings', () => {
  it('says who put a model there: models:dev, a model found in the folder, a download', async () => {
    await renderApp({
      'models.status': () => [status('llm', 'models-dev'), status('embedding', 'folder'), status('reranker', 'download')],
    })
    act(() => useNav.getState().setScreen('models'))
    const card = async (name: string) => within(await screen.findByRole('article', { name }))
    expect((await card('Chat model')).getByText(/installed by npm run models:dev/)).toBeTruthy()
    expect((await card('Embedding model')).getByText('found in the models folder')).toBeTruthy()
    expect((await card('Reranker')).getByText('downloaded')).toBeTruthy()
    expect(screen.queryByText(/test fixture/)).toBeNull()
  })

  it('a failed download says what to do next, not only "fetch failed"', async () => {
    await renderApp({
      'models.status': () => [status('llm', null), status('embedding', null), status('reranker', null)],
      'models.download': () => {
        throw new Error('fetch failed')
      },
    })
    act(() => useNav.getState().setScreen('models'))
    const chat = within(await screen.findByRole('article', { name: 'Chat model' }))
    await userEvent.click(chat.getByRole('button', { name: /Download/ }))
    const alert = await chat.findByRole('alert')
    expect(alert.textContent).toContain('Download failed: fetch failed.')
    expect(alert.textContent).toMatch(/Import a model from disk/)
    expect(alert.textContent).toMatch(/proxy/)
  })

  it('advice fits the failure', () => {
    expect(downloadAdvice('ENOSPC: no space left on device')).toMatch(/disk space/)
    expect(downloadAdvice('sha256 mismatch for model.onnx')).toMatch(/damaged/)
    expect(downloadAdvice('getaddrinfo ENOTFOUND huggingface.co')).toMatch(/proxy/)
  })
})
