import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import {
  addKeySentences,
  asksRequirement,
  HISTORY_RELEASES,
  keySentences,
  KEY_SENTENCES,
  QUOTE_NEW_WORDS,
  QUOTE_SHARE,
  quotedAnswer,
  quotedUnits,
  requirementSentence,
} from './key-sentences'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'

/**
 * After the model's verified sentences, the sentences of the best passages that bear on the
 * question and the answer left out are added, copied and cited.
 */

// Shapes of the MCP specification's Streamable HTTP and logging pages.
const TRANSPORT = `### Sending Messages to the Server

Every JSON-RPC message sent from the client MUST be a new HTTP POST request to the MCP endpoint.
The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types.
If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return one JSON object.
The client MUST support both of these cases.`

const SESSIONS = `### Session Management

A server MAY assign a session ID at initialization time, in an Mcp-Session-Id header on the response.
When a client receives HTTP 404 in response to a request containing an Mcp-Session-Id, it MUST start a new session.`

const LOGGING = `### Logging

Servers emit log messages with a severity level chosen by the client.`

const passage = (n: number, text: string): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading: 'h', path: 'p.md', version: null, kind: null }) as unknown as PromptPassage

const Q =
  'When I POST a JSON-RPC request to a Streamable HTTP endpoint, what Accept header do I need and what content types can the server send back?'

async function run(
  kept: KeptSentence[],
  question: string,
  passages: PromptPassage[],
  misses?: (s: string[]) => Promise<{ index: number }[]>,
) {
  const repairs: VerificationRepair[] = []
  const out = await addKeySentences(kept, passages, (p) => p.text, question, repairs, { misses })
  return { out, repairs }
}

