import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Engine } from '../engine'
import { engineOverFiles } from '../../test-support/engine-over-files'
import { NOT_IN_CONTEXT, OverlapReranker, ScriptedChat } from './scripted.testutil'

/**
 * A quoted answer (the model gave none that stands) reads as its passage does: a table row comes
 * under its table's header, as the model's copied rows do.
 */
const FILES: Record<string, string> = {
  'reference/cli.md':
    '# CLI\n\n## Exit codes\n\nThe CLI exits with one of these codes:\n\n| Code | Meaning |\n| --- | --- |\n| 0 | Success: every file was read |\n| 5 | Tool error: the tool call failed or the tool was not found |\n',
  'reference/config.md': '# Config\n\n## Files\n\nThe CLI reads its settings from a config file in the working folder.\n',
}

describe('a quoted answer', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(FILES, 'docs'))
  })
  afterAll(async () => {
    await cleanup?.()
  })

  it("shows a table row under its table's header", async () => {
    const chat = new ScriptedChat([NOT_IN_CONTEXT])
    const result = await engine.ask(
      { question: 'What does exit code 5 of the CLI mean when a tool fails?', scope: { collections: ['docs'], version: 'all' } },
      { chat, reranker: new OverlapReranker(), mode: 'keyword', useCache: false, gate: false },
    )
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.sentences!.every((s) => s.added === 'quote')).toBe(true)
    const lines = result.answer!.split('\n')
    const header = lines.findIndex((l) => /\|\s*Code\s*\|\s*Meaning\s*\|/.test(l))
    const row = lines.findIndex((l) => l.includes('Tool error'))
    expect(header).toBeGreaterThanOrEqual(0)
    expect(row).toBeGreaterThan(header)
  })
})
