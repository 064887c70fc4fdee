import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import type { PromptPassage } from './prompt'
import { tightenCitations } from './tighten'

const passage = (n: number, heading: string, text: string, kind = 'Specification'): PromptPassage => ({
  n,
  chunk_id: `c${n}`,
  path: 'spec/transports/http.md',
  heading,
  version: '2026-07-28',
  kind,
  page: null,
  text,
})

const HEADERS = passage(
  1,
  'HTTP > Standard Request Headers',
  'Clients MUST include the Mcp-Method header and the Mcp-Name header in the request. Mcp-Method mirrors the method; Mcp-Name mirrors params.name or params.uri.',
)
const CUSTOM = passage(
  2,
  'HTTP > Custom Headers',
  'A tool parameter marked x-mcp-header is sent as an Mcp-Param header. Append the Mcp-Method header and, if applicable, the Mcp-Name header to the request.',
)
const VERSION = passage(
  3,
  'HTTP > Protocol Version Header',
  'The client MUST include an MCP-Protocol-Version header in every request.',
)
const byN = new Map([HEADERS, CUSTOM, VERSION].map((p) => [p.n, p]))

describe('a sentence cites the passages that say it', () => {
  it('drops the cited passages that do not say it on their own, where others do, and names the repair', () => {
    // Seen with the real 1.5B model: one sentence cited six passages, two of which said it.
    const kept = [{ text: 'The Mcp-Method header and the Mcp-Name header MUST be included in the request.', cites: [1, 2, 3] }]
    const repairs: VerificationRepair[] = []
    tightenCitations(kept, byN, () => false, repairs)
    expect(kept[0]!.cites).toEqual([1, 2])
    expect(repairs.map((r) => r.code)).toEqual(['citations_tightened'])
    expect(repairs[0]!.message).toMatch(/^1 citation of passages without a name or number the sentence states was dropped/)
  })

  it('keeps every citation when no passage says the sentence alone, and a protected passage always', async () => {
    const joined = [
      {
        text: 'Clients include the Mcp-Name header and an MCP-Protocol-Version header in every request.',
        cites: [1, 3],
      },
    ]
    const repairs: VerificationRepair[] = []
    tightenCitations(joined, byN, () => false, repairs)
    expect(joined[0]!.cites).toEqual([1, 3])

    const kept = [{ text: 'The Mcp-Method header and the Mcp-Name header MUST be included in the request.', cites: [3, 1] }]
    tightenCitations(kept, byN, (p) => p.n === 3, repairs)
    expect(kept[0]!.cites).toEqual([3, 1])
    expect(repairs).toEqual([])
  })

  it('keeps a passage that holds every name the sentence states and says the rest in its own words', () => {
    // A held-out question: the specification's preregistration section, cited beside the tutorial
    // sentence the model copied, says the same in other words and was the gold section.
    const tutorial = passage(
      1,
      'Authorization Flow',
      'The client can be pre-registered with a given authorization server, in which case it can have embedded client registration information that it uses to complete the authorization flow.',
      'Docs',
    )
    const spec = passage(
      2,
      'Client Registration > Preregistration',
      'MCP clients MAY use client information registered with the authorization server in advance.',
    )
    const kept = [{ text: tutorial.text, cites: [1, 2] }]
    const repairs: VerificationRepair[] = []
    tightenCitations(kept, new Map([tutorial, spec].map((p) => [p.n, p])), () => false, repairs)
    expect(kept[0]!.cites).toEqual([1, 2])
    expect(repairs).toEqual([])
  })

  it('leaves copied sentences and single citations alone', async () => {
    const kept = [
      { text: 'Mcp-Method mirrors the method.', cites: [1, 3], added: 'quote' as const },
      { text: 'Mcp-Method mirrors the method.', cites: [3] },
    ]
    const repairs: VerificationRepair[] = []
    tightenCitations(kept, byN, () => false, repairs)
    expect(kept.map((s) => s.cites)).toEqual([[1, 3], [3]])
    expect(repairs).toEqual([])
  })
})

describe('through the engine', () => {
  it('lists as sources only the passages that say what the answer says', async () => {
    const { reply } = await import('./scripted.testutil')
    const { askOverOneFile } = await import('../../test-support/ask-over-one-file')
    const md = [
      '# HTTP',
      '## Standard Request Headers',
      'Clients MUST include the Mcp-Method header and the Mcp-Name header in every request they send to the server. The Mcp-Method header mirrors the JSON-RPC method of the request; the Mcp-Name header mirrors params.name or params.uri, so that gateways can route requests without reading their bodies.',
      '## Protocol Version Header',
      'Clients MUST include an MCP-Protocol-Version header in every request they send over HTTP. Its value MUST match the protocol version the request body carries, or the server rejects the request with a 400 Bad Request error and a message naming both versions.',
    ].join('\n\n')
    const { result, trace } = await askOverOneFile(
      { name: 'http.md', markdown: `${md}\n` },
      'Which headers must a client include in every request?',
      [reply('Clients MUST include the Mcp-Method header and the Mcp-Name header in every request [1][2].', [1, 2])],
    )
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.citations.map((c) => c.heading)).toEqual(['HTTP > Standard Request Headers'])
    expect(result.sentences?.[0]?.citations).toEqual([1])
    expect(JSON.stringify(trace)).toContain('citations_tightened')
  })
})