describe('key sentences of the best passages', () => {
  it('adds the part of a two-part question the answer left out, copied and cited, and names it in a repair', async () => {
    const kept = [{ text: 'Every JSON-RPC message from the client is a new HTTP POST to the MCP endpoint.', cites: [1] }]
    const { out, repairs } = await run(kept, Q, [passage(1, TRANSPORT), passage(2, LOGGING)])
    expect(out[0]).toEqual(kept[0])
    const added = out.slice(1)
    expect(added.length).toBeGreaterThan(0)
    expect(added.length).toBeLessThanOrEqual(KEY_SENTENCES)
    expect(added.every((s) => s.added === 'quote' && s.cites.join() === '1' && TRANSPORT.includes(s.text))).toBe(true)
    // Both parts: the Accept header, and what the server may send back.
    const text = added.map((s) => s.text).join(' ')
    expect(text).toContain('Accept header')
    expect(text).toContain('Content-Type: text/event-stream')
    expect(repairs).toEqual([
      {
        code: 'key_sentences_added',
        message: 'The answer left out 2 sentences of passage [1] on the question; they were added.',
      },
    ])
  })

  it('copies an item from the middle of a numbered list as a bullet: out of its list, its number means nothing', async () => {
    const RESOURCE = `### Resource Parameter

1. MUST include the resource parameter in authorization requests.
2. MUST include it in token requests.
3. MUST use the canonical URI of the MCP server as defined in RFC 8707 Section 2.`
    const kept = [{ text: 'The client sends a resource parameter during the OAuth flow.', cites: [1] }]
    const { out } = await run(kept, 'Which URI goes in the resource parameter, the canonical URI of the server?', [
      passage(1, RESOURCE),
    ])
    const added = out.filter((s) => s.added).map((s) => s.text)
    expect(added).toContain('- MUST use the canonical URI of the MCP server as defined in RFC 8707 Section 2.')
    expect(added.some((t) => /^\d+\. /.test(t))).toBe(false)
  })

  it('does not add a second sentence that only repeats the first one’s terms', () => {
    const picks = keySentences(
      ['Nothing yet.'],
      [passage(1, TRANSPORT)],
      (p) => p.text,
      'What Accept header must the client include?',
    )
    expect(picks.map((p) => p.unit.text)).toEqual([
      'The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types.',
    ])
  })

  it('skips what the answer already says, and adds nothing from passages that are not about the question', async () => {
    const said = [
      {
        text: 'The client MUST include an Accept header listing both application/json and text/event-stream as supported content types [1].',
        cites: [1],
      },
    ]
    const picks = keySentences(
      said.map((s) => s.text),
      [passage(1, TRANSPORT)],
      (p) => p.text,
      'What Accept header must the client include?',
    )
    expect(picks).toEqual([])
    const vague = [{ text: 'Servers log messages.', cites: [1] }]
    expect(await run(vague, Q, [passage(1, LOGGING)])).toEqual({ out: vague, repairs: [] })
  })

  it('does not copy a sentence that introduces a list, which ends in the air without it', () => {
    // h05 with the model: "2. Attempt to POST an InitializeRequest to the server URL, with an
    // Accept header as defined above:" was copied without the outcomes listed under it.
    const compat = `Clients wanting to support older servers should:

1. Accept an MCP server URL from the user, which may point to a server using the old transport or the new transport.
2. Attempt to POST an InitializeRequest to the server URL, with an Accept header as defined above:
  - If it succeeds, the client can assume this is a server supporting the new Streamable HTTP transport.
  - If it fails with an HTTP 4xx status code, issue a GET request to the server URL to open an SSE stream of the old HTTP+SSE transport.`
    const picks = keySentences(
      ['Servers host both endpoints.'],
      [passage(1, compat)],
      (p) => p.text,
      'How does a client POST an InitializeRequest to a server URL on the old HTTP+SSE transport?',
    )
    expect(picks.length).toBeGreaterThan(0)
    expect(picks.some((p) => p.unit.text.trim().endsWith(':'))).toBe(false)
  })

  it('reads only the two best-ranked passages', () => {
    const question = 'What should a client do when a request with an Mcp-Session-Id gets HTTP 404?'
    const third = keySentences(
      ['No.'],
      [passage(1, LOGGING), passage(2, TRANSPORT), passage(3, SESSIONS)],
      (p) => p.text,
      question,
    )
    expect(third.some((p) => p.passage.n === 3)).toBe(false)
    const second = keySentences(
      ['No.'],
      [passage(1, LOGGING), passage(2, SESSIONS), passage(3, TRANSPORT)],
      (p) => p.text,
      question,
    )
    expect(second.map((p) => p.unit.text)).toContain(
      'When a client receives HTTP 404 in response to a request containing an Mcp-Session-Id, it MUST start a new session.',
    )
  })

  it('adds no sentence the release rule rejects, though it would otherwise be the best one', async () => {
    const kept = [{ text: 'Every JSON-RPC message from the client is a new HTTP POST to the MCP endpoint.', cites: [1] }]
    const asked: string[][] = []
    const { out } = await run(kept, Q, [passage(1, TRANSPORT)], async (sentences) => {
      asked.push(sentences)
      return sentences.map((s, index) => ({ s, index })).filter(({ s }) => s.includes('Accept header'))
    })
    // The rule saw the sentence and refused it.
    expect(asked.flat().some((s) => s.includes('Accept header'))).toBe(true)
    expect(out.some((s) => s.text.includes('Accept header'))).toBe(false)
    expect(out.slice(1).every((s) => s.added === 'quote')).toBe(true)
  })

  it('adds nothing to an answer that is only copied text', async () => {
    const copied = [{ text: 'Servers log messages.', cites: [1], added: 'quote' as const }]
    expect(await run(copied, Q, [passage(1, TRANSPORT)])).toEqual({ out: copied, repairs: [] })
  })
})

// Shapes of the MCP change logs: each release's "Major changes" list names what it did to a feature.
const log = (n: number, version: string, items: string[]): PromptPassage =>
  ({
    n,
    chunk_id: `log${n}`,
    text: `## Major changes\n\n${items.map((i) => (/^\d+\. /.test(i) ? i : `- ${i}`)).join('\n')}`,
    heading: 'Key Changes > Major changes',
    path: `specification/${version}/changelog.mdx`,
    version,
    kind: 'Specification',
  }) as unknown as PromptPassage

