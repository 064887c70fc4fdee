import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import { appendMarkers, renderAnswer } from './markers'
import { completeFromSources, type KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { MAX_NESTED, wholeTables } from './readable'

/**
 * Lines taken out of a table or a list read as they do in their passage (answer/readable.ts). The
 * rows and steps below are the shapes the real model's held-out answers showed, verified and
 * unreadable: a table row with no header, a header with no row, a step ending in a colon whose
 * sub-items stayed behind.
 */

// The shape of the MCP elicitation page's field table (2025-11-25).
const FIELDS = `## Request Parameters

The request carries these fields:

| Name | Type | Values | Description |
| --- | --- | --- | --- |
| mode | string | form, url | The mode of the elicitation. Optional for form mode. |
| message | string | | A human-readable message. |

Clients validate the response.`

// The shape of the Streamable HTTP transport's POST steps (2025-03-26).
const POST = `### Sending Messages to the Server

1. The client MUST use HTTP POST to send JSON-RPC messages to the MCP endpoint.
2. The client MUST include an Accept header listing application/json and text/event-stream.
3. The body of the POST request MUST be one of the following:
   - a single JSON-RPC request, notification, or response
   - an array batching one or more requests and/or notifications
4. If the server initiates an SSE stream:
   - The SSE stream SHOULD eventually include one JSON-RPC response per request.
     It may take a while.
   - The server MAY send JSON-RPC requests before the response.
     - Deeper detail that stays in the source.
5. Disconnection MAY occur at any time.`

const passage = (n: number, text: string): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading: 'h', path: 'p.md', version: null, kind: null }) as unknown as PromptPassage

const tables = (kept: KeptSentence[], passages: PromptPassage[]) => {
  const repairs: VerificationRepair[] = []
  const out = wholeTables(kept, new Map(passages.map((p) => [p.n, p])), (p) => p.text, repairs)
  return { out, repairs }
}

describe('a table row', () => {
  it('is shown under its table header from the cited passage, and the app draws a table', () => {
    const { out, repairs } = tables(
      [
        { text: 'URL mode keeps credentials away from the client.', cites: [1] },
        {
          text: '| mode | string | form, url | The mode of the elicitation. Optional for form mode. |',
          cites: [2],
          added: 'quote',
        },
      ],
      [passage(1, 'URL mode keeps credentials away from the client.'), passage(2, FIELDS)],
    )
    expect(out[1]).toEqual({
      text:
        '| Name | Type | Values | Description |\n| --- | --- | --- | --- |\n' +
        '| mode | string | form, url | The mode of the elicitation. Optional for form mode. |',
      cites: [2],
      added: 'quote',
    })
    expect(repairs.map((r) => r.code)).toEqual(['table_shown_whole'])
    // The markers go in the last cell, where Markdown keeps them (after the last pipe they would be a cell of their own).
    const answer = renderAnswer(out.map((s) => ({ text: s.text, citations: s.cites })))
    expect(answer).toBe(
      'URL mode keeps credentials away from the client [1].\n' +
        '| Name | Type | Values | Description |\n| --- | --- | --- | --- |\n' +
        '| mode | string | form, url | The mode of the elicitation. Optional for form mode. [2] |',
    )
  })

  it('written by the model, with whitespace of its own, joins its neighbours under one header', () => {
    const { out } = tables(
      [
        { text: '|mode|string|form, url|The mode of the elicitation. Optional for form mode.|', cites: [1] },
        { text: '| message | string |  | A human-readable message. |', cites: [1] },
        { text: 'Clients validate the response.', cites: [1] },
      ],
      [passage(1, FIELDS)],
    )
    expect(out.map((s) => s.text.split('\n').length)).toEqual([4, 1])
    // Written by the model, so not marked as copied.
    expect(out[0]!.added).toBeUndefined()
  })

  it('that is the header alone is left out, and the trace says so', () => {
    const { out, repairs } = tables(
      [
        { text: 'The request carries these fields [1]:', cites: [1] },
        { text: '| Name | Type | Values | Description |', cites: [1] },
      ],
      [passage(1, FIELDS)],
    )
    expect(out.map((s) => s.text)).toEqual(['The request carries these fields [1]:'])
    expect(repairs).toEqual([
      { code: 'table_shown_whole', message: "A table's header row was given without any of its rows; it was left out." },
    ])
  })

  it('that no cited passage holds is left as the model wrote it', () => {
    const kept = [{ text: '| a | b |', cites: [1] }]
    const { out, repairs } = tables(kept, [passage(1, FIELDS)])
    expect(out).toEqual(kept)
    expect(repairs).toEqual([])
  })
})

