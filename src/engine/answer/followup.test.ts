import { describe, expect, it } from 'vitest'
import { looksLikeFollowUp, questionSubject, rewriteFollowUpDeterministic, rewriteFollowUpWithModel } from './followup'
import { ScriptedChat } from './scripted.testutil'

const history = [
  {
    question: 'What is the Mcp-Session-Id header?',
    standalone: 'What is the Mcp-Session-Id header?',
    answer: 'A session id [1].',
  },
]

describe('follow-up rewriting', () => {
  it('spots short questions that lean on the previous turn', () => {
    expect(looksLikeFollowUp('When was it removed?')).toBe(true)
    expect(looksLikeFollowUp('and in 2024-11-05?')).toBe(true)
    expect(looksLikeFollowUp('What is error code -32042?')).toBe(false)
  })

  it('prepends the previous question subject when there is no model', () => {
    expect(questionSubject('What is the Mcp-Session-Id header?')).toBe('the Mcp-Session-Id header')
    expect(questionSubject('How does ping work?')).toBe('ping work')
    expect(rewriteFollowUpDeterministic('When was it removed?', history)).toBe('the Mcp-Session-Id header: When was it removed?')
    expect(rewriteFollowUpDeterministic('What is error code -32042?', history)).toBeNull()
    expect(rewriteFollowUpDeterministic('When was it removed?', [])).toBeNull()
  })

  it('asks the model for a standalone question under a schema, and rejects an empty one', async () => {
    const chat = new ScriptedChat([
      { standalone_question: 'When was the Mcp-Session-Id header removed?' },
      { standalone_question: '' },
    ])
    const good = await rewriteFollowUpWithModel(chat, 'When was it removed?', history)
    expect(good.standalone).toBe('When was the Mcp-Session-Id header removed?')
    expect(chat.calls[0]!.user).toContain('What is the Mcp-Session-Id header?')
    expect(chat.calls[0]!.schema).toMatchObject({ required: ['standalone_question'] })
    const bad = await rewriteFollowUpWithModel(chat, 'When was it removed?', history)
    expect(bad.standalone).toBeNull()
    expect(bad.problem).toMatch(/no standalone/)
  })
})