describe('a question about what changed', () => {
  const logs = [
    log(1, '2026-07-28', [
      'Move tasks out of the core protocol into an official extension (io.modelcontextprotocol/tasks).',
      'Add Mcp-Method and Mcp-Name headers to Streamable HTTP requests.',
      '9. Remove ping and logging/setLevel; the log level is set per request in _meta.',
    ]),
    log(3, '2025-11-25', [
      'Add experimental support for tasks to enable tracking durable requests with polling.',
      'Add icons to tools, resources and prompts.',
    ]),
    log(4, '2025-06-18', ['Remove support for JSON-RPC batching.', 'Add structured tool output.']),
  ]
  const TASKS = 'What happened to tasks after they were first introduced?'
  /** The answer with its key sentences and, the question being about change, each release's line. */
  const history = (kept: KeptSentence[], passages: PromptPassage[], question: string, repairs: VerificationRepair[] = []) =>
    addKeySentences(kept, passages, (p) => p.text, question, repairs, { history: true })

  it('adds what each release change log says about the subject, one line per release, oldest first', async () => {
    const kept = [{ text: 'Tasks were introduced in version 2025-11-25 as an experimental feature.', cites: [3] }]
    const repairs: VerificationRepair[] = []
    const out = await history(kept, [...logs, passage(2, LOGGING)], TASKS, repairs)
    const added = out.filter((s) => s.added === 'quote')
    expect(added.map((s) => [s.cites.join(), s.text])).toEqual([
      ['3', '- Add experimental support for tasks to enable tracking durable requests with polling.'],
      ['1', '- Move tasks out of the core protocol into an official extension (io.modelcontextprotocol/tasks).'],
    ])
    // The release whose change log says nothing of tasks adds nothing, nor do the other lines.
    expect(out.some((s) => s.text.includes('batching') || s.text.includes('icons') || s.text.includes('Mcp-Method'))).toBe(false)
    expect(repairs.map((r) => r.code)).toEqual(['key_sentences_added'])
  })

  it("adds a line of the scoped release's own change log once, as a line of the history", async () => {
    const kept = [{ text: 'Tasks were introduced as an experimental feature.', cites: [2] }]
    const guide = { ...passage(2, LOGGING), kind: 'Docs', version: '2025-11-25' } as PromptPassage
    const own = (p: PromptPassage) => p.kind === 'Specification' && p.version === '2025-11-25'
    const q = 'What changed about tasks for durable requests?'
    const out = await addKeySentences(kept, [logs[1]!, guide], (p) => p.text, q, [], { history: true, own })
    const lines = out.filter((s) => s.text.includes('tracking durable requests'))
    expect(lines.map((s) => s.text)).toEqual([
      '- Add experimental support for tasks to enable tracking durable requests with polling.',
    ])
  })

  it('adds no change-log lines when the question is not about change, nor more releases than the limit', async () => {
    const kept = [{ text: 'Tasks track durable requests.', cites: [3] }]
    const plain = await addKeySentences(kept, logs, (p) => p.text, 'How do tasks track durable requests?', [], { history: false })
    expect(plain.some((s) => s.text.includes('official extension'))).toBe(false)
    const many = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'].map((v, i) =>
      log(i + 1, v, [`Change how sampling works, part ${i + 1} of the sampling redesign.`]),
    )
    const out = await history(
      [{ text: 'Sampling lets servers request completions.', cites: [1] }],
      many,
      'How has sampling changed over time?',
    )
    expect(out.filter((s) => s.added === 'quote' && s.text.includes('sampling redesign')).length).toBe(HISTORY_RELEASES)
  })

  it('does not take a plain word inside another for the subject: "marking" is not "markdown"', async () => {
    // Seen with the model: "which release brought in tool annotations, like marking a tool
    // read-only?" got 2026-07-28's line on SEP files in markdown as part of the history.
    const annotations = [
      log(1, '2026-07-28', ['Formalize the PR-based SEP workflow with markdown files in the seps/ directory.']),
      log(2, '2025-03-26', ['Added comprehensive tool annotations, like whether a tool is read-only or destructive.']),
    ]
    const kept = [{ text: 'Tool annotations describe tool behavior.', cites: [2] }]
    const out = await history(
      kept,
      annotations,
      'Which release brought in tool annotations, like marking a tool read-only or destructive?',
    )
    expect(out.some((s) => s.text.includes('markdown'))).toBe(false)
    expect(out.filter((s) => s.added).map((s) => s.text)).toEqual([
      '- Added comprehensive tool annotations, like whether a tool is read-only or destructive.',
    ])
  })

  it('does not take a release the question names for its subject: "since 2025-03-26" is when, not what', async () => {
    // Seen with the model on "Since 2025-03-26, has the guidance on what a stdio server may write to
    // stderr changed?": 2026-07-28's line on the HTTP+SSE transport, "deprecated since 2025-03-26",
    // was added to the history.
    const stderr = [
      log(1, '2026-07-28', ['Reclassify the HTTP+SSE transport (deprecated since protocol version 2025-03-26) as Deprecated.']),
      log(2, '2025-11-25', ['Clarify that servers using stdio transport may use stderr for all types of logging.']),
    ]
    const kept = [{ text: 'The server MAY write UTF-8 strings to its standard error for logging.', cites: [2] }]
    const out = await history(
      kept,
      stderr,
      'Since 2025-03-26, has the guidance on what a stdio server may write to stderr changed?',
    )
    expect(out.some((s) => s.text.includes('HTTP+SSE'))).toBe(false)
    expect(out.filter((s) => s.added).map((s) => s.text)).toEqual([
      '- Clarify that servers using stdio transport may use stderr for all types of logging.',
    ])
  })

  it('adds a line once when it is both a key sentence and its release’s history line, as a bullet of the history', async () => {
    // Seen with the model on "what happened to ping and logging/setLevel?": the change-log line was
    // copied twice, as the best passage's key sentence and as its release's line.
    const kept = [{ text: 'Ping was a utility for checking that the other side is alive.', cites: [1] }]
    const out = await history(kept, logs, 'What happened to ping and logging/setLevel?')
    const lines = out.filter((s) => s.text.includes('Remove ping'))
    expect(lines.map((s) => [s.cites.join(), s.text])).toEqual([
      ['1', '- Remove ping and logging/setLevel; the log level is set per request in _meta.'],
    ])
  })
})

