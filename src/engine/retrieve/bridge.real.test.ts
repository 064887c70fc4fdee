import { describe, expect, it } from 'vitest'
import { realEmbedderEngine } from '../../test-support/only-embedder'
import { ScriptedChat } from '../answer/scripted.testutil'
import { bridgeWords, canBridge } from './bridge'

/**
 * The bridge with the real embedder (all-MiniLM-L6-v2 int8, installed by models:dev): a word of
 * the question that no passage holds is searched as the section-title word nearest to it, and the
 * release rules say that a release lacks what it stands for. A small folder of two releases, only
 * the second with audio content; "microphone" is in none of it.
 */

const FILES: Record<string, string> = {
  'specification/1.0/tools.md':
    '# Tools\n\n## Calling Tools\n\nA client calls a tool with tools/call.\n\n## Text Content\n\nA tool returns text content as a string.\n\n' +
    '## Image Content\n\nImage content carries base64 data and a mimeType such as image/png.\n',
  'specification/2.0/tools.md':
    '# Tools\n\n## Calling Tools\n\nA client calls a tool with tools/call.\n\n## Text Content\n\nA tool returns text content as a string.\n\n' +
    '## Image Content\n\nImage content carries base64 data and a mimeType such as image/png.\n\n' +
    '## Audio Content\n\nAudio content carries base64 data and a mimeType such as audio/wav.\n',
  'specification/2.0/sampling.md':
    '# Sampling\n\n## Messages\n\nA sampling message holds text, image or audio content.\n\n## Audio Content\n\nAudio content in a sampling message carries base64 data.\n',
  'specification/2.0/chat.md': '# Chat\n\n## Chat Messages\n\nThe host keeps the messages of a conversation in order.\n',
  'specification/1.0/logging.md':
    '# Logging\n\n## Log Levels\n\nA client sets the least severe level of log messages the server sends.\n',
  'specification/2.0/logging.md':
    '# Logging\n\n## Log Levels\n\nA client sets the least severe level of log messages the server sends.\n',
}

describe('real embedder: words the documents never use, bridged to their section titles', () => {
  const open = realEmbedderEngine(FILES, 'docs')

  it('bridges "microphone" to "audio", and never a word to a title word it merely begins with ("chatty", "chat")', async () => {
    const engine = open()
    const embedder = (await engine.embedder()).model
    expect(canBridge(embedder)).toBe(true)
    if (!canBridge(embedder)) return
    const bridges = await bridgeWords(engine.db, embedder, ['docs'], 'how does a tool send what a microphone picks up?')
    expect(bridges.map((b) => [b.word, b.term])).toEqual([['microphone', 'audio']])
    expect(bridges[0]!.cosine).toBeGreaterThanOrEqual(0.6)
    const chatty = await bridgeWords(engine.db, embedder, ['docs'], 'how chatty are the server logs?')
    expect(chatty.map((b) => b.term)).not.toContain('chat')
  })

  it('finds the audio section for a question that says "microphone", and keeps the bridge in the trace', async () => {
    const engine = open()
    const question = 'how does a tool send back what a microphone picks up?'
    const hybrid = await engine.search(question, { scope: { collections: ['docs'], version: '2.0' }, mode: 'hybrid', k: 3 })
    expect(hybrid.results[0]!.heading).toBe('Tools > Audio Content')
    expect(hybrid.notices).toContain(
      'No passage says "microphone", so it was searched as "audio", the nearest word in the section titles.',
    )
    // Keyword search alone has no embedder to bridge with, and no passage says "microphone".
    const keyword = await engine.search(question, { scope: { collections: ['docs'], version: '2.0' }, mode: 'keyword', k: 3 })
    expect(keyword.results[0]?.heading).not.toBe('Tools > Audio Content')
  })

  it('refuses without the model where the release lacks what the word stands for, and says which word it weighed', async () => {
    const engine = open()
    const chat = new ScriptedChat([])
    const result = await engine.ask(
      { question: 'Can a tool send back what a microphone picks up?', scope: { collections: ['docs'], version: '1.0' } },
      { chat, useCache: false, gate: false },
    )
    expect(chat.calls).toHaveLength(0)
    expect(result).toMatchObject({ abstained: true, answer: null })
    expect(result.explanation).toBe(
      'The 1.0 docs never mention audio (the documents\' nearest word for "microphone"); it first appears in 2.0.',
    )
    const trace = (await engine.answers.trace(result.trace_id))!.data
    expect(trace.retrieval?.bridged?.map((b) => b.term)).toEqual(['audio'])
    expect(trace.release).toMatchObject({ verdict: 'never_mentioned', verdict_term: 'audio' })
  })
})
