import { describe, expect, it } from 'vitest'
import { loadQuestions } from '../eval/questions'
import { goldenQuestions } from '../../test-support/paths'
import { classifySmalltalk, stripGreeting } from './route'

describe('classifySmalltalk', () => {
  it('catches greetings, thanks and pleasantries', () => {
    expect(classifySmalltalk('hi')?.kind).toBe('greeting')
    expect(classifySmalltalk('thanks, that helped!')?.kind).toBe('thanks')
    expect(classifySmalltalk('good morning, how are you today?')?.kind).toBe('greeting')
    expect(classifySmalltalk('Thank you so much!')?.kind).toBe('thanks')
    expect(classifySmalltalk('bye')?.kind).toBe('farewell')
    expect(classifySmalltalk('who are you?')?.kind).toBe('identity')
    // Held out: "hey, you still there?" was answered with the protocol's ping mechanism.
    expect(classifySmalltalk('hey, you still there?')?.kind).toBe('greeting')
    expect(classifySmalltalk('are you still there?')?.kind).toBe('presence')
    expect(classifySmalltalk('anyone home?')?.kind).toBe('presence')
    expect(classifySmalltalk("thanks, that's all for today!")?.kind).toBe('thanks')
  })

  it('never takes a real question for small talk (an earlier prototype declined "How does ping work?")', () => {
    for (const q of [
      'How does ping work?',
      'hi, how does ping work?',
      'thanks! and what does -32602 mean?',
      'What do you do when a request times out?',
      'Is ping still part of MCP?',
      'ok so how do I cancel a request?',
      'later versions removed batching?',
      'is the server still there after a disconnect?',
      "that's all the fields a tool has?",
      'are you still there in the session after a timeout, or does the server drop it?',
    ]) {
      expect(classifySmalltalk(q), q).toBeNull()
    }
  })

  it('on the golden set: exactly the smalltalk questions are small talk', async () => {
    const questions = await loadQuestions(goldenQuestions)
    const mistakes = questions
      .filter((q) => (classifySmalltalk(q.question) !== null) !== (q.kind === 'smalltalk'))
      .map((q) => q.id)
    expect(mistakes).toEqual([])
  })

  it('strips a leading greeting from a real question', () => {
    expect(stripGreeting('hi, how does ping work?')).toBe('how does ping work?')
    expect(stripGreeting('How does ping work?')).toBe('How does ping work?')
  })
})
