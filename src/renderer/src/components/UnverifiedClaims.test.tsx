// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import { askResult, COLLECTIONS } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'

/**
 * A number or quote the cited passages do not contain (AskResult.unverified_claims) is shown
 * marked as not verified in the answer, never as part of the verified text.
 */

afterEach(() => {
  cleanup()
  resetApp()
})

const citation = {
  n: 1,
  chunk_id: 'c1',
  path: 'a.md',
  heading: '',
  version: null,
  page: null,
  kind: null,
  collection: 'mcp-docs',
}

async function showAnswer(over: Parameters<typeof askResult>[0]) {
  const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
  await userEvent.click(screen.getByRole('textbox', { name: 'Ask a question about your documents' }))
  await userEvent.keyboard('q{Enter}')
  act(() => docent.emit('ask.event', { requestId: 'req-1', event: { type: 'final', result: askResult(over) } }))
  return screen.findByLabelText('Answer')
}

describe('unverified claims in an answer', () => {
  it('are marked in place with a title and words for screen readers', async () => {
    const answer = await showAnswer({
      answer: 'Requests time out after 45 seconds [1]. Use `docent sync` [1].',
      citations: [citation],
      warnings: ['The number 45 does not appear in the cited passages.'],
      unverified_claims: ['45'],
    })
    const mark = answer.querySelector('mark[data-unverified]')
    expect(mark?.textContent).toBe('45')
    expect(mark?.getAttribute('title')).toMatch(/not verified/)
    expect(within(answer).getByText('(not verified)', { exact: false })).toBeTruthy()
    expect(answer.querySelectorAll('mark[data-unverified]')).toHaveLength(1)
    expect(screen.getByText('The number 45 does not appear in the cited passages.')).toBeTruthy()
  })

  it('leave a fully supported answer (or one stored before the field existed) unmarked', async () => {
    const answer = await showAnswer({ answer: 'Requests time out after 30 seconds [1].', citations: [citation] })
    expect(answer.querySelector('mark[data-unverified]')).toBeNull()
  })
})
