// @vitest-environment jsdom
import { act, cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it } from 'vitest'
import type { AskResult } from '../../../shared/answer'
import { askResult, COLLECTIONS } from '../test/fakeDocent'
import { renderApp, resetApp } from '../test/setup'

afterEach(() => {
  cleanup()
  resetApp()
})

const cite = (n: number, path: string, version: string) => ({
  n,
  chunk_id: `c-${n}`,
  path,
  heading: 'Tuning > Pressure advance',
  version,
  page: null,
  kind: 'Guide',
  collection: 'printer',
})

async function answerWith(result: Partial<AskResult>) {
  const { docent } = await renderApp({ 'collections.list': () => COLLECTIONS })
  const box = screen.getByRole('textbox', { name: 'Ask a question about your documents' })
  await userEvent.click(box)
  await userEvent.keyboard('How do I tune pressure advance on a direct drive extruder?{Enter}')
  act(() => docent.emit('ask.event', { requestId: 'req-1', event: { type: 'final', result: askResult(result) } }))
  return docent
}

const removed = [
  {
    text: 'Use a factor of .020 for direct drive extruders.',
    cited: [2],
    code: 'misattached' as const,
    reason: 'the cited passage gives .020 for long bowden extruders, not for direct drive',
  },
]

describe('a verified answer, sentence by sentence', () => {
  it('gives every sentence its own marker: its chips, its release, and whether Docent copied it from the source', async () => {
    await answerWith({
      answer:
        'Print the **tuning tower** [1]. Measure the height of the best corner [1].\n\n1. Set `PRESSURE_ADVANCE` to the computed value.\n\nIn v2 the default factor is .005 for direct drive [2].',
      citations: [cite(1, 'docs/v1/tuning.md', 'v1'), cite(2, 'docs/v2/tuning.md', 'v2')],
      sentences: [
        { text: 'Print the tuning tower.', citations: [1], version: 'v1' },
        { text: 'Measure the height of the best corner.', citations: [1], version: 'v1' },
        { text: 'Set PRESSURE_ADVANCE to the computed value.', citations: [1], version: 'v1', added: 'procedure' },
        { text: 'In v2 the default factor is .005 for direct drive.', citations: [2], version: 'v2' },
      ],
    })
    const answer = await screen.findByLabelText('Answer')
    const claims = Array.from(answer.querySelectorAll('[data-claim]'))
    expect([...new Set(claims.map((c) => c.getAttribute('data-claim')))]).toEqual(['0', '1', '2', '3'])
    // The Markdown rendering is kept: emphasis, a numbered step, inline code.
    expect(answer.querySelector('strong')?.textContent).toBe('tuning tower')
    expect(answer.querySelector('ol li code')?.textContent).toBe('PRESSURE_ADVANCE')

    // Each sentence is followed by its chips; the step the engine added had none in the text and gets its own.
    const after = (i: number) => {
      const spans = answer.querySelectorAll(`[data-claim="${i}"]`)
      const out: string[] = []
      let el = spans[spans.length - 1]!
      while (el.parentElement && el.parentElement !== answer && !el.nextElementSibling) el = el.parentElement
      for (let n = el.nextElementSibling; n && !n.hasAttribute('data-claim'); n = n.nextElementSibling)
        out.push(n.textContent ?? '')
      return out
    }
    expect(after(0)).toEqual(['1', 'v1'])
    expect(after(2)).toEqual(['1', 'v1', 'copied from the source'])
    expect(after(3)).toEqual(['2', 'v2'])
    expect(answer.querySelectorAll('.claim-added').length).toBeGreaterThan(0)
    expect(within(answer).getAllByRole('button', { name: /^Source 1: docs\/v1\/tuning.md/ })).toHaveLength(3)
    // Labels are not answer text: ".005" is checked, the release "v2" never is.
    expect(answer.querySelectorAll('mark.unverified-claim')).toHaveLength(0)
  })

  it('shows a removed sentence under the answer, struck through with its reason, never as part of the answer', async () => {
    await answerWith({
      answer: 'Print the tuning tower and measure the best corner [1].',
      citations: [cite(1, 'docs/tuning.md', 'v1')],
      sentences: [{ text: 'Print the tuning tower and measure the best corner.', citations: [1] }],
      removed,
      // The engine says it in words too, for clients without the list (the CLI, MCP): said once here.
      warnings: ['1 sentence was removed: the cited passages do not say it.'],
    })
    const answer = await screen.findByLabelText('Answer')
    expect(answer.textContent).not.toContain('.020')
    expect(screen.getAllByText(/1 sentence was removed/)).toHaveLength(1)
    const note = screen.getByRole('note', { name: 'Removed sentences' })
    expect(note.tagName).toBe('DETAILS')
    expect((note as HTMLDetailsElement).open).toBe(false)
    expect(within(note).getByText('1 sentence was removed: the cited passages do not say it')).toBeTruthy()
    await userEvent.click(within(note).getByText('1 sentence was removed: the cited passages do not say it'))
    expect((note as HTMLDetailsElement).open).toBe(true)
    const struck = within(note).getByText('Use a factor of .020 for direct drive extruders.')
    expect(struck.tagName).toBe('DEL')
    expect(within(note).getByText('the cited passage gives .020 for long bowden extruders, not for direct drive')).toBeTruthy()
    expect(note.textContent).toContain('(removed, not verified)')
    // Nothing verified-looking about it: no chip, no claim marker, no check mark.
    expect(note.querySelector('.cite-chip, [data-claim], svg path[d="M5 12l5 5 9-10"]')).toBeNull()
  })

  it('says how many were removed when there are several, and lists what the documents did not answer', async () => {
    await answerWith({
      answer: 'Print the tuning tower [1].',
      citations: [cite(1, 'docs/tuning.md', 'v1')],
      sentences: [{ text: 'Print the tuning tower.', citations: [1] }],
      removed: [
        ...removed,
        {
          ...removed[0]!,
          text: 'It takes ten minutes.',
          code: 'unsupported_number',
          reason: 'no cited passage says "ten minutes"',
        },
      ],
      unanswered_parts: ['how long the calibration takes'],
    })
    await screen.findByLabelText('Answer')
    expect(screen.getByText('2 sentences were removed: the cited passages do not say them')).toBeTruthy()
    const parts = screen.getByRole('note', { name: 'Not answered' })
    expect(within(parts).getByText('Not answered by the documents:')).toBeTruthy()
    expect(within(parts).getByText('how long the calibration takes')).toBeTruthy()
  })

  it('says a sentence was removed for being about something the release lacks, not for its passages', async () => {
    await answerWith({
      answer: 'Servers offer tools [1].',
      citations: [cite(1, 'docs/1.0/overview.md', '1.0')],
      sentences: [{ text: 'Servers offer tools.', citations: [1] }],
      removed: [
        {
          text: 'Servers also offer tasks for long-running work.',
          cited: [1],
          code: 'not_in_release',
          reason: 'the 1.0 specification does not mention tasks; only guide pages of that release do',
        },
      ],
    })
    await screen.findByLabelText('Answer')
    const note = screen.getByRole('note', { name: 'Removed sentences' })
    expect(within(note).getByText('1 sentence was removed: it is about something this release does not have')).toBeTruthy()
    expect(within(note).getByText('Servers also offer tasks for long-running work.').tagName).toBe('DEL')
    expect(note.textContent).not.toContain('the cited passages do not say it')
  })

  it('says a sentence was removed for answering something other than what was asked', async () => {
    await answerWith({
      answer: 'When a request cannot be processed until an elicitation is completed, the server MAY return a -32042 error [1].',
      citations: [cite(1, 'specification/2025-11-25/client/elicitation.mdx', '2025-11-25')],
      sentences: [
        {
          text: 'When a request cannot be processed until an elicitation is completed, the server MAY return a -32042 error.',
          citations: [1],
          added: 'quote',
        },
      ],
      removed: [
        {
          text: 'Invalid cursors SHOULD result in an error with code -32602 (Invalid params).',
          cited: [2],
          code: 'off_target',
          reason: 'It does not answer about "-32042", which the question asks about, and neither do the passages it cites.',
        },
      ],
    })
    await screen.findByLabelText('Answer')
    const note = screen.getByRole('note', { name: 'Removed sentences' })
    expect(within(note).getByText('1 sentence was removed: it answers something other than what was asked')).toBeTruthy()
    expect(within(note).getByText('Invalid cursors SHOULD result in an error with code -32602 (Invalid params).').tagName).toBe(
      'DEL',
    )
    expect(note.textContent).toContain('which the question asks about')
  })

  it('says a sentence was removed for saying the opposite of the passage sentence it copies', async () => {
    await answerWith({
      answer: 'The client SHOULD NOT send requests other than pings before the server has responded [1].',
      citations: [cite(1, 'specification/2025-06-18/basic/lifecycle.mdx', '2025-06-18')],
      sentences: [
        { text: 'The client SHOULD NOT send requests other than pings before the server has responded.', citations: [1] },
      ],
      removed: [
        {
          text: 'The server SHOULD send requests before it receives the initialized notification.',
          cited: [1],
          code: 'opposite',
          reason:
            'it leaves out the "not" of the passage sentence it copies ("The server SHOULD NOT send requests other than pings and logging before receiving the initialized notification.")',
        },
      ],
    })
    await screen.findByLabelText('Answer')
    const note = screen.getByRole('note', { name: 'Removed sentences' })
    expect(within(note).getByText('1 sentence was removed: the cited passages say the opposite')).toBeTruthy()
    expect(
      within(note).getByText('The server SHOULD send requests before it receives the initialized notification.').tagName,
    ).toBe('DEL')
    expect(note.textContent).toContain('leaves out the "not"')
  })

  it('a quoted answer says the model gave none that checks out, marks each sentence as copied, and strikes the draft', async () => {
    const notice =
      'Quoted from the sources: the model gave no answer that checks out, so these are the sentences of the best passages that hold most of what you asked.'
    await answerWith({
      answer: 'Increase the pressure advance value until corners print sharp [1].',
      citations: [cite(1, 'docs/v1/tuning.md', 'v1')],
      sentences: [{ text: 'Increase the pressure advance value until corners print sharp.', citations: [1], added: 'quote' }],
      notices: [notice],
      removed,
      warnings: ['1 sentence was removed: the cited passages do not say it.'],
    })
    const answer = await screen.findByLabelText('Answer')
    expect(answer.textContent).toContain('copied from the source')
    expect(answer.textContent).not.toContain('.020')
    expect(screen.getByText(notice)).toBeTruthy()
    const note = screen.getByRole('note', { name: 'Removed sentences' })
    expect(within(note).getByText('Use a factor of .020 for direct drive extruders.').tagName).toBe('DEL')
  })

  it('an abstention shows its explanation above the closest sections, and the sentences it removed', async () => {
    await answerWith({
      abstained: true,
      reason: 'not_in_context',
      explanation: 'The 2024-11-05 docs never mention audio; it first appears in 2025-03-26.',
      removed,
      closest: [
        {
          chunk_id: 'c-content',
          collection: 'mcp-docs',
          path: 'specification/2024-11-05/server/tools.mdx',
          heading: 'Tools > Content types',
          version: '2024-11-05',
          kind: 'Specification',
          page: null,
          snippet: 'Text content, image content, embedded resources.',
          scores: { keyword_rank: 1, vector_rank: 2, bm25: 3, rrf: 0.03, cosine: 0.4, reranker: null },
        },
      ],
    })
    const note = await screen.findByRole('note', { name: 'No answer' })
    const explanation = within(note).getByText('The 2024-11-05 docs never mention audio; it first appears in 2025-03-26.')
    const closest = within(note).getByText(/The closest sections/)
    expect(explanation.compareDocumentPosition(closest) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
    // The explanation says more than the generic reason, which it replaces.
    expect(within(note).queryByText('The closest sections were found, but none of them contains the answer.')).toBeNull()
    expect(within(note).getByRole('note', { name: 'Removed sentences' })).toBeTruthy()
    expect(screen.queryByLabelText('Answer')).toBeNull()
  })

  it('an answer stored before sentences existed renders as before', async () => {
    await answerWith({
      answer: 'Print the tuning tower [1].',
      citations: [cite(1, 'docs/tuning.md', 'v1')],
    })
    const answer = await screen.findByLabelText('Answer')
    expect(answer.querySelectorAll('[data-claim]')).toHaveLength(0)
    expect(answer.querySelectorAll('.cite-chip')).toHaveLength(1)
    expect(screen.queryByRole('note', { name: 'Removed sentences' })).toBeNull()
  })

  it('a source copied word for word into other releases is listed once, naming them', async () => {
    const same = (version: string) => ({
      chunk_id: `c-${version}`,
      path: `docs/${version}/tools/debugging.md`,
      version,
      page: null,
    })
    await answerWith({
      answer: 'Log files are written to ~/Library/Logs/Claude [1].',
      citations: [
        {
          ...cite(1, 'docs/2025-06-18/tools/debugging.md', '2025-06-18'),
          same_in: [same('2024-11-05'), same('2025-03-26'), same('draft')],
        },
      ],
    })
    const sources = await screen.findByRole('region', { name: 'Sources' })
    expect(within(sources).getAllByRole('listitem')).toHaveLength(1)
    expect(within(sources).getByText('also word for word in 2024-11-05, 2025-03-26 and draft')).toBeTruthy()
  })
})
