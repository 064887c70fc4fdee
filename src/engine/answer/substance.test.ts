import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'
import { addSubstance, restates, wantedOf } from './substance'

/**
 * An answer that only restates the question, talks about the passage, or leaves out the kind of
 * thing the question asks for gets the passage sentence that answers, copied and cited.
 */

// Shapes of the MCP specification's prompts and tasks pages.
const PROMPTS = `### List Changed Notification

When the list of available prompts changes, servers that declared the listChanged capability
SHOULD send a notification:

\`\`\`json
{ "jsonrpc": "2.0", "method": "notifications/prompts/list_changed" }
\`\`\`

Clients refresh their list when they receive it.`

const TASKS = `### Getting Task Results

After a task completes, the requestor retrieves its result. The requestor sends a tasks/result
request, which blocks until the task reaches a terminal status. Requestors MAY keep polling
tasks/get in parallel.`

const UNRELATED = `### Logging

Servers emit log messages with a severity level chosen by the client.`

const passage = (n: number, text: string): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading: 'h', path: 'p.md', version: null, kind: null }) as unknown as PromptPassage

const run = (kept: KeptSentence[], question: string, passages: PromptPassage[]) => {
  const repairs: VerificationRepair[] = []
  return { out: addSubstance(kept, passages, (p) => p.text, question, repairs), repairs }
}

describe('what a question asks for', () => {
  it.each([
    ['what notifcation does the server send when its list of prompts changes', 'name'],
    ['Which header carries the session id?', 'name'],
    ['how long may a token live?', 'number'],
    ['Which error codes does the spec define?', 'number'],
    ['which release first let servers attach icons to tools?', 'version'],
    ['Why is token passthrough forbidden?', null],
    ['How do I resume a broken SSE stream?', null],
    ['Which field types can the form schema use?', null],
  ] as const)('%s: %s', (q, wanted) => expect(wantedOf(q)).toBe(wanted))

  it('tells a restatement and talk about the passage from an answer', () => {
    const q = 'what notifcation does the server send when its list of prompts changes'
    expect(restates('The server sends a notification when its list of prompts changes [1].', q)).toBe(true)
    expect(restates('The passage describes how a server signals changes.', q)).toBe(true)
    expect(restates('It sends notifications/prompts/list_changed [1].', q)).toBe(false)
    expect(restates('Servers that declared the listChanged capability send it after every change to the list.', q)).toBe(false)
  })
})

describe('an answer without substance', () => {
  it('gets the cited passage sentence that names what the question asks for', () => {
    const q = 'what notifcation does the server send when its list of prompts changes'
    const { out, repairs } = run([{ text: 'The server sends a notification when its list of prompts changes.', cites: [1] }], q, [
      passage(1, PROMPTS),
    ])
    expect(out).toEqual([
      { text: 'The server sends a notification when its list of prompts changes.', cites: [1] },
      {
        text: 'When the list of available prompts changes, servers that declared the listChanged capability SHOULD send a notification:',
        cites: [1],
        added: 'quote',
      },
      { text: '```json\n{ "jsonrpc": "2.0", "method": "notifications/prompts/list_changed" }\n```', cites: [1], added: 'quote' },
    ])
    expect(repairs).toEqual([
      {
        code: 'quote_added',
        message: 'The answer did not give the name the question asks for; the sentence of passage [1] that answers it was added.',
      },
    ])
  })

  it('replaces nothing and adds the answering sentence after talk about the passage', () => {
    const q = 'How did the release before the current one let you get the result of a finished task?'
    const { out } = run([{ text: 'The passage describes a task lifecycle.', cites: [2] }], q, [
      passage(1, UNRELATED),
      passage(2, TASKS),
    ])
    expect(out[0]!.text).toBe('The passage describes a task lifecycle.')
    expect(out[1]).toMatchObject({ cites: [2], added: 'quote' })
    expect(out[1]!.text).toMatch(/^After a task completes, the requestor retrieves its result\.$|tasks\/result/)
  })

  it('leaves an answer with substance alone, and adds nothing from passages that are not about the question', () => {
    const q = 'what notification does the server send when its list of prompts changes'
    const good = [{ text: 'It sends notifications/prompts/list_changed.', cites: [1] }]
    expect(run(good, q, [passage(1, PROMPTS)]).out).toEqual(good)
    const vague = [{ text: 'The server sends a notification when its prompts change.', cites: [1] }]
    expect(run(vague, q, [passage(1, UNRELATED)])).toEqual({ out: vague, repairs: [] })
  })

  it('looks only in the passages the answer cites', () => {
    const q = 'what notification does the server send when its list of prompts changes'
    const vague = [{ text: 'The server sends a notification when its prompts change.', cites: [2] }]
    expect(run(vague, q, [passage(1, PROMPTS), passage(2, UNRELATED)]).repairs).toEqual([])
  })
})

describe('through the engine', () => {
  it('shows the answering sentence as added, cited and named in the trace', async () => {
    const { reply } = await import('./scripted.testutil')
    const { askOverOneFile } = await import('../../test-support/ask-over-one-file')
    const { result, trace } = await askOverOneFile(
      { name: 'prompts.md', markdown: `# Prompts\n\n${PROMPTS}\n` },
      'what notification does the server send when its list of prompts changes',
      // Not a restatement (the verifier sends those back to the model): it has words of its own, and no name.
      [reply('Servers that declared the capability send a notification when prompts change [1].', [1])],
    )
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.sentences?.map((s) => s.added ?? null)).toEqual([null, 'quote', 'quote'])
    expect(result.answer).toContain('notifications/prompts/list_changed')
    expect(result.citations).toHaveLength(1)
    expect(JSON.stringify(trace)).toContain('quote_added')
  })
})
