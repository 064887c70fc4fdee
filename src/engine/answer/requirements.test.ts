import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { addRequirements } from './requirements'

/**
 * The requirements of the sources the answer rests on: the requirement sentences (MUST, SHOULD…)
 * of the passages the answer's own sentences cite, best-ranked first, that hold a word of the
 * question and that the answer does not say, copied after its last sentence citing their passage.
 */

// The shape of the MCP 2025-03-26 lifecycle page (q45 of mcp-docs' fit half, with the real model):
// the answer gave the timeout rule and stopped before what to do when it runs out.
const TIMEOUTS = `## Timeouts

Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion. When the request has not received a success or error response within the timeout period, the sender SHOULD issue a cancellation notification for that request and stop waiting for a response.

SDKs and other middleware SHOULD allow these timeouts to be configured on a per-request basis.

Implementations MAY choose to reset the timeout clock when receiving a progress notification corresponding to the request. Implementations SHOULD always enforce a maximum timeout, regardless of progress notifications.

The lifecycle page shows an example.`

const MANUAL = `## Timeouts

Set a timeout for every request you send. When it runs out, cancel the request and stop waiting.`

const passage = (n: number, text: string): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading: 'h', path: 'p.md', version: null, kind: null }) as unknown as PromptPassage

const QUESTION = 'What should happen if I never hear back about a request I sent?'
const said: KeptSentence[] = [
  {
    text: 'Implementations SHOULD establish timeouts for all sent requests, to prevent hung connections and resource exhaustion.',
    cites: [1],
  },
]

const add = async (kept: KeptSentence[], passages: PromptPassage[], misses?: (s: string[]) => Promise<{ index: number }[]>) => {
  const repairs: VerificationRepair[] = []
  const out = await addRequirements(kept, passages, (p) => p.text, QUESTION, repairs, misses)
  return { out, repairs }
}

describe('the requirements of the sources the answer rests on', () => {
  it('adds the cited passage’s requirement sentences on the question that the answer does not say, at most two', async () => {
    // "SDKs and other middleware SHOULD allow these timeouts to be configured…" holds no word of the question.
    const { out, repairs } = await add(said, [passage(1, TIMEOUTS), passage(2, MANUAL)])
    expect(out.slice(1)).toEqual([
      {
        text: 'When the request has not received a success or error response within the timeout period, the sender SHOULD issue a cancellation notification for that request and stop waiting for a response.',
        cites: [1],
        added: 'quote',
      },
      {
        text: 'Implementations MAY choose to reset the timeout clock when receiving a progress notification corresponding to the request.',
        cites: [1],
        added: 'quote',
      },
    ])
    expect(repairs).toEqual([
      {
        code: 'key_sentences_added',
        message:
          '2 requirements of passage [1], which the answer cites, on the question and not in the answer were copied from it.',
      },
    ])
  })

  it('takes them from a passage the answer cites below the best, citing that passage', async () => {
    const { out } = await add([{ ...said[0]!, cites: [2] }], [passage(1, MANUAL), passage(2, TIMEOUTS)])
    expect(out.slice(1).map((s) => [s.cites.join(), s.added])).toEqual([
      ['2', 'quote'],
      ['2', 'quote'],
    ])
  })

  it('adds nothing from a passage the answer does not cite, or whose document states no requirement keyword', async () => {
    expect((await add([{ ...said[0]!, cites: [2] }], [passage(1, TIMEOUTS), passage(2, MANUAL)])).repairs).toEqual([])
    expect((await add(said, [passage(1, MANUAL)])).repairs).toEqual([])
  })

  it('leaves out a requirement the release rule after generation finds about a feature the release lacks', async () => {
    // The rule is given the candidates in the passage's order; it finds the first about something the release lacks.
    const misses = async (sentences: string[]) => {
      expect(sentences).toHaveLength(2)
      return [{ index: 0 }]
    }
    const { out } = await add(said, [passage(1, TIMEOUTS)], misses)
    expect(out.slice(1).map((s) => s.text)).toEqual([
      'Implementations MAY choose to reset the timeout clock when receiving a progress notification corresponding to the request.',
    ])
  })
})
