// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import type { StoredTrace } from '../../../shared/trace'
import { useViewer } from '../stores/viewer'
import { askResult, COLLECTIONS } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'

afterEach(() => {
  cleanup()
  resetApp()
})

/** A stored trace with the parts the panel reads; the rest of AskTrace is not needed to show it. */
const trace = {
  id: 'trace-1',
  thread_id: 'thread-1',
  question: 'How do I tune pressure advance on a direct drive extruder?',
  outcome: 'answer',
  ms: 1234,
  created_at: new Date().toISOString(),
  data: {
    version: 1,
    question: 'How do I tune pressure advance on a direct drive extruder?',
    stages_ms: {},
    claims: [
      {
        text: 'Print the tuning tower.',
        cited: [1],
        ok: true,
        failure: null,
        reason: null,
        coverage: 1,
        best_cosine: 0.91,
        repaired: null,
      },
      {
        text: 'Use a factor of .020 for direct drive extruders.',
        cited: [2],
        ok: false,
        failure: 'misattached',
        reason: 'the cited passage gives .020 for long bowden extruders, not for direct drive',
        coverage: 0.8,
        best_cosine: 0.62,
        repaired: null,
      },
    ],
    result: askResult(),
  },
} as unknown as StoredTrace

describe('trace panel', () => {
  it('shows the support check of every sentence, a removed one struck through with its reason', async () => {
    await renderApp({ 'collections.list': () => COLLECTIONS, 'trace.get': () => trace })
    await act(async () => {
      await useViewer.getState().openTrace('trace-1', trace.question)
    })
    const panel = await screen.findByRole('complementary', { name: 'Answer trace' })
    const table = within(panel).getByRole('table', { name: 'Support check of every sentence' })
    const rows = within(table).getAllByRole('row').slice(1)
    expect(rows).toHaveLength(2)
    expect(within(rows[0]!).getByText('supported')).toBeTruthy()
    expect(within(rows[0]!).queryByText('Print the tuning tower.')?.tagName).toBe('TD')
    const struck = within(rows[1]!).getByText('Use a factor of .020 for direct drive extruders.')
    expect(struck.tagName).toBe('DEL')
    expect(
      within(rows[1]!).getByText('removed: the cited passage gives .020 for long bowden extruders, not for direct drive'),
    ).toBeTruthy()
    expect(rows[1]!.textContent).toContain('0.62')
  })
})
