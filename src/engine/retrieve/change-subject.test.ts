import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { engineOverFiles } from '../../test-support/engine-over-files'
import { changeLogSections, changeSubject } from './fuse'

/**
 * A question about what changed ranks change-log sections first; only those that mention what it
 * asks about. Seen on the MCP docs with the real embedder: "How has elicitation changed since it
 * was added?" got a change log's introduction and another release's schema changes first, and
 * neither says a word of elicitation.
 */

describe('the subject of a change question', () => {
  it('is the words that name what changed, not the words about change', () => {
    expect(changeSubject('How has elicitation changed since it was added?')).toEqual(['elicitation'])
    expect(changeSubject('what happened to ping and logging/setLevel?')).toEqual(['ping', 'logging/setlevel'])
    expect(changeSubject('What changed in the newest release?')).toEqual(['newest'])
  })

  it('keeps the change-log sections that mention it, or every one when none does', () => {
    const chunks = [
      {
        chunk_id: 'intro',
        path: 'spec/changelog.md',
        heading: 'Key Changes',
        kind: null,
        text: 'This document lists changes made since the previous revision.',
      },
      {
        chunk_id: 'major',
        path: 'spec/changelog.md',
        heading: 'Key Changes > Major changes',
        kind: null,
        text: '1. Added support for elicitation.',
      },
      {
        chunk_id: 'guide',
        path: 'spec/client/elicitation.md',
        heading: 'Elicitation',
        kind: null,
        text: 'Elicitation lets servers ask users.',
      },
    ]
    expect([...changeLogSections(chunks, ['elicitation'])]).toEqual(['major'])
    expect([...changeLogSections(chunks, ['sampling'])].sort()).toEqual(['intro', 'major'])
    expect([...changeLogSections(chunks, [])].sort()).toEqual(['intro', 'major'])
  })
})

describe('a change question through the engine', () => {
  let engine: Engine
  let cleanup: (() => Promise<void>) | undefined
  const guide = (v: string) =>
    `# Elicitation\n\nElicitation lets a server ask the user for input in ${v}. A client that supports elicitation declares the capability, and the elicitation request carries a message and a schema.\n`
  const files: Record<string, string> = {
    'spec/2025-03-26/changelog.md':
      '# Key Changes\n\n## Other schema changes\n\nChanged how annotations are listed since the previous revision; added the title field; changed the progress message; added completions since then.\n',
    'spec/2025-06-18/changelog.md':
      '# Key Changes\n\n## Major changes\n\n1. Remove support for JSON-RPC batching.\n2. Add structured tool output.\n3. Add support for elicitation, so servers can ask users for input.\n4. Require the protocol version header in HTTP requests.\n5. Add resource links to tool results.\n',
    'spec/2025-06-18/client/elicitation.md': guide('2025-06-18'),
    'spec/2025-11-25/client/elicitation.md': guide('2025-11-25'),
    'spec/2026-07-28/client/elicitation.md': guide('2026-07-28'),
  }

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(files, 'spec'))
  })
  afterAll(() => cleanup?.())

  it('puts the change log that mentions the subject first, not the one that only talks about change', async () => {
    const r = await engine.search('How has elicitation changed since it was added?', { scope: {}, mode: 'keyword', k: 10 })
    expect(r.scope.change_log_first).toBe(true)
    expect(r.results.map((h) => h.path)).toContain('spec/2025-03-26/changelog.md')
    expect(r.results[0]).toMatchObject({ path: 'spec/2025-06-18/changelog.md', heading: 'Key Changes > Major changes' })
  })
})