describe('through the engine', () => {
  it('shows the key sentences as copied, cites their passage and names them in the trace', async () => {
    const { reply } = await import('./scripted.testutil')
    const { askOverOneFile } = await import('../../test-support/ask-over-one-file')
    const { result, trace } = await askOverOneFile(
      { name: 'transports.md', markdown: `# Transports\n\n${TRANSPORT}\n` },
      'When the client POSTs a JSON-RPC request to the MCP endpoint, what Accept header must it include and what content types can the server return?',
      [reply('The client MUST include an Accept header listing application/json and text/event-stream [1].', [1])],
    )
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    // Two key sentences, then a requirement of the passage the answer rests on (answer/requirements.ts).
    expect(result.sentences?.map((s) => s.added ?? null)).toEqual([null, 'quote', 'quote', 'quote'])
    expect(result.sentences?.every((s) => s.citations.join() === '1')).toBe(true)
    expect(result.answer).toContain('Accept header')
    expect(result.citations).toHaveLength(1)
    expect(JSON.stringify(trace)).toContain('key_sentences_added')
  })
})

describe('a question whether something is required', () => {
  // The shape of the 2025-06-18 authorization page (p36 of mcp-docs-people, with the real model).
  const PKCE = passage(
    1,
    'An attacker who has gained access to an authorization code can try to redeem it for an access token.\n\n' +
      'To mitigate this, MCP clients MUST implement PKCE according to OAuth 2.1 Section 7.5.2. ' +
      'PKCE helps prevent authorization code interception and injection attacks by requiring clients to create a secret verifier-challenge pair.',
  )
  const FLOW = passage(2, 'The complete authorization flow proceeds as follows: the client opens the browser.')
  const explained: KeptSentence = {
    text: 'PKCE helps prevent authorization code interception and injection attacks by requiring clients to create a secret verifier-challenge pair.',
    cites: [1],
  }

  it('recognises yes-or-no questions about an obligation or a permission, and no others', () => {
    expect(asksRequirement('does the spec require PKCE for the OAuth flow?')).toBe(true)
    expect(asksRequirement('Do MCP servers have to support dynamic client registration?')).toBe(true)
    expect(asksRequirement('Is the title field optional?')).toBe(true)
    expect(asksRequirement('How does PKCE work?')).toBe(false)
    expect(asksRequirement('What is required to register a client?')).toBe(false)
  })

  it('puts first the sentence that states the requirement about the subject the answer explained', async () => {
    const { out, repairs } = await run([explained], 'does the spec require PKCE for the OAuth flow?', [PKCE, FLOW])
    expect(out[0]).toEqual({
      text: 'To mitigate this, MCP clients MUST implement PKCE according to OAuth 2.1 Section 7.5.2.',
      cites: [1],
      added: 'quote',
    })
    expect(out[1]).toEqual(explained)
    expect(repairs.map((r) => r.code)).toEqual(['key_sentences_added'])
  })

  it('adds none when the answer already states a requirement level, or the documents write no keyword', () => {
    const stated: KeptSentence = { text: 'MCP clients MUST implement PKCE.', cites: [1] }
    expect(requirementSentence([stated.text], [PKCE], (p) => p.text, 'does the spec require PKCE?')).toBeNull()
    const plain = passage(1, 'Clients use PKCE. PKCE stops code interception.')
    expect(requirementSentence([explained.text], [plain], (p) => p.text, 'does the spec require PKCE?')).toBeNull()
  })
})

