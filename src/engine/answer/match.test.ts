import { describe, expect, it } from 'vitest'
import { appendMarkers, renderAnswer } from './markers'
import {
  answerNumbers,
  answerQuotes,
  answerTerms,
  containsNumber,
  containsQuote,
  haystack,
  inlineMarkers,
  stripMarkers,
} from './match'
import type { PromptPassage } from './prompt'

const doc = (text: string, over: Partial<PromptPassage> = {}): PromptPassage => ({
  n: 1,
  chunk_id: 'd1',
  path: 'docs/limits.md',
  heading: 'Limits',
  kind: 'Docs',
  version: 'v2.4.1',
  page: null,
  text,
  ...over,
})

/** Numbers and quotes of `answer` that `text` (as a passage) does not contain, as the answer writes them. */
const missing = (answer: string, text: string, over: Partial<PromptPassage> = {}) => {
  const hay = haystack(doc(text, over))
  return [
    ...answerNumbers(answer).filter((t) => !containsNumber(hay, t)),
    ...answerQuotes(answer).filter((q) => !containsQuote(hay, q)),
  ]
}

describe('what a claim must find in its passages', () => {
  it('flags a number or quote that is not there, as the answer writes it', () => {
    expect(missing('The limit is 1,500 requests.', 'The limit is 1,000 requests.')).toEqual(['1,500'])
    expect(missing('Run "docent purge".', 'Run `docent sync` to update.')).toEqual(['docent purge'])
    expect(missing('Version 2.4.2 added it.', 'Added in 2.4.1.')).toEqual(['2.4.2'])
    expect(missing('It waits 300 ms.', 'It waits 30 ms.')).toEqual(['300'])
  })

  it('does not flag digit groups written differently (1,000 / 1000 / 1 000)', () => {
    expect(missing('The limit is 1000 requests.', 'The limit is 1,000 requests.')).toEqual([])
    expect(missing('The limit is 1,000 requests.', 'The limit is 1000 requests.')).toEqual([])
    expect(missing('Up to 1,000,000 rows.', 'Up to 1\u202F000\u202F000 rows.')).toEqual([])
  })

  it('keeps decimals written without a leading zero (FACTOR=.020) and tells them apart', () => {
    expect(answerNumbers('Use FACTOR=.020 for bowden')).toEqual(['.020'])
    expect(missing('Use FACTOR=.020.', 'FACTOR=.005 for direct drive.')).toEqual(['.020'])
    expect(missing('Use FACTOR=.005.', 'FACTOR=.005 for direct drive.')).toEqual([])
  })

  it('does not flag list markers, citation markers or single digits', () => {
    expect(missing('Steps:\n1. Open it [1].\n2. Close it [1].\n10. Done [1].', 'Open it, then close it. Done.')).toEqual([])
    expect(missing('It retries 3 times [1].', 'It retries three times.')).toEqual([])
  })

  it('finds version strings and dates in the passage label, path or text', () => {
    expect(missing('Since v2.4.1.', 'Since this release.')).toEqual([])
    expect(missing('In 2025-06-18 it changed.', 'It changed.', { path: 'spec/2025-06-18/x.md' })).toEqual([])
  })

  it('finds numbers the passage writes as words, and ranges written with "to"', () => {
    expect(missing('Timeouts of 30 seconds.', 'Set a timeout of thirty seconds.')).toEqual([])
    expect(missing('Between 25 and 12 items.', 'Between twenty-five and twelve items.')).toEqual([])
    expect(missing('It keeps 10-20 entries.', 'It keeps 10 to 20 entries.')).toEqual([])
    expect(missing('It keeps 10-25 entries.', 'It keeps 10 to 20 entries.')).toEqual(['10-25'])
  })

  it('matches quotes across Markdown emphasis, code marks, curly quotes, dashes and elisions', () => {
    expect(missing('It says "must not block".', 'The call **must not** block.')).toEqual([])
    expect(missing('Call `tools/list`.', 'Call `tools/list` first.')).toEqual([])
    expect(missing('It says “don’t retry”.', "It says don't retry.")).toEqual([])
    expect(missing('The "read-only" mode.', 'The read–only mode.')).toEqual([])
    expect(missing('It says "servers must ... respond".', 'Servers must always respond.')).toEqual([])
    expect(missing('It says "servers must ... reply".', 'Servers must always respond.')).toEqual(['servers must ... reply'])
  })
})

describe('appendMarkers', () => {
  it('puts the markers before a closing full stop, after code fences and lists on their own line', () => {
    expect(appendMarkers('It works.', [2])).toBe('It works [2].')
    expect(appendMarkers('It works', [1, 3])).toBe('It works [1][3]')
    expect(appendMarkers('Is it "done."', [1])).toBe('Is it "done [1]."')
    expect(appendMarkers('Run:\n```sh\nnpm ci\n```', [1])).toBe('Run:\n```sh\nnpm ci\n```\n\n[1]')
    expect(appendMarkers('Steps:\n- one\n- two', [1])).toBe('Steps:\n- one\n- two\n\n[1]')
    expect(appendMarkers('Wait...', [1])).toBe('Wait... [1]')
    // A mark named in brackets is not the sentence's end (p06 of mcp-docs-people: "…hyphen (-), and dot (.)").
    expect(appendMarkers('Allowed: hyphen (-), and dot (.)', [1])).toBe('Allowed: hyphen (-), and dot (.) [1]')
  })
})

