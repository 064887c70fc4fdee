import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import { completeFromSources } from './procedure'
import type { PromptPassage, ReplySentence } from './prompt'

/**
 * An answer stops only where its source stops: the steps of a procedure it stopped in, and the
 * items of a list it introduced ("…the following:") and did not give, are copied from the cited
 * passage, marked as added, and named in the repairs.
 */

// The shape of the MCP 2025-06-18 elicitation page: a lead-in, then numbered items whose own
// indented code blocks lie between them.
const SCHEMA_TYPES = `### Supported Schema Types

The schema is restricted to these primitive types:

1. **String Schema**

   \`\`\`json
   { "type": "string", "minLength": 3 }
   \`\`\`

2. **Number Schema**

   \`\`\`json
   { "type": "number", "minimum": 0 }
   \`\`\`

3. **Boolean Schema**

4. **Enum Schema**

Clients can use this schema to generate forms.`

const ERRORS = `## Error Handling

Servers use the standard JSON-RPC error codes. The following error codes are defined:

- \`-32700\`: Parse error
- \`-32602\`: Invalid params
  - also sent for an unknown tool
- \`-32603\`: Internal error

Implementations MAY define their own codes above -32000.`

const CALIBRATE = `## Calibration

1. Print the tuning tower.
2. Measure the height where corners look best.
3. Compute the factor from that height.`

const passage = (n: number, text: string): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading: 'h', path: 'p.md', version: null, kind: null }) as unknown as PromptPassage

const complete = (kept: ReplySentence[], passages: PromptPassage[]) => {
  const repairs: VerificationRepair[] = []
  const out = completeFromSources(kept, passages, (p) => p.text, repairs)
  return { out, repairs }
}

