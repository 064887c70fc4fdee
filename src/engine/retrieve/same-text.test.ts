import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { engineOverFiles } from '../../test-support/engine-over-files'
import { sameTextLabel } from '../../shared/passage'
import { foldSameText } from './same-text'

/**
 * The same section copied into every release's folder is one result. Seen on the MCP docs with no
 * version chosen: "Where can I find the log files Claude Desktop writes?" found six copies of one
 * debugging section first, and the answer cited one sentence [1][2][3][4][5][6].
 */

describe('folding copies', () => {
  const order = ['a1', 'b', 'a2', 'c', 'a3', 'd', 'e'].map((chunk_id) => ({ chunk_id }))
  const hashes = new Map([
    ['a1', 'A'],
    ['a2', 'A'],
    ['a3', 'A'],
    ['b', 'B'],
    ['c', 'C'],
    ['d', 'D'],
  ])

  it('keeps the best-ranked copy, names the others, and gives their places to the next passages', () => {
    const top = foldSameText(order, hashes, 4)
    expect(top.map((t) => t.item.chunk_id)).toEqual(['a1', 'b', 'c', 'd'])
    expect(top[0]!.same).toEqual(['a2', 'a3'])
    expect(top.slice(1).every((t) => t.same.length === 0)).toBe(true)
  })

  it('collects copies ranked below the cut too, and never folds a passage whose hash is unknown', () => {
    const top = foldSameText(order, hashes, 2)
    expect(top.map((t) => [t.item.chunk_id, t.same])).toEqual([
      ['a1', ['a2', 'a3']],
      ['b', []],
    ])
    expect(foldSameText(order, new Map(), 3).map((t) => t.item.chunk_id)).toEqual(['a1', 'b', 'a2'])
  })

  it('says where the copies are, by release or else by file', () => {
    const at = (version: string | null, path = `docs/${version}/debugging.md`) => ({ chunk_id: path, path, version, page: null })
    expect(sameTextLabel([])).toBeNull()
    expect(sameTextLabel([at('2024-11-05')])).toBe('also word for word in 2024-11-05')
    expect(sameTextLabel([at('2025-03-26'), at('2024-11-05')])).toBe('also word for word in 2024-11-05 and 2025-03-26')
    expect(sameTextLabel([at('3.10'), at('3.9')])).toBe('also word for word in 3.9 and 3.10')
    expect(sameTextLabel(['a', 'b', 'c', 'd', 'e', 'f'].map((v) => at(v)))).toBe('also word for word in a, b, c, d and 2 more')
    expect(sameTextLabel([at(null, 'backup/notes.md')])).toBe('also word for word in backup/notes.md')
  })
})

describe('copies through the engine', () => {
  let engine: Engine
  let cleanup: (() => Promise<void>) | undefined
  const logs =
    '# Debugging\n\n## Viewing logs\n\nLog files are written to ~/Library/Logs/Claude on macOS and to %APPDATA%\\Claude\\logs on Windows. Follow them with tail -n 20 -F ~/Library/Logs/Claude/mcp*.log while the server runs.\n'
  const files: Record<string, string> = {
    'docs/2024-11-05/tools/debugging.md': logs,
    'docs/2025-03-26/tools/debugging.md': logs,
    'docs/2025-06-18/tools/debugging.md': logs,
    // One word differs: not a copy, and that difference may be what is asked.
    'docs/2025-11-25/tools/debugging.md': logs.replace('while the server runs', 'while the server starts'),
    'docs/2025-06-18/develop/build-server.md':
      '# Build a server\n\n## Troubleshooting\n\nClaude Desktop writes its MCP log files to ~/Library/Logs/Claude: mcp.log holds general logging and mcp-server-NAME.log the errors of each server.\n',
  }

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(files, 'mcp'))
  })
  afterAll(() => cleanup?.())

  it('returns one result for the copies, naming the other releases, and the next different section in their places', async () => {
    const r = await engine.search('where are the Claude log files on macOS?', { scope: {}, mode: 'keyword', k: 3 })
    expect(r.scope.label).toMatch(/all versions/i)
    const copies = r.results.filter((h) => h.path.endsWith('tools/debugging.md') && h.version !== '2025-11-25')
    expect(copies).toHaveLength(1)
    expect(copies[0]!.same_in?.map((s) => s.version).sort()).toEqual(
      ['2024-11-05', '2025-03-26', '2025-06-18'].filter((v) => v !== copies[0]!.version),
    )
    expect(r.results.map((h) => h.path)).toEqual(
      expect.arrayContaining(['docs/2025-11-25/tools/debugging.md', 'docs/2025-06-18/develop/build-server.md']),
    )
    expect(r.results).toHaveLength(3)
  })

  it('folds nothing inside one release', async () => {
    const r = await engine.search('where are the Claude log files on macOS?', {
      scope: { version: '2025-03-26' },
      mode: 'keyword',
      k: 3,
    })
    expect(r.results.map((h) => h.version)).toEqual(['2025-03-26'])
    expect(r.results[0]!.same_in).toBeUndefined()
  })
})

describe('an answer from a section copied into several releases', () => {
  it('labels no sentence with the one release of a passage that stands in others too', async () => {
    // q48 with the real model: "2025-06-18: Log files are written to: ~/Library/Logs/Claude [1]",
    // from a section that reads the same in six releases.
    const { ScriptedChat } = await import('../answer/scripted.testutil')
    const logs =
      '# Debugging\n\n## Viewing logs\n\nLog files are written to ~/Library/Logs/Claude on macOS and to %APPDATA%\\Claude\\logs on Windows.\n'
    const { engine, cleanup } = await engineOverFiles(
      {
        'docs/1.0/debugging.md': logs,
        'docs/3.0/debugging.md': logs,
        // Another release's own section: whichever copy stands for the two, the answer rests on two releases.
        'docs/2.0/build.md':
          '# Build\n\n## Troubleshooting\n\nClaude Desktop writes mcp.log in ~/Library/Logs/Claude with general logging.\n',
      },
      'docs',
    )
    try {
      const chat = new ScriptedChat([
        (args) => {
          const n = (section: string) => Number(new RegExp(`<passage n="(\\d+)" section="${section}"`).exec(args.user)![1])
          return {
            answerable: true,
            sentences: [
              { text: 'Log files are written to ~/Library/Logs/Claude on macOS.', cites: [n('Debugging &gt; Viewing logs')] },
              { text: 'Claude Desktop writes mcp.log in ~/Library/Logs/Claude.', cites: [n('Build &gt; Troubleshooting')] },
            ],
            unanswered_parts: [],
          }
        },
      ])
      const result = await engine.ask(
        { question: 'Where are the Claude Desktop log files on macOS?', scope: { collections: ['docs'], version: 'all' } },
        { chat, mode: 'keyword', useCache: false, gate: false },
      )
      expect(result.abstained).toBe(false)
      const logsCited = result.citations.find((c) => c.heading === 'Debugging > Viewing logs')!
      expect(logsCited.same_in).toHaveLength(1)
      // Only one release's own passage is left to label, so no sentence is labelled.
      expect(result.sentences!.length).toBeGreaterThanOrEqual(2)
      expect(result.sentences!.every((s) => s.version === undefined)).toBe(true)
      expect(result.notices.join(' ')).not.toMatch(/releases cited/)
      expect(result.answer).toMatch(/^Log files are written/)
    } finally {
      await cleanup()
    }
  })
})
