import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../../shared/trace'
import type { KeptSentence } from '../procedure'
import type { PromptPassage } from '../prompt'
import type { ReleaseCheck } from '../release'
import { authoritativeRefusal, citeAuthoritative } from './authoritative'

/**
 * An answer scoped to a release must rest on that release's specification. A sentence the model
 * cited to a guide, which the specification among its passages also says, is cited to the
 * specification too; a sentence only the guide says is not, and the answer is still refused.
 */

const GUIDE = `When a server needs user input while processing a request such as tools/call, it responds with an InputRequiredResult whose inputRequests field carries elicitation requests.`
const SPEC = `A server that needs more input to complete a tools/call responds with an InputRequiredResult: when a server needs user input while processing a request such as tools/call, it responds with an InputRequiredResult whose inputRequests field carries elicitation requests. The client retries the request with inputResponses.`
const OTHER = `Servers list their tools with tools/list and call them with tools/call.`

const passage = (n: number, text: string, kind: string, version = '2026-07-28'): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading: 'Tools > Input', path: `${kind}.mdx`, version, kind, page: null }) as PromptPassage

const release = {
  trace: { releases: ['2026-07-28'], authoritative_kinds: ['Specification'], must_cite_authoritative: true },
  explanation: null,
  mustCite: ['tools/call'],
  featureTerms: [],
} as unknown as ReleaseCheck

const question = 'In the middle of a tools/call, how can a server ask the client for extra input?'

describe('citing the release specification a guide sentence also rests on', () => {
  it('cites the specification that says the sentence too, and the answer then stands', async () => {
    const passages = [passage(1, GUIDE, 'Docs'), passage(2, SPEC, 'Specification')]
    const kept: KeptSentence[] = [{ text: GUIDE, cites: [1] }]
    const byN = new Map(passages.map((p) => [p.n, p]))
    // Before: refused, the fault this repairs.
    expect(authoritativeRefusal(kept, byN, release)?.cited).toBe(false)
    const repairs: VerificationRepair[] = []
    await citeAuthoritative(kept, passages, release, question, repairs)
    expect(kept[0]!.cites).toEqual([1, 2])
    expect(repairs.map((r) => r.code)).toEqual(['authoritative_cited'])
    expect(authoritativeRefusal(kept, byN, release)).toEqual({ cited: true, refusal: null })
  })

  it('leaves a sentence the specification does not say, and the refusal stands', async () => {
    const passages = [passage(1, GUIDE, 'Docs'), passage(2, OTHER, 'Specification')]
    const kept: KeptSentence[] = [{ text: GUIDE, cites: [1] }]
    const repairs: VerificationRepair[] = []
    await citeAuthoritative(kept, passages, release, question, repairs)
    expect(kept[0]!.cites).toEqual([1])
    expect(repairs).toEqual([])
    expect(authoritativeRefusal(kept, new Map(passages.map((p) => [p.n, p])), release)?.refusal).toContain(
      'does not rest on the 2026-07-28 specification',
    )
  })

  it('does not cite another release’s specification', async () => {
    const passages = [passage(1, GUIDE, 'Docs'), passage(2, SPEC, 'Specification', '2025-11-25')]
    const kept: KeptSentence[] = [{ text: GUIDE, cites: [1] }]
    await citeAuthoritative(kept, passages, release, question, [])
    expect(kept[0]!.cites).toEqual([1])
  })
})