describe('an answer that introduces a list and does not give it', () => {
  it('gets the list items of the cited passage, in order, past their indented code blocks', () => {
    const { out, repairs } = complete(
      [{ text: 'The schema is restricted to these primitive types:', cites: [1] }],
      [passage(1, SCHEMA_TYPES)],
    )
    expect(out.map((s) => [s.text, s.added ?? null])).toEqual([
      ['The schema is restricted to these primitive types:', null],
      ['1. **String Schema**', 'list'],
      ['2. **Number Schema**', 'list'],
      ['3. **Boolean Schema**', 'list'],
      ['4. **Enum Schema**', 'list'],
    ])
    expect(out.slice(1).every((s) => s.cites.length === 1 && s.cites[0] === 1)).toBe(true)
    expect(repairs).toEqual([
      {
        code: 'list_completed',
        message: 'The answer introduced the list of passage [1] and gave 0 of its 4 items; 4 were copied from it.',
      },
    ])
  })

  it('keeps the items the model gave and adds only the others, after them', () => {
    const { out } = complete(
      [
        { text: 'The schema is restricted to these primitive types:', cites: [1] },
        { text: '1. String Schema', cites: [1] },
        { text: 'Forms are generated from it.', cites: [1] },
      ],
      [passage(1, SCHEMA_TYPES)],
    )
    expect(out.map((s) => s.text)).toEqual([
      'The schema is restricted to these primitive types:',
      '1. String Schema',
      '2. **Number Schema**',
      '3. **Boolean Schema**',
      '4. **Enum Schema**',
      'Forms are generated from it.',
    ])
  })

  it('copies top-level bullet items only, when the lead-in is a paraphrase of the passage sentence', () => {
    const { out } = complete(
      [{ text: 'The specification defines the following error codes:', cites: [2] }],
      [passage(1, CALIBRATE), passage(2, ERRORS)],
    )
    expect(out.filter((s) => s.added).map((s) => s.text)).toEqual([
      '- `-32700`: Parse error',
      '- `-32602`: Invalid params',
      '- `-32603`: Internal error',
    ])
  })

  it('adds nothing when the answer already gives every item, or does not end in a colon, or the lead-in says something else', () => {
    const all = [
      { text: 'The following error codes are defined:', cites: [1] },
      { text: '-32700 is a parse error.', cites: [1] },
      { text: '-32602 means invalid params.', cites: [1] },
      { text: '-32603 is an internal error.', cites: [1] },
    ]
    expect(complete(all, [passage(1, ERRORS)]).repairs).toEqual([])
    // Without a colon, a sentence that is about the lead-in but is not it introduces nothing.
    expect(
      complete([{ text: 'Servers define error codes for parse failures and params.', cites: [1] }], [passage(1, ERRORS)]).repairs,
    ).toEqual([])
    expect(complete([{ text: 'Tools can be listed as follows:', cites: [1] }], [passage(1, ERRORS)]).repairs).toEqual([])
  })

  // The shape of the MCP 2026-07-28 authorization page (p11 of mcp-docs-people, with the real
  // model): the answer was the passage's lead-in with a full stop for its colon, and the table it
  // introduces, which says what the client checks, was left out.
  const ISS =
    'On receiving the authorization response, MCP clients MUST apply the validation in RFC9207 Section 2.4 before transmitting the authorization code to any token endpoint:\n\n' +
    '| iss supported | iss in response | Client action |\n| --- | --- | --- |\n| true | present | Compare to the recorded issuer |\n| true | absent | Reject the response |\n\n' +
    'This validation applies equally to error responses.'

  it('completes a cited lead-in said again word for word, though the answer ended it with a full stop', () => {
    const { out, repairs } = complete(
      [
        {
          text: 'On receiving the authorization response, MCP clients MUST apply the validation in RFC9207 Section 2.4 before transmitting the authorization code to any token endpoint.',
          cites: [1],
        },
      ],
      [passage(1, ISS)],
    )
    expect(out).toEqual([
      // The lead-in introduces the copied table: its colon is back.
      {
        text: 'On receiving the authorization response, MCP clients MUST apply the validation in RFC9207 Section 2.4 before transmitting the authorization code to any token endpoint:',
        cites: [1],
      },
      { text: '| true | present | Compare to the recorded issuer |', cites: [1], added: 'list' },
      { text: '| true | absent | Reject the response |', cites: [1], added: 'list' },
    ])
    expect(repairs.map((r) => r.code)).toEqual(['list_completed'])
  })

  // The shape of the MCP 2025-03-26 transports page (the README's real answer, 2026-12-07): the
  // model said the lead-in with a full stop, then each item as a sentence of its own.
  const POST = `## Sending Messages to the Server

If the input consists solely of (any number of) JSON-RPC responses or notifications:

- If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.
- If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).

If the input contains any number of JSON-RPC requests, the server MUST return an SSE stream or a JSON object.`

  it('shows items the model gave as sentences after a lead-in as that list: the colon back, each a bullet, the words unchanged', () => {
    const given = [
      { text: 'If the input consists solely of (any number of) JSON-RPC responses or notifications.', cites: [1] },
      { text: 'If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.', cites: [1] },
      {
        text: 'If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).',
        cites: [1],
      },
      { text: 'If the input contains any number of JSON-RPC requests, the server MUST return an SSE stream.', cites: [1] },
    ]
    const { out, repairs } = complete(given, [passage(1, POST)])
    expect(out.map((s) => s.text)).toEqual([
      'If the input consists solely of (any number of) JSON-RPC responses or notifications:',
      '- If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.',
      '- If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).',
      'If the input contains any number of JSON-RPC requests, the server MUST return an SSE stream.',
    ])
    expect(out.every((s) => !s.added)).toBe(true)
    expect(repairs).toEqual([])
    // One item given and the other copied read as one list under the lead-in.
    const one = complete([given[0]!, given[1]!, given[3]!], [passage(1, POST)]).out
    expect(one.map((s) => [s.text, s.added ?? null])).toEqual([
      ['If the input consists solely of (any number of) JSON-RPC responses or notifications:', null],
      ['- If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.', null],
      ['- If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).', 'list'],
      [given[3]!.text, null],
    ])
    // Sentences after one that is not the lead-in keep their layout (the short list's third item is
    // copied by its own rule, below).
    const mention = [
      { text: 'Servers define error codes for parse failures and params.', cites: [2] },
      { text: '-32700 is a parse error.', cites: [2] },
      { text: '-32602 means invalid params.', cites: [2] },
    ]
    expect(
      complete(mention, [passage(2, ERRORS)])
        .out.slice(0, 3)
        .map((s) => s.text),
    ).toEqual(mention.map((s) => s.text))
  })

  // The page as it is: the lead-in is the fourth step, its cases nested under it.
  const POST_STEPS = `## Sending Messages to the Server

1. The client MUST use HTTP POST to send JSON-RPC messages to the MCP endpoint.
2. The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types.
3. If the input consists solely of (any number of) JSON-RPC responses or notifications:
   - If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.
   - If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).
4. If the input contains any number of JSON-RPC requests, the server MUST return an SSE stream or a JSON object.`

  it('takes an item of a list whose own items are nested under it as a lead-in', () => {
    const { out, repairs } = complete(
      [
        { text: 'The client MUST use HTTP POST to send JSON-RPC messages to the MCP endpoint.', cites: [1] },
        { text: 'If the input consists solely of (any number of) JSON-RPC responses or notifications.', cites: [1] },
        {
          text: 'If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.',
          cites: [1],
        },
      ],
      [passage(1, POST_STEPS)],
    )
    expect(out.map((s) => [s.text, s.added ?? null])).toEqual([
      ['The client MUST use HTTP POST to send JSON-RPC messages to the MCP endpoint.', null],
      ['If the input consists solely of (any number of) JSON-RPC responses or notifications:', null],
      ['- If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.', null],
      ['- If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).', 'list'],
      // The answer followed the steps and stopped before the last: that rule copies it.
      [
        '4. If the input contains any number of JSON-RPC requests, the server MUST return an SSE stream or a JSON object.',
        'procedure',
      ],
    ])
    expect(repairs.map((r) => r.code)).toContain('list_completed')
  })

  it('takes a lead-in without its colon only from a passage the sentence cites, and only said nearly whole', () => {
    const sentence =
      'On receiving the authorization response, MCP clients MUST apply the validation in RFC9207 Section 2.4 before transmitting the authorization code to any token endpoint.'
    expect(complete([{ text: sentence, cites: [2] }], [passage(1, ISS), passage(2, CALIBRATE)]).repairs).toEqual([])
    expect(
      complete([{ text: 'MCP clients MUST apply the validation in RFC9207 Section 2.4.', cites: [1] }], [passage(1, ISS)])
        .repairs,
    ).toEqual([])
  })
})