describe("the answer in the best passages' own words, when the model gave none that stands", () => {
  const text = (p: PromptPassage) => p.text

  it('quotes the sentences that hold most of the question, in reading order, with the share they hold', () => {
    const { picks, share } = quotedAnswer([passage(1, TRANSPORT), passage(2, SESSIONS), passage(3, LOGGING)], text, Q)
    expect(share).toBeGreaterThanOrEqual(QUOTE_SHARE)
    expect(picks.length).toBeGreaterThan(0)
    expect(picks.map((p) => p.passage.n)).toEqual([...picks.map((p) => p.passage.n)].sort())
    expect(picks.some((p) => /Accept header/.test(p.unit.text))).toBe(true)
  })

  it('quotes nothing when the best sentence holds a word or two of the question', () => {
    // The passages are about sessions and logging; the question's own terms (Accept, content types) are in none.
    const { picks, share } = quotedAnswer([passage(1, SESSIONS), passage(2, LOGGING)], text, Q)
    expect(share).toBeLessThan(QUOTE_SHARE)
    expect(picks).toEqual([])
  })

  it('quotes only the passages it is allowed to, though all of them weigh the terms', () => {
    const passages = [passage(1, TRANSPORT), passage(2, SESSIONS)]
    const { picks } = quotedAnswer(passages, text, Q, QUOTE_SHARE, (p) => p.n === 2)
    expect(picks.every((p) => p.passage.n === 2)).toBe(true)
    // Passage 1 says what was asked; passage 2 alone does not hold enough of it to be quoted.
    expect(picks).toEqual([])
  })
})

describe('a quoted list item, with its list', () => {
  const SSE = `In the SSE transport, the server runs as an independent process.

The server MUST provide two endpoints:

1. An SSE endpoint, for clients to establish a connection and receive messages from the server
2. A regular HTTP POST endpoint for clients to send messages to the server

When a client connects, the server MUST send an endpoint event containing a URI for the client to use.`
  const text = (p: PromptPassage) => p.text

  it("comes under the sentence that introduces its list, with the short list's other items, each once", () => {
    const p = passage(1, SSE)
    const { picks } = quotedAnswer([p], text, 'Which endpoint does a client POST its messages to with the SSE transport?', 0)
    expect(picks[0]!.unit.list).not.toBeNull()
    const shown = quotedUnits(picks, text).map((u) => u.unit.text)
    expect(shown.slice(0, 3)).toEqual([
      'The server MUST provide two endpoints:',
      expect.stringMatching(/An SSE endpoint/),
      expect.stringMatching(/A regular HTTP POST endpoint/),
    ])
    expect(new Set(shown).size).toBe(shown.length)
  })

  it('a sentence that is not a list item is shown alone', () => {
    const p = passage(1, SSE)
    const { picks } = quotedAnswer([p], text, 'What event does the server send with the URI when a client connects?', 0)
    expect(picks[0]!.unit.list).toBeNull()
    expect(quotedUnits(picks.slice(0, 1), text).map((u) => u.unit.text)).toEqual([picks[0]!.unit.text])
  })
})