describe('a copied step that ends in a colon', () => {
  it('comes with the items nested under it (one level), and its markers stay on its own line', () => {
    const repairs: VerificationRepair[] = []
    const out = completeFromSources(
      [
        { text: 'The client must use HTTP POST to send JSON-RPC messages to the MCP endpoint.', cites: [1] },
        { text: 'It must include an Accept header listing application/json and text/event-stream.', cites: [1] },
      ],
      [passage(1, POST)],
      (p) => p.text,
      repairs,
    )
    expect(out.filter((s) => s.added).map((s) => s.text)).toEqual([
      '3. The body of the POST request MUST be one of the following:\n' +
        '   - a single JSON-RPC request, notification, or response\n' +
        '   - an array batching one or more requests and/or notifications',
      '4. If the server initiates an SSE stream:\n' +
        '   - The SSE stream SHOULD eventually include one JSON-RPC response per request. It may take a while.\n' +
        '   - The server MAY send JSON-RPC requests before the response.',
      '5. Disconnection MAY occur at any time.',
    ])
    expect(repairs.map((r) => r.code)).toEqual(['procedure_completed'])
    expect(appendMarkers(out[2]!.text, [1])).toBe(
      '3. The body of the POST request MUST be one of the following [1]:\n' +
        '   - a single JSON-RPC request, notification, or response\n' +
        '   - an array batching one or more requests and/or notifications',
    )
  })

  it(`brings at most ${MAX_NESTED} nested items`, () => {
    const many = Array.from({ length: MAX_NESTED + 3 }, (_, i) => `   - option ${i + 1}`).join('\n')
    const text = `1. Open the settings.\n2. Pick one of these:\n${many}\n3. Save.`
    const steps = completeFromSources([{ text: 'Open the settings.', cites: [1] }], [passage(1, text)], (p) => p.text, [])
    expect(steps[1]!.text.split('\n')).toHaveLength(1 + MAX_NESTED)
  })
})

describe('through the engine', () => {
  it('shows a table row the model wrote under its header, drawn as a table, and names it in the trace', async () => {
    const { reply } = await import('./scripted.testutil')
    const { askOverOneFile } = await import('../../test-support/ask-over-one-file')
    const { result, trace } = await askOverOneFile(
      { name: 'elicitation.md', markdown: `# Elicitation\n\n${FIELDS}\n` },
      'What does the mode field of an elicitation request hold?',
      [reply('| mode | string | form, url | The mode of the elicitation. Optional for form mode. | [1]', [1])],
    )
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.answer).toContain(
      '| Name | Type | Values | Description |\n| --- | --- | --- | --- |\n' +
        '| mode | string | form, url | The mode of the elicitation. Optional for form mode. [1] |',
    )
    expect(JSON.stringify(trace)).toContain('table_shown_whole')
  })
})

describe('sentences that end without a full stop', () => {
  it('two or more in a row are shown as a list, not run together', () => {
    const answer = renderAnswer([
      { text: 'URL mode elicitation keeps credentials away from the client.', citations: [1] },
      { text: 'The server directs users to a secure web page (served over HTTPS)', citations: [1] },
      { text: 'The page presents a branded form UI on a domain the user trusts', citations: [1] },
      { text: 'Users enter sensitive credentials directly into the secure form', citations: [1] },
    ])
    expect(answer).toBe(
      'URL mode elicitation keeps credentials away from the client [1].\n' +
        '- The server directs users to a secure web page (served over HTTPS) [1]\n' +
        '- The page presents a branded form UI on a domain the user trusts [1]\n' +
        '- Users enter sensitive credentials directly into the secure form [1]',
    )
  })

  it('one alone before more prose gets its full stop; at the end, or before a list, it is left as it is', () => {
    expect(
      renderAnswer([
        { text: 'Log files are written to ~/Library/Logs/Claude', citations: [1] },
        { text: 'Each server has its own file.', citations: [2] },
      ]),
    ).toBe('Log files are written to ~/Library/Logs/Claude [1]. Each server has its own file [2].')
    expect(renderAnswer([{ text: 'The answer is 42', citations: [1] }])).toBe('The answer is 42 [1]')
    // A sentence the model broke inside a parenthesis gets no full stop after its bracket.
    expect(
      renderAnswer([
        { text: 'Servers request LLM sampling (', citations: [1] },
        { text: 'The client keeps control.', citations: [1] },
      ]),
    ).toBe('Servers request LLM sampling ( [1] The client keeps control [1].')
    expect(
      renderAnswer([
        { text: 'Two kinds', citations: [1] },
        { text: '- one', citations: [1] },
      ]),
    ).toBe('Two kinds [1]\n- one [1]')
  })

  it('a lead-in that nothing follows, or only more prose, ends with a full stop instead of its colon', () => {
    expect(
      renderAnswer([
        { text: 'It runs through npx. No installation is required:', citations: [1] },
        { text: 'Changes accumulate in the change log.', citations: [2] },
      ]),
    ).toBe('It runs through npx. No installation is required [1]. Changes accumulate in the change log [2].')
    expect(
      renderAnswer([
        { text: 'The codes are:', citations: [1] },
        { text: '- -32602', citations: [1] },
      ]),
    ).toBe('The codes are [1]:\n- -32602 [1]')
  })

  it('a numbered item alone after prose is a bullet; a run of items in sequence keeps its numbers', () => {
    // q31's answer, held-out, with the real model: the passage's fifth item, copied by the model with its number.
    expect(
      renderAnswer([
        { text: 'The server MAY terminate the session at any time.', citations: [1] },
        { text: '5. Clients that no longer need a session SHOULD send an HTTP DELETE.', citations: [1] },
      ]),
    ).toBe(
      'The server MAY terminate the session at any time [1].\n- Clients that no longer need a session SHOULD send an HTTP DELETE [1].',
    )
    expect(
      renderAnswer([
        { text: 'The client MUST use HTTP POST.', citations: [1] },
        { text: '3. The body is one message.', citations: [1] },
        { text: '4. The server answers.', citations: [1] },
      ]),
    ).toBe('The client MUST use HTTP POST [1].\n3. The body is one message [1].\n4. The server answers [1].')
  })
})
