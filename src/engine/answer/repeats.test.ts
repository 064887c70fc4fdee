import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import { dropRepeats } from './repeats'

describe('a sentence the answer says twice', () => {
  it('is shown once, with the citations of both, and named in a repair', () => {
    // The shape seen with Qwen2.5-Coder 1.5B: the model wrote its paragraph twice, then a copied line.
    const para = 'The authorization server issues access tokens for use at the MCP server.'
    const repairs: VerificationRepair[] = []
    const out = dropRepeats(
      [
        { text: para, cites: [1] },
        { text: 'It may be hosted with the resource server.', cites: [1] },
        { text: `${para}  `, cites: [1, 3] },
        { text: '- 9. Remove ping.', cites: [2], added: 'quote' },
        { text: '9. remove ping', cites: [2], added: 'quote' },
      ],
      repairs,
    )
    expect(out.map((s) => [s.text, s.cites.join()])).toEqual([
      [para, '1,3'],
      ['It may be hosted with the resource server.', '1'],
      ['- 9. Remove ping.', '2'],
    ])
    expect(repairs).toEqual([
      { code: 'repeat_dropped', message: '2 sentences the answer already said, or said in full elsewhere, were shown once.' },
    ])
  })

  it('drops a sentence that a longer one says in full, showing the longer one where the first stood', () => {
    // h04 with the model: its own first half of the change-log line, then the line copied whole (twice).
    const part = 'Remove protocol-level sessions and the Mcp-Session-Id header from the Streamable HTTP transport.'
    const line = `1. ${part} List endpoints no longer vary per-connection.`
    const repairs: VerificationRepair[] = []
    const out = dropRepeats(
      [
        { text: part, cites: [1] },
        { text: 'Servers use explicit handles instead.', cites: [2] },
        { text: line, cites: [1], added: 'quote' },
        { text: line, cites: [3], added: 'quote' },
        { text: 'Yes.', cites: [1] },
      ],
      repairs,
    )
    expect(out.map((s) => [s.text, s.cites.join(), s.added ?? null])).toEqual([
      [line, '1,3', 'quote'],
      ['Servers use explicit handles instead.', '2', null],
      ['Yes.', '1', null],
    ])
    expect(repairs.map((r) => r.code)).toEqual(['repeat_dropped'])
  })

  it('leaves an answer without repeats as it was, and names nothing', () => {
    const repairs: VerificationRepair[] = []
    const kept = [
      { text: 'Servers declare the logging capability.', cites: [1] },
      { text: 'Clients set the level per request.', cites: [2] },
    ]
    expect(dropRepeats(kept, repairs)).toEqual(kept)
    expect(repairs).toEqual([])
  })
})

describe('through the engine', () => {
  it('shows a paragraph the model wrote twice once, and names the repair in the trace', async () => {
    const { reply } = await import('./scripted.testutil')
    const { askOverOneFile } = await import('../../test-support/ask-over-one-file')
    const text =
      'The authorization server is responsible for interacting with the user and issuing access tokens for use at the MCP server. It may be hosted with the resource server or a separate entity.'
    const { result, trace } = await askOverOneFile(
      { name: 'authorization.md', markdown: `# Authorization\n\n## Roles\n\n${text}\n` },
      'Which server is responsible for issuing access tokens for use at the MCP server?',
      [reply(`${text} [1] ${text} [1]`, [1])],
    )
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.answer!.split('issuing access tokens').length - 1).toBe(1)
    expect(result.answer!.split('separate entity').length - 1).toBe(1)
    expect(JSON.stringify(trace)).toContain('repeat_dropped')
  })
})