describe('a short bullet list the answer gave in part', () => {
  // The shape of the MCP 2025-11-25 tools page (p06 of mcp-docs-people, with the real model): asked
  // for the rules of tool names, the answer gave two of them.
  const NAMES = `### Tool Names

- Tool names SHOULD be between 1 and 128 characters in length (inclusive).
- Tool names SHOULD be considered case-sensitive.
- The following SHOULD be the only allowed characters: ASCII letters, digits, underscore, hyphen, and dot
- Tool names SHOULD NOT contain spaces, commas, or other special characters.
- Example valid tool names:
  - getUser
  - admin.tools.list`

  it('gets the items it left out after the last it gave, in the list order, with nested items', () => {
    const { out, repairs } = complete(
      [
        { text: 'Tool names SHOULD be between 1 and 128 characters in length (inclusive).', cites: [1] },
        { text: 'Tool names SHOULD NOT contain spaces, commas, or other special characters.', cites: [1] },
      ],
      [passage(1, NAMES)],
    )
    expect(out.slice(2)).toEqual([
      { text: '- Tool names SHOULD be considered case-sensitive.', cites: [1], added: 'list' },
      {
        text: '- The following SHOULD be the only allowed characters: ASCII letters, digits, underscore, hyphen, and dot',
        cites: [1],
        added: 'list',
      },
      { text: '- Example valid tool names:\n  - getUser\n  - admin.tools.list', cites: [1], added: 'list' },
    ])
    expect(repairs).toEqual([
      {
        code: 'list_completed',
        message: 'The answer gave 2 of the 5 items of a list in passage [1]; 3 were copied from it.',
      },
    ])
  })

  it('adds nothing for one item given, for an uncited passage, or for a list longer than a short one', () => {
    const one = [{ text: 'Tool names SHOULD NOT contain spaces, commas, or other special characters.', cites: [1] }]
    expect(complete(one, [passage(1, NAMES)]).repairs).toEqual([])
    const two = [
      { text: 'Tool names SHOULD be between 1 and 128 characters in length (inclusive).', cites: [2] },
      { text: 'Tool names SHOULD NOT contain spaces, commas, or other special characters.', cites: [2] },
    ]
    expect(complete(two, [passage(1, NAMES), passage(2, CALIBRATE)]).repairs).toEqual([])
    const long = NAMES + '\n- Tool names SHOULD be unique within a server.\n- Tool names MAY contain dots.'
    expect(
      complete(
        two.map((s) => ({ ...s, cites: [1] })),
        [passage(1, long)],
      ).repairs,
    ).toEqual([])
  })

  it('adds nothing when one sentence names the items inline: each item is given by the term it opens with', () => {
    // The shape of the MCP tasks page (a18 of mcp-docs-releases, with the real model).
    const STATES =
      'Tasks can be in one of the following states:\n\n- `working`: The request is currently being processed.\n' +
      '- `input_required`: The receiver needs input from the requestor.\n- `completed`: The request completed successfully.\n' +
      '- `failed`: The associated request did not complete successfully.'
    const inline = [
      { text: 'Tasks can be in one of the following states: working, input_required, completed, failed.', cites: [1] },
    ]
    expect(complete(inline, [passage(1, STATES)]).repairs).toEqual([])
    const some = [{ text: 'A task can be working or failed.', cites: [1] }]
    expect(complete(some, [passage(1, STATES)]).repairs).toEqual([])
    const named = [
      { text: 'A task starts working and may become input_required.', cites: [1] },
      { text: 'It ends completed or failed.', cites: [1] },
    ]
    expect(complete(named, [passage(1, STATES)]).repairs).toEqual([])
  })
})

