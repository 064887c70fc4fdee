import { describe, expect, it } from 'vitest'
import { realEmbedderEngine } from '../../test-support/only-embedder'
import { ScriptedChat, reply } from './scripted.testutil'

/**
 * A sentence of the cited passage that says what was asked in other words, found by the real
 * embedder (all-MiniLM-L6-v2 int8, installed by models:dev) through the whole answer path. The
 * chat model is scripted (a real one is not installed in CI): it answers with the one guideline that
 * shares a word with the question, as Qwen2.5-Coder 1.5B did for p32 of mcp-docs-people. "store the
 * cursor and reuse it next time" is "persist … across sessions" in the page, words the question
 * does not hold. (The embedder puts that guideline at 0.61 from this question, the others below 0.4.)
 */

const FILES: Record<string, string> = {
  'pagination.md': `# Pagination

## Pagination Model

Pagination in this protocol uses an opaque cursor-based approach, instead of numbered pages. The page size is determined by the server, and clients must not assume a fixed page size.

## Implementation Guidelines

Clients SHOULD treat a missing nextCursor as the end of results.

- Treat cursors as opaque tokens
- Don't make assumptions about cursor format
- Don't attempt to parse or modify cursors
- Don't persist cursors across sessions
`,
  'logging.md': `# Logging

## Log Levels

A client sets the least severe level of log messages the server sends. Servers send log messages as notifications.
`,
}

describe('real embedder: sentences of the cited passage close in meaning to the question', () => {
  const open = realEmbedderEngine(FILES, 'docs')

  it('copies "Don\'t persist cursors across sessions" into an answer about reusing a cursor later, cited and marked as copied', async () => {
    const engine = open()
    const question = 'can I store the cursor and reuse it next time I connect?'
    const hits = await engine.search(question, { scope: { collections: ['docs'], version: 'auto' }, mode: 'hybrid', k: 3 })
    const guidelines = hits.results.findIndex((h) => h.heading === 'Pagination > Implementation Guidelines') + 1
    expect(guidelines).toBeGreaterThan(0)
    const chat = new ScriptedChat([reply(`Treat the cursor as an opaque token [${guidelines}].`, [guidelines])])
    const result = await engine.ask(
      { question, scope: { collections: ['docs'], version: 'auto' } },
      { chat, useCache: false, gate: false },
    )
    expect(result.abstained).toBe(false)
    const persist = result.sentences?.find((s) => s.text.includes("Don't persist cursors across sessions"))
    expect(persist).toMatchObject({ added: 'quote' })
    // The guidelines far from the question stay out.
    expect(result.answer).not.toContain('assumptions about cursor format')
    const cited = result.citations.find((c) => c.n === persist!.citations[0])
    expect(cited?.heading).toBe('Pagination > Implementation Guidelines')
    const trace = (await engine.answers.trace(result.trace_id))!.data
    expect(trace.verification).toMatchObject({ result: 'ok' })
    expect(JSON.stringify(trace)).toContain('close in meaning to the question')
  })
})
