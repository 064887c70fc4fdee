import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { engineOverFiles } from '../../test-support/engine-over-files'

/**
 * Versions named in the question, end to end through Engine.search (keyword mode, no models):
 * precedence (an explicit choice beats a version named in the question, which beats the default),
 * and the version token is never scored as a content word.
 */
describe('versions named in the question', () => {
  let engine: Engine
  let cleanup: (() => Promise<void>) | undefined
  const files: Record<string, string> = {
    'spec/2024-01-01/widget.md':
      '# Widget\n\nThe widget supports pairing.\n\n## Reset\n\nHold the widget button for five seconds to reset it.\n',
    'spec/2025-01-01/widget.md':
      '# Widget\n\nThe widget supports mesh pairing.\n\n## Reset\n\nHold the widget button for ten seconds to reset it.\n',
    // A chunk full of version dates: scored as content, the date would lift it to the top.
    'spec/2025-01-01/examples.md':
      '# Examples\n\nSupported: 2024-01-01, 2025-01-01. Example payloads for 2025-01-01 and 2025-01-01 and 2024-01-01.\n',
    'spec/2025-01-01/changelog.md': '# Changelog\n\n## Major changes\n\nMesh pairing was added to the widget.\n',
    'spec/draft/widget.md': '# Widget\n\nThe widget supports mesh pairing and reset by voice.\n',
    'guide/faq.md': '# FAQ\n\nIs the widget waterproof? Yes. Reset it before a swim.\n',
  }

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(files, 'widgets'))
  })
  afterAll(() => cleanup?.())

  const search = (q: string, version?: string) =>
    engine.search(q, { scope: version === undefined ? {} : { version }, mode: 'keyword', k: 20 })

  it('searches the version named in the question when none was chosen', async () => {
    const r = await search('How do I reset the widget in 2024-01-01?')
    expect(r.scope.source).toBe('named_in_question')
    expect(r.scope.versions).toEqual({ widgets: ['2024-01-01'] })
    expect(r.scope.named).toEqual(['2024-01-01'])
    expect(r.scope_label).toBe('2024-01-01, named in your question')
    expect(r.results.length).toBeGreaterThan(0)
    for (const h of r.results) expect([null, '2024-01-01']).toContain(h.version)
    expect(r.results[0]!.heading).toBe('Widget > Reset')
  })

  it('"auto" is the same as not choosing', async () => {
    const r = await search('How do I reset the widget in 2024-01-01?', 'auto')
    expect(r.scope.source).toBe('named_in_question')
  })

  it('an explicit version wins over the one named in the question', async () => {
    const r = await search('How do I reset the widget in 2024-01-01?', '2025-01-01')
    expect(r.scope.source).toBe('chosen')
    expect(r.scope.versions).toEqual({ widgets: ['2025-01-01'] })
    for (const h of r.results) expect([null, '2025-01-01']).toContain(h.version)
  })

  it('an explicit "all" wins too', async () => {
    const r = await search('How do I reset the widget in 2024-01-01?', 'all')
    expect(r.scope.source).toBe('chosen')
    expect(new Set(r.results.map((h) => h.version))).toEqual(new Set(['2024-01-01', '2025-01-01', 'draft', null]))
  })

  it('nothing named and nothing chosen: every version, labelled as the default', async () => {
    const r = await search('How do I reset the widget?')
    expect(r.scope).toMatchObject({ source: 'default', label: 'all versions', named: [], change_log_first: false })
  })

  it('a date that is not a version of the collection stays content', async () => {
    const r = await search('How do I reset the widget in 2023-05-05?')
    expect(r.scope.source).toBe('default')
  })

  it('does not score the version token as a content word', async () => {
    const named = await search('What does the 2025-01-01 spec say about reset?')
    const chosen = await search('What does the say about reset?', '2025-01-01')
    // Same passages with the same BM25 scores: the date added nothing to the score.
    expect(named.results.map((h) => [h.chunk_id, h.scores.bm25])).toEqual(chosen.results.map((h) => [h.chunk_id, h.scores.bm25]))
    expect(named.results[0]!.path).not.toBe('spec/2025-01-01/examples.md')
  })

  it('ranks change-log sections first for a question about when something changed', async () => {
    const r = await search('When was mesh pairing added?')
    expect(r.scope.change_log_first).toBe(true)
    expect(r.results[0]!.path).toBe('spec/2025-01-01/changelog.md')
  })
})

/**
 * A release line named by its number ("Widgetry 3", "v4") in a tree whose releases are full release
 * numbers (a Docusaurus `versioned_docs/version-3.2.1/` layout): the line's newest release is searched.
 */
describe('a release line named in the question', () => {
  let engine: Engine
  let cleanup: (() => Promise<void>) | undefined
  const files: Record<string, string> = {
    'versions.json': JSON.stringify(['4.0.2', '3.2.1', '3.1.0']),
    'versioned_docs/version-4.0.2/reset.md': '# Reset\n\nHold the button for ten seconds to reset the widget.\n',
    'versioned_docs/version-3.2.1/reset.md': '# Reset\n\nHold the button for five seconds to reset the widget.\n',
    'versioned_docs/version-3.1.0/reset.md': '# Reset\n\nHold the button for three seconds to reset the widget.\n',
    'docs/reset.md': '# Reset\n\nSay "reset" to reset the widget.\n',
  }

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(files, 'widgetry'))
  })
  afterAll(() => cleanup?.())

  it.each([
    ['How do I reset the widget in Widgetry 3?', '3.2.1'],
    ['widgetry@3: how do I reset the widget?', '3.2.1'],
    ['How do I reset the widget in v4?', '4.0.2'],
    ['How do I reset the widget on 3.x?', '3.2.1'],
  ])('%s searches %s', async (q, version) => {
    const r = await engine.search(q, { mode: 'keyword', k: 10 })
    expect(r.scope.source).toBe('named_in_question')
    expect(r.scope.versions).toEqual({ widgetry: [version] })
    expect(r.results.length).toBeGreaterThan(0)
    for (const h of r.results) expect([null, version]).toContain(h.version)
  })

  it('a number after another word is not a release', async () => {
    const r = await engine.search('Does the widget reset after 3 presses?', { mode: 'keyword', k: 10 })
    expect(r.scope.source).toBe('default')
  })
})