describe('an answer that introduces a short example and does not give it', () => {
  it('gets the code block that follows the passage lead-in', () => {
    const STDERR =
      'On any non-zero exit the CLI also writes a single JSON line to stderr:\n\n```json\n{ "error": { "code": 4, "message": "unreachable" } }\n```\n\nIt exits with the code.'
    const { out, repairs } = complete(
      [{ text: 'On any non-zero exit the CLI writes a single JSON line to stderr:', cites: [1] }],
      [passage(1, STDERR)],
    )
    expect(out[1]).toEqual({
      text: '```json\n{ "error": { "code": 4, "message": "unreachable" } }\n```',
      cites: [1],
      added: 'list',
    })
    expect(repairs).toEqual([
      {
        code: 'list_completed',
        message: 'The answer introduced the example of passage [1] without giving it; it was copied from it.',
      },
    ])
  })
})

describe('an answer that introduces a table and does not give it', () => {
  // The shape of the MCP Inspector CLI page (p35 of mcp-docs-people, with the real model): the
  // lead-in is followed by a table of exit codes, and the answer was the lead-in alone.
  const EXIT_CODES =
    'Every non-zero exit maps to a stable failure class, so a caller can branch on why without scraping prose:\n\n' +
    '| Code | Meaning |\n| --- | --- |\n| 0 | Success. |\n| 3 | Server requires authentication. |\n| 4 | Server unreachable. |\n\n' +
    'On any non-zero exit the CLI also writes a single JSON line to stderr.'

  it('gets the rows of the table, without its header, which the app puts back above them', () => {
    const { out, repairs } = complete(
      [
        {
          text: 'Every non-zero exit maps to a stable failure class, so a caller can branch on why without scraping prose:',
          cites: [1],
        },
      ],
      [passage(1, EXIT_CODES)],
    )
    expect(out.slice(1)).toEqual([
      { text: '| 0 | Success. |', cites: [1], added: 'list' },
      { text: '| 3 | Server requires authentication. |', cites: [1], added: 'list' },
      { text: '| 4 | Server unreachable. |', cites: [1], added: 'list' },
    ])
    expect(repairs).toEqual([
      {
        code: 'list_completed',
        message: 'The answer introduced the table of passage [1] and gave 0 of its 3 rows; 3 were copied from it.',
      },
    ])
  })

  it('adds only the rows the answer does not give', () => {
    const { out } = complete(
      [
        {
          text: 'Every non-zero exit maps to a stable failure class, so a caller can branch on why without scraping prose:',
          cites: [1],
        },
        { text: 'Code 3 means the server requires authentication.', cites: [1] },
      ],
      [passage(1, EXIT_CODES)],
    )
    expect(out.filter((s) => s.added).map((s) => s.text)).toEqual(['| 0 | Success. |', '| 4 | Server unreachable. |'])
  })
})

describe('a lead-in whose list is in another passage', () => {
  // The shape of the MCP 2026-07-28 overview (p07 of mcp-docs-people): the chunker ended one
  // chunk with "MCP defines the following error codes:" and opened the next with the table, and
  // the model cited neither, but a passage whose own lead-in introduces an example.
  const overview = (n: number, text: string): PromptPassage => ({ ...passage(n, text), path: 'basic/index.md' })
  const END = overview(1, 'MCP partitions this range for itself.\n\nMCP defines the following error codes:')
  const TABLE = overview(
    2,
    '| Code | Name |\n| --- | --- |\n| -32020 | HeaderMismatch |\n| -32022 | UnsupportedProtocolVersion |\n\nEarlier codes stay reserved.',
  )
  const EXAMPLE = passage(
    3,
    'Servers MUST reject a mismatch and return an error like:\n\n```json\n{ "code": -32020, "message": "Header mismatch" }\n```',
  )

  it('gets the rows from the next chunk of the same document, citing it, rather than another passage example', () => {
    const { out } = complete([{ text: 'The spec defines the following error codes:', cites: [3] }], [END, TABLE, EXAMPLE])
    expect(out.slice(1)).toEqual([
      { text: '| -32020 | HeaderMismatch |', cites: [2], added: 'list' },
      { text: '| -32022 | UnsupportedProtocolVersion |', cites: [2], added: 'list' },
    ])
  })

  it('takes nothing from a passage of another document that opens with a table', () => {
    const elsewhere = { ...TABLE, path: 'other.md' }
    const { out } = complete([{ text: 'The spec defines the following error codes:', cites: [1] }], [END, elsewhere])
    expect(out).toHaveLength(1)
  })
})

