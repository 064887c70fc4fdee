import { describe, expect, it } from 'vitest'
import type { RemovedSentence } from '../../shared/answer'
import type { VerificationRepair } from '../../shared/trace'
import { askedIdentifiers, retarget } from './off-target'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'

/**
 * A question that names an identifier, answered from passages that never mention it: the answer
 * is about something else, and the passage sentence that names it takes its place.
 */

// Shapes of the MCP specification's pagination and elicitation pages.
const PAGINATION = `### Error Handling

Invalid cursors SHOULD result in an error with code -32602 (Invalid params).`

const ELICITATION = `### URL Elicitation Required Error

When a request cannot be processed until an elicitation is completed, the server MAY return a
-32042 (URLElicitationRequiredError) error. Clients then open the URL the error names.`

const SAMPLING = `### Tool Choice Modes

The server controls tool use with \`toolChoice\` in the request: mode auto (the default), required or none.`

const passage = (n: number, text: string, heading = 'h'): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading, path: 'p.md', version: null, kind: null }) as unknown as PromptPassage

const run = (kept: KeptSentence[], question: string, passages: PromptPassage[]) => {
  const repairs: VerificationRepair[] = []
  const removed: RemovedSentence[] = []
  const { kept: out, retargeted } = retarget(kept, passages, (p) => p.text, question, repairs, removed)
  return { out, retargeted, repairs, removed }
}

describe('an answer about something other than the identifier asked about', () => {
  it('is replaced by the sentence of the passage that names it, and its sentence is listed as removed', () => {
    const wrong = { text: 'Invalid cursors SHOULD result in an error with code -32602 (Invalid params) [1].', cites: [1] }
    const r = run([wrong], 'What is error code -32042?', [passage(1, PAGINATION), passage(2, ELICITATION)])
    expect(r.retargeted).toBe(true)
    expect(r.out).toEqual([
      {
        text: 'When a request cannot be processed until an elicitation is completed, the server MAY return a -32042 (URLElicitationRequiredError) error.',
        cites: [2],
        added: 'quote',
      },
    ])
    expect(r.removed).toEqual([
      {
        text: wrong.text,
        cited: [1],
        code: 'off_target',
        reason: 'It does not answer about "-32042", which the question asks about, and neither do the passages it cites.',
      },
    ])
    expect(r.repairs.map((x) => x.code)).toEqual(['quote_added'])
  })

  it('is left alone when the answer names the identifier', () => {
    const kept = [{ text: 'It is URLElicitationRequiredError, code -32042 [2].', cites: [2] }]
    const r = run(kept, 'What is error code -32042?', [passage(1, PAGINATION), passage(2, ELICITATION)])
    expect(r).toMatchObject({ retargeted: false, out: kept, removed: [], repairs: [] })
  })

  it('is left alone when a passage it cites names the identifier, though the answer says it in other words', () => {
    const kept = [{ text: 'Set the mode to auto, required or none [1].', cites: [1] }]
    const r = run(kept, 'How do I use toolChoice when I ask for a sampling completion?', [
      passage(1, SAMPLING),
      passage(2, PAGINATION),
    ])
    expect(r).toMatchObject({ retargeted: false, out: kept, removed: [] })
  })

  it("counts the cited passage's heading as what it is about", () => {
    const kept = [{ text: 'Clients then open the URL the error names [1].', cites: [1] }]
    const r = run(kept, 'What should a client do on URLElicitationRequiredError?', [
      passage(1, 'Clients then open the URL the error names.', 'Elicitation > URLElicitationRequiredError'),
      passage(2, ELICITATION),
    ])
    expect(r.retargeted).toBe(false)
  })

  it('is left alone when no passage names the identifier: nothing better to say', () => {
    const kept = [{ text: 'Invalid cursors SHOULD result in an error with code -32602 (Invalid params) [1].', cites: [1] }]
    const r = run(kept, 'What is error code -32099?', [passage(1, PAGINATION), passage(2, ELICITATION)])
    expect(r).toMatchObject({ retargeted: false, out: kept, removed: [] })
  })

  it('does not take a version the question names for its subject', () => {
    expect(askedIdentifiers('In 2025-06-18, how do servers report progress? And in v1.2.0?')).toEqual([])
    expect(askedIdentifiers('What does tools/call return in 2025-06-18?')).toEqual(['tools/call'])
    const kept = [{ text: 'Servers send progress notifications with a token [1].', cites: [1] }]
    const r = run(kept, 'In 2025-06-18, how do servers report progress?', [passage(1, 'Progress is reported with a token.')])
    expect(r.retargeted).toBe(false)
  })
})
