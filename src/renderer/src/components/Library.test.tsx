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

const progress = (over: Record<string, unknown> = {}) => ({
  jobId: 'job-1',
  phase: 'importing' as const,
  collection: 'mcp-docs',
  filesTotal: 40,
  filesDone: 12,
  currentFile: 'specification/2025-03-26/basic/transports.mdx',
  imported: 12,
  unchanged: 0,
  failed: 1,
  skipped: 0,
  chunksWritten: 80,
  textsEmbedded: 80,
  bytesTotal: 100000,
  bytesDone: 30000,
  elapsedMs: 4000,
  etaMs: 9500,
  ...over,
})

describe('library', () => {
  it('lists collections with document counts, versions and last sync', async () => {
    await renderApp({ 'collections.list': () => COLLECTIONS })
    const card = await screen.findByRole('article', { name: 'Collection mcp-docs' })
    expect(within(card).getByText('120 documents')).toBeTruthy()
    expect(within(card).getByText('4 versions')).toBeTruthy()
    expect(within(card).getByText('2025-06-18')).toBeTruthy()
    expect(within(card).getByText(/Synced 5 min ago/)).toBeTruthy()
    const other = screen.getByRole('article', { name: 'Collection widget-manual' })
    expect(within(other).getByText('Synced never')).toBeTruthy()
  })

  it('counts pages read by text recognition, flags those to check, and switches recognition off', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    const card = await screen.findByRole('article', { name: 'Collection widget-manual' })
    expect(within(card).getByText(/12 pages read by text recognition/)).toBeTruthy()
    expect(within(card).getByText(/1 page to check \(1 document\)/)).toBeTruthy()
    const other = screen.getByRole('article', { name: 'Collection mcp-docs' })
    expect(within(other).queryByText(/read by text recognition/)).toBeNull()
    const box = within(card).getByRole('checkbox', { name: /Read scanned pages and images/ })
    expect((box as HTMLInputElement).checked).toBe(true)
    await userEvent.click(box)
    expect(docent.callsTo('collections.setOcr')).toEqual([{ collection: 'widget-manual', on: false }])
  })

  it('shows recognition progress as the page being recognised', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    act(() =>
      docent.emit(
        'import.progress',
        progress({ currentFile: 'scans/manual.pdf', fileProgress: { stage: 'ocr', done: 2, total: 12 } }),
      ),
    )
    const group = await screen.findByRole('group', { name: 'Import progress for mcp-docs' })
    expect(within(group).getByText(/recognising text, page 3 of 12/)).toBeTruthy()
  })

  it('shows import progress with files done/total, current file, rate and ETA, and cancels', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    // The first event past the scan starts the clock; no estimate until a batch has been embedded.
    act(() =>
      docent.emit(
        'import.progress',
        progress({ filesDone: 0, imported: 0, chunksWritten: 0, textsEmbedded: 0, bytesDone: 0, elapsedMs: 0 }),
      ),
    )
    const group = await screen.findByRole('group', { name: 'Import progress for mcp-docs' })
    expect(within(group).getByText('estimating…')).toBeTruthy()
    // Two batches are too little to tell the rate of this folder...
    act(() =>
      docent.emit(
        'import.progress',
        progress({ filesDone: 4, chunksWritten: 27, textsEmbedded: 27, bytesDone: 10000, elapsedMs: 1333 }),
      ),
    )
    act(() =>
      docent.emit(
        'import.progress',
        progress({ filesDone: 8, chunksWritten: 53, textsEmbedded: 53, bytesDone: 20000, elapsedMs: 2667 }),
      ),
    )
    expect(within(group).getByText('estimating…')).toBeTruthy()
    // ...three are enough: 30,000 bytes finished in 4 s (80 passages embedded), 70,000 bytes left at that rate, about 9.3 s.
    act(() => docent.emit('import.progress', progress()))
    expect(within(group).getByText('12 / 40 files')).toBeTruthy()
    expect(within(group).getByText('20 passages/s embedded')).toBeTruthy()
    expect(within(group).getByText('about 10 s left')).toBeTruthy()
    expect(within(group).getByText('specification/2025-03-26/basic/transports.mdx')).toBeTruthy()
    const bar = within(group).getByRole('progressbar')
    expect(bar.getAttribute('aria-valuenow')).toBe('12')
    expect(bar.getAttribute('aria-valuemax')).toBe('40')

    await userEvent.click(within(group).getByRole('button', { name: 'Cancel import' }))
    expect(docent.callsTo('jobs.cancel')).toEqual([{ jobId: 'job-1' }])
    expect(within(group).getByText('Cancelling…')).toBeTruthy()
  })

  // Issue 26: a 5,000-page PDF took a minute to parse with the same "12 / 40 files" on screen.
  it('shows how far the current file is while a long one is parsed', async () => {
    const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
    act(() =>
      docent.emit(
        'import.progress',
        progress({ currentFile: 'manuals/big.pdf', fileProgress: { stage: 'pages', done: 1250, total: 5000 } }),
      ),
    )
    const group = await screen.findByRole('group', { name: 'Import progress for mcp-docs' })
    expect(within(group).getByText(/manuals\/big\.pdf/).textContent).toBe('manuals/big.pdf (page 1,250 of 5,000)')
    act(() =>
      docent.emit(
        'import.progress',
        progress({ currentFile: 'manuals/big.pdf', fileProgress: { stage: 'pages', done: 5000, total: 5000 } }),
      ),
    )
    expect(within(group).getByText(/manuals\/big\.pdf/).textContent).toBe('manuals/big.pdf (page 5,000 of 5,000)')
  })

  it('lists the files that failed and were skipped, with reasons', async () => {
    const { docent } = await renderApp({
      'collections.list': () => COLLECTIONS,
      'collections.failures': ({ collection }) =>
        collection === 'mcp-docs' ? [{ path: 'broken/scan.pdf', reason: 'The PDF has no text layer (scanned pages).' }] : [],
    })
    act(() => docent.emit('import.progress', progress()))
    act(() =>
      docent.emit('import.done', {
        jobId: 'job-1',
        error: null,
        report: {
          collection: 'mcp-docs',
          root: '/docs/mcp',
          files_seen: 40,
          imported: 37,
          unchanged: 0,
          skipped: 1,
          failed: [{ path: 'notes/locked.docx', reason: 'The file is password-protected.' }],
          skipped_files: [{ path: 'assets/logo.png', reason: 'not a document format Docent reads' }],
          pruned: 0,
          chunks_total: 900,
          chunks_written: 300,
          texts_embedded: 300,
          cancelled: false,
          notices: [],
          ms: 12300,
          timings: { walk: 10, read: 2000, parse: 3000, chunk: 800, embed: 6000, write: 490 },
        },
      }),
    )
    const card = screen.getByRole('article', { name: 'Collection mcp-docs' })
    expect(await within(card).findByText(/37 files imported, 1 failed, 1 skipped in 12 s/)).toBeTruthy()
    await userEvent.click(within(card).getByText(/files failed/))
    const list = within(card).getByRole('list', { name: 'Files that were not imported' })
    expect(within(list).getByText('broken/scan.pdf')).toBeTruthy()
    expect(within(list).getByText('The PDF has no text layer (scanned pages).')).toBeTruthy()
    expect(within(list).getByText('notes/locked.docx')).toBeTruthy()
    expect(within(list).getByText('The file is password-protected.')).toBeTruthy()
    expect(within(list).getByText('Skipped: not a document format Docent reads')).toBeTruthy()
  })

  it('re-syncs, and removes only after confirmation', async () => {
    let removed: string[] = []
    const { docent } = await renderApp({
      'collections.list': () => COLLECTIONS.filter((c) => !removed.includes(c.id)),
      'collections.remove': ({ collection }) => {
        removed = [...removed, collection]
        return { removed: true }
      },
    })
    await userEvent.click(await screen.findByRole('button', { name: 'Re-sync widget-manual' }))
    expect(docent.callsTo('collections.resync')).toEqual([{ collection: 'widget-manual' }])

    // While it re-syncs, it cannot be removed.
    expect((screen.getByRole('button', { name: 'Remove widget-manual' }) as HTMLButtonElement).disabled).toBe(true)

    await userEvent.click(screen.getByRole('button', { name: 'Remove mcp-docs' }))
    const dialog = screen.getByRole('alertdialog')
    expect(within(dialog).getByText('Remove “mcp-docs”?')).toBeTruthy()
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }))
    expect(docent.callsTo('collections.remove')).toEqual([])

    await userEvent.click(screen.getByRole('button', { name: 'Remove mcp-docs' }))
    await userEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Remove' }))
    expect(docent.callsTo('collections.remove')).toEqual([{ collection: 'mcp-docs' }])
    expect(screen.queryByRole('article', { name: 'Collection mcp-docs' })).toBeNull()
  })

  it('"Add folder" imports the picked folder', async () => {
    const { docent } = await renderApp()
    docent.pickFolderAnswer = '/home/me/manuals'
    await userEvent.click(screen.getByRole('button', { name: 'Add folder' }))
    expect(docent.callsTo('collections.import')).toEqual([{ folder: '/home/me/manuals' }])
  })

  it('subscribes to each event once and leaves no listener behind', async () => {
    const { docent } = await renderApp()
    expect(docent.listenerCount('import.progress')).toBe(1)
    expect(docent.listenerCount('ask.event')).toBe(1)
    expect(docent.listenerCount()).toBe(7)
    resetApp()
    expect(docent.listenerCount()).toBe(0)
  })
})
