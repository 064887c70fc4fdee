// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import { COLLECTIONS } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'

afterEach(() => {
  cleanup()
  resetApp()
})

/**
 * A re-sync the engine held back because it would remove every document (import.done code
 * would_empty_collection) is a question for the person, not an error: cancel keeps everything,
 * confirming re-syncs with allowEmpty.
 */
describe('library: a sync that would empty a collection', () => {
  const heldBack = (jobId: string) => ({
    jobId,
    report: null,
    error: 'This sync would remove all 120 documents of "mcp-docs": … Nothing was removed.',
    code: 'would_empty_collection' as const,
  })

  it('asks before going on, and re-syncs with allowEmpty only when confirmed', async () => {
    let n = 0
    const { docent } = await renderApp({
      'collections.list': () => COLLECTIONS,
      'collections.resync': () => ({ jobId: `job-${++n}` }),
    })
    await userEvent.click(await screen.findByRole('button', { name: 'Re-sync mcp-docs' }))
    expect(docent.callsTo('collections.resync')).toEqual([{ collection: 'mcp-docs' }])

    act(() => docent.emit('import.done', heldBack('job-1')))
    const dialog = await screen.findByRole('alertdialog')
    expect(within(dialog).getByText('Empty “mcp-docs”?')).toBeTruthy()
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }))
    expect(docent.callsTo('collections.resync')).toHaveLength(1)
    expect(screen.getByText(/Nothing was removed: the folder is empty or not there/)).toBeTruthy()

    await userEvent.click(screen.getByRole('button', { name: 'Re-sync mcp-docs' }))
    act(() => docent.emit('import.done', heldBack('job-2')))
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Remove all documents' }))
    expect(docent.callsTo('collections.resync').at(-1)).toEqual({ collection: 'mcp-docs', allowEmpty: true })
  })
})