describe('table rows the question names', () => {
  // The shape of the MCP 2026-07-28 Streamable HTTP page (q38 of mcp-docs, with the real model):
  // asked what goes in two headers, the answer said they must be sent and cited the table of
  // standard headers without giving its rows.
  const HEADERS =
    '| Header Name | Source Field | Required For |\n| --- | --- | --- |\n| Mcp-Method | method | All requests |\n' +
    '| Mcp-Name | params.name or params.uri | tools/call, resources/read, prompts/get requests |\n| Mcp-Session | session | Stateful servers |\n\n' +
    'These headers are REQUIRED for compliance.'
  const said = [{ text: 'The Mcp-Method header and Mcp-Name header MUST be included in the request.', cites: [1] }]
  const ask = (kept: ReplySentence[], question: string, passages = [passage(1, HEADERS)]) => {
    const repairs: VerificationRepair[] = []
    return { out: completeFromSources(kept, passages, (p) => p.text, repairs, question), repairs }
  }

  it('gets the rows whose first cell the question names, after the sentences citing the table', () => {
    const { out, repairs } = ask(said, 'What values go in the Mcp-Method and Mcp-Name headers?')
    expect(out.slice(1)).toEqual([
      { text: '| Mcp-Method | method | All requests |', cites: [1], added: 'list' },
      {
        text: '| Mcp-Name | params.name or params.uri | tools/call, resources/read, prompts/get requests |',
        cites: [1],
        added: 'list',
      },
    ])
    expect(repairs).toEqual([
      {
        code: 'list_completed',
        message:
          'The question names Mcp-Method and Mcp-Name, rows of the table in passage [1] that the answer did not give; they were copied from it.',
      },
    ])
  })

  it('adds nothing when the answer gives the row, the table is not cited, or the question names no row', () => {
    const given = [...said, { text: 'Mcp-Method carries the method, for all requests.', cites: [1] }]
    expect(ask(given, 'What goes in the Mcp-Method header?').repairs).toEqual([])
    const elsewhere = [{ ...said[0]!, cites: [2] }]
    expect(ask(elsewhere, 'What goes in the Mcp-Method header?', [passage(1, HEADERS), passage(2, CALIBRATE)]).repairs).toEqual(
      [],
    )
    expect(ask(said, 'Which headers must a request carry?').repairs).toEqual([])
  })
})

describe('a procedure the answer stopped in', () => {
  it('gets the remaining steps, marked as procedure', () => {
    const { out, repairs } = complete(
      [
        { text: 'Print the tuning tower.', cites: [1] },
        { text: 'Measure the height where the corners look best.', cites: [1] },
      ],
      [passage(1, CALIBRATE)],
    )
    expect(out.at(-1)).toEqual({ text: '3. Compute the factor from that height.', cites: [1], added: 'procedure' })
    expect(repairs.map((r) => r.code)).toEqual(['procedure_completed'])
  })
})

describe('through the engine', () => {
  it('answers a lead-in with the list copied from the source, shown as added and named in the trace', async () => {
    const { reply } = await import('./scripted.testutil')
    const { askOverOneFile } = await import('../../test-support/ask-over-one-file')
    const { result, trace } = await askOverOneFile(
      { name: 'errors.md', markdown: `# Protocol\n\n${ERRORS}\n` },
      'Which JSON-RPC error codes are defined for error handling?',
      [reply('The following error codes are defined [1]:', [1])],
    )
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.sentences?.map((s) => s.added ?? null)).toEqual([null, 'list', 'list', 'list', 'quote', 'quote'])
    expect(result.answer).toBe(
      // The index keeps inline code as its text, without backticks.
      'The following error codes are defined [1]:\n- -32700: Parse error [1]\n- -32602: Invalid params [1]\n- -32603: Internal error [1]\n\n' +
        // The passage's sentence on the question that the answer left out (answer/key-sentences.ts),
        // a paragraph of its own: on the next line it would continue the last item.
        'Servers use the standard JSON-RPC error codes [1]. ' +
        // The passage's requirement on the question (answer/requirements.ts).
        'Implementations MAY define their own codes above -32000 [1].',
    )
    expect(JSON.stringify(trace)).toContain('list_completed')
  })
})