describe('a quoted sentence says something the question does not', () => {
  // A reference page's list of options, then the option's own entry.
  const OPTIONS = `## Server options

- ignoreTrailingSlash
- useSemicolonDelimiter
- maxParamLength

### useSemicolonDelimiter

When useSemicolonDelimiter is true, the router splits the path at a semicolon and reads the rest as the query string.`
  const text = (p: PromptPassage) => p.text

  it('skips an entry that only names what was asked, for the sentence that says what it does', () => {
    const q = 'What does useSemicolonDelimiter do?'
    const { picks } = quotedAnswer([passage(1, OPTIONS)], text, q, 0)
    expect(QUOTE_NEW_WORDS).toBeGreaterThan(0)
    expect(picks[0]!.unit.text).toMatch(/^When useSemicolonDelimiter is true/)
    expect(picks.map((p) => p.unit.text)).not.toContain('useSemicolonDelimiter')
    // Key sentences beside the model's own answer are chosen as before.
    expect(keySentences([], [passage(1, OPTIONS)], text, q, { minScore: 0 }).length).toBeGreaterThan(0)
  })
})

describe("a scoped question's answer shows what the release's own specification says", () => {
  // Shapes of the MCP docs 2025-06-18: the architecture guide, then the tools page of the specification.
  const GUIDE = `### Real-time Updates (Notifications)

When the server's available tools change, the server can proactively notify connected clients.
Notifications are a core part of the MCP architecture.`
  const SPEC = `### Capabilities

Servers that support tools MUST declare the tools capability.

listChanged indicates whether the server will emit notifications when the list of available tools changes.`
  const OTHER = `### Capabilities

listChanged indicates whether the server will emit notifications when the list of available prompts changes.`
  const of = (n: number, text: string, kind: string | null, version: string): PromptPassage =>
    ({ ...passage(n, text), kind, version }) as PromptPassage
  const Q39 = 'How does a server tell the client that its set of available tools is different now?'
  const ownOf = (release: string) => (p: PromptPassage) => p.kind === 'Specification' && p.version === release
  const guide = of(1, GUIDE, 'Guide', '2025-06-18')
  const filler = of(2, 'Notifications are messages that need no response.', 'Guide', '2025-06-18')
  const spec = of(3, SPEC, 'Specification', '2025-06-18')
  const kept = [
    { text: "When the server's available tools change, the server can proactively notify connected clients.", cites: [1] },
  ]

  it('adds the specification sentence that holds the question when the answer cites only a guide', async () => {
    const repairs: VerificationRepair[] = []
    const out = await addKeySentences(kept, [guide, filler, spec], (p) => p.text, Q39, repairs, { own: ownOf('2025-06-18') })
    const added = out.filter((s) => s.added === 'quote' && s.cites.join() === '3')
    expect(added.map((s) => s.text)).toEqual([
      'listChanged indicates whether the server will emit notifications when the list of available tools changes.',
    ])
    expect(repairs.map((r) => r.code)).toEqual(['key_sentences_added'])
    expect(repairs[0]!.message).toContain(
      'Passage [3] is the specification of 2025-06-18, which nothing else in the answer cited.',
    )
    // Without a scoped release, the specification is the third passage and adds nothing.
    const plain = await addKeySentences(kept, [guide, filler, spec], (p) => p.text, Q39, [])
    expect(plain.some((s) => s.cites.includes(3))).toBe(false)
  })

  it('adds nothing when the answer already cites the specification, or only another release has one', async () => {
    const cited = [{ ...kept[0]!, cites: [1, 3] }]
    const out = await addKeySentences(cited, [guide, filler, spec], (p) => p.text, Q39, [], { own: ownOf('2025-06-18') })
    expect(out.filter((s) => s.cites.includes(3) && s.added)).toEqual([])
    const older = await addKeySentences(kept, [guide, filler, spec], (p) => p.text, Q39, [], { own: ownOf('2025-03-26') })
    expect(older.some((s) => s.cites.includes(3))).toBe(false)
  })

  it('adds no specification sentence that does not hold the question', async () => {
    const other = of(3, OTHER, 'Specification', '2025-06-18')
    const q = 'How does a server tell the client that its set of available tools is different now?'
    const out = await addKeySentences(kept, [guide, filler, other], (p) => p.text, q, [], { own: ownOf('2025-06-18') })
    expect(out.filter((s) => s.cites.includes(3))).toEqual([])
  })
})