describe('renderAnswer', () => {
  it('labels a sentence with its release, after a list item’s marker so the item stays an item', () => {
    const text = renderAnswer([
      { text: 'Tasks track durable requests.', citations: [1], version: '2025-11-25' },
      { text: '- Move tasks out of the core protocol.', citations: [2], version: '2026-07-28' },
      { text: '- Remove batching in 2025-06-18.', citations: [3], version: '2025-06-18' },
    ])
    expect(text).toBe(
      '2025-11-25: Tasks track durable requests [1].\n- 2026-07-28: Move tasks out of the core protocol [2].\n- Remove batching in 2025-06-18 [3].',
    )
  })

  it('labels no code block or table row: the label would make its fence or its pipes a line of text', () => {
    // Seen with the real 1.5B model (p27 of mcp-docs-people): "2025-11-25: ```" showed the JSON as prose.
    const text = renderAnswer([
      { text: 'Basic sampling:', citations: [2], version: '2025-11-25' },
      { text: '```\n{ "sampling": {} }\n```', citations: [2], version: '2025-11-25' },
      { text: '| field | type |\n| --- | --- |\n| tools | object |', citations: [3], version: '2025-11-25' },
    ])
    expect(text).toBe(
      '2025-11-25: Basic sampling [2]:\n```\n{ "sampling": {} }\n```\n\n[2]\n| field | type |\n| --- | --- |\n| tools | object [3] |',
    )
  })
})

describe('renderAnswer, a list written inside one sentence', () => {
  it('shows three or more items after the colon as the list they are, the words unchanged', () => {
    // q05 of mcp-docs' fit half, with the real 1.5B model.
    const text = renderAnswer([
      {
        text: 'A tool definition includes: - name: Unique identifier for the tool - title: Optional name - description: What it does',
        citations: [1],
      },
      { text: 'Clients MUST consider annotations untrusted.', citations: [1] },
    ])
    expect(text).toBe(
      'A tool definition includes:\n- name: Unique identifier for the tool\n- title: Optional name\n- description: What it does.\n\n[1]\n\nClients MUST consider annotations untrusted [1].',
    )
    // Two items after a colon, or a dash inside prose, stay as written.
    expect(renderAnswer([{ text: 'Ports: - 8000 - 9000 are used.', citations: [1] }])).toBe('Ports: - 8000 - 9000 are used [1].')
  })
})

describe('renderAnswer after a block', () => {
  it('starts prose after code or a list item as a paragraph, so a block’s markers never open the next sentence', () => {
    // Seen with the real 1.5B model (mcp-docs q39): "```\n\n[1] This array-based structure …".
    const text = renderAnswer([
      { text: 'The server can notify connected clients:', citations: [1] },
      { text: '```json\n{"method": "notifications/tools/list_changed"}\n```', citations: [1] },
      { text: 'This array-based structure exposes many tools.', citations: [2] },
      { text: '- Unknown tools', citations: [3] },
      { text: 'Both are JSON-RPC errors.', citations: [3] },
    ])
    expect(text).toBe(
      'The server can notify connected clients [1]:\n```json\n{"method": "notifications/tools/list_changed"}\n```\n\n[1]\n\nThis array-based structure exposes many tools [2].\n- Unknown tools [3]\n\nBoth are JSON-RPC errors [3].',
    )
  })
})

describe('answer text parsing', () => {
  it('finds inline markers in their usual forms, not links or indexes, and strips them', () => {
    expect(inlineMarkers('a [1] b [2, 3] c [4][5] d [6-8]')).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(inlineMarkers('see [the docs](http://x) and items[0] and `arr[1]`')).toEqual([])
    expect(stripMarkers('It works [1][2].')).toBe('It works.')
  })

  it('keeps numbers whole and skips single digits, list markers and citation markers', () => {
    expect(answerNumbers('1. Use 2025-03-26 and -32602 [3], 404 and 1.5, 3 retries')).toEqual([
      '2025-03-26',
      '-32602',
      '404',
      '1.5',
    ])
  })

  it('finds quoted strings', () => {
    expect(answerQuotes('Use "accept" or `tools/call` or “cancel”')).toEqual(['accept', 'tools/call', 'cancel'])
  })

  it('finds headers, method paths and identifiers, not plain words', () => {
    expect(
      answerTerms(
        'Send Last-Event-ID and Mcp-Session-Id on tools/call with progressToken or max_tokens, as a well-known, real-time JSON-RPC and/or e.g. Streamable HTTP call [1].',
      ),
    ).toEqual(['Last-Event-ID', 'Mcp-Session-Id', 'tools/call', 'progressToken', 'max_tokens', 'JSON-RPC'])
  })
})
