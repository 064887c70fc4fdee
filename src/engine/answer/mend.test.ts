import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import { mendCodeBlocks, mendCutSentences } from './mend'
import type { PromptPassage } from './prompt'
import { verifyReply } from './verify'

const SAMPLING =
  'The Model Context Protocol (MCP) provides a standardized way for servers to request LLM sampling ("completions" or "generations") from language models via clients. This flow allows clients to maintain control over model access, selection, and permissions.'

const passage = (n: number, text: string): PromptPassage => ({
  n,
  chunk_id: `c${n}`,
  path: 'specification/2024-11-05/client/sampling.mdx',
  heading: 'Sampling',
  kind: 'Specification',
  version: '2024-11-05',
  page: null,
  text,
})

describe('sentences the reply cut at a quotation mark', () => {
  it('are the passage sentence they copy, with the fragments it holds folded in', () => {
    // The real 1.5B model's reply on a held-out question, as its JSON ended each string.
    const repairs: VerificationRepair[] = []
    const out = mendCutSentences(
      [
        {
          text: 'The Model Context Protocol (MCP) provides a standardized way for servers to request LLM sampling (',
          cites: [3],
        },
        { text: 'completions', cites: [3] },
        { text: 'generations', cites: [3] },
      ],
      [passage(3, SAMPLING)],
      repairs,
    )
    expect(out).toEqual([
      {
        text: 'The Model Context Protocol (MCP) provides a standardized way for servers to request LLM sampling ("completions" or "generations") from language models via clients.',
        cites: [3],
      },
    ])
    expect(repairs.map((r) => r.code)).toEqual(['sentence_mended'])
  })

  it('keep what a following sentence says after the passage sentence ends', () => {
    const out = mendCutSentences(
      [
        {
          text: 'The Model Context Protocol (MCP) provides a standardized way for servers to request LLM sampling (',
          cites: [3],
        },
        { text: 'completions', cites: [3] },
        { text: 'from language models via clients. This flow allows clients to maintain control over model access.', cites: [3] },
      ],
      [passage(3, SAMPLING)],
      [],
    )
    expect(out.map((s) => s.text)).toEqual([
      'The Model Context Protocol (MCP) provides a standardized way for servers to request LLM sampling ("completions" or "generations") from language models via clients.',
      'This flow allows clients to maintain control over model access.',
    ])
  })

  it('leave alone sentences that end, short fragments, and text no cited passage begins with', () => {
    const sentences = [
      { text: 'Servers request sampling from clients.', cites: [3] },
      { text: 'request LLM (', cites: [3] },
      { text: 'Clients may pick any model they like for sampling (', cites: [3] },
    ]
    const repairs: VerificationRepair[] = []
    expect(mendCutSentences(sentences, [passage(3, SAMPLING)], repairs)).toEqual(sentences)
    expect(repairs).toEqual([])
  })

  it('are checked whole by the support check', async () => {
    const v = await verifyReply(
      {
        answerable: true,
        sentences: [
          {
            text: 'The Model Context Protocol (MCP) provides a standardized way for servers to request LLM sampling (',
            cites: [1],
          },
          { text: 'completions', cites: [1] },
          { text: 'generations', cites: [1] },
        ],
        unanswered_parts: [],
      },
      [passage(1, SAMPLING)],
      { question: 'How do servers request LLM sampling?' },
    )
    expect(v.ok).toBe(true)
    expect(v.removed).toEqual([])
    expect(v.kept.map((s) => s.text)).toEqual([
      'The Model Context Protocol (MCP) provides a standardized way for servers to request LLM sampling ("completions" or "generations") from language models via clients.',
    ])
    expect(v.repairs.map((r) => r.code)).toContain('sentence_mended')
  })
})

describe('code blocks the reply copied', () => {
  const LOGGING =
    'To configure the minimum log level, clients MAY send a logging/setLevel request:\n\n```json\n{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "method": "logging/setLevel",\n  "params": {\n    "level": "info"\n  }\n}\n```\n'

  it('are the passage block, with its lines, when it is the same code spaces aside', () => {
    // b04's reply with the real 1.5B model: line breaks squeezed out, the closing fence glued on.
    const repairs: VerificationRepair[] = []
    const out = mendCodeBlocks(
      [
        {
          text: '```\n{  "jsonrpc": "2.0",  "id": 1,  "method": "logging/setLevel",  "params": {    "level": "info"  }  }```',
          cites: [1],
        },
      ],
      [passage(1, LOGGING)],
      repairs,
    )
    expect(out[0]!.text).toBe(
      '```json\n{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "method": "logging/setLevel",\n  "params": {\n    "level": "info"\n  }\n}\n```',
    )
    expect(repairs.map((r) => r.code)).toEqual(['sentence_mended'])
  })

  it('get their fences on lines of their own when no passage has them', () => {
    const out = mendCodeBlocks([{ text: '```\nnpx server --port 3000```', cites: [1] }], [passage(1, LOGGING)], [])
    expect(out[0]!.text).toBe('```\nnpx server --port 3000\n```')
  })

  it('leave a well-formed block and prose alone', () => {
    const sentences = [
      { text: '```json\n{ "a": 1 }\n```', cites: [1] },
      { text: 'Clients MAY send a logging/setLevel request.', cites: [1] },
    ]
    const repairs: VerificationRepair[] = []
    expect(mendCodeBlocks(sentences, [passage(1, LOGGING)], repairs)).toEqual(sentences)
    expect(repairs).toEqual([])
  })
})
