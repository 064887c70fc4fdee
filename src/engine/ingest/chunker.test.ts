import { describe, expect, it } from 'vitest'
import { approximateTokenCounter, type TokenCounter } from '../core/model-ports'
import { chunkDocument, DEFAULT_CHUNK_OPTIONS } from './chunker'
import { parseMarkdownString } from './parsers/markdown'
import type { ParsedDocument } from './types'

const words = (n: number, w = 'word') => Array.from({ length: n }, (_, i) => `${w}${i}.`).join(' ')
// One token per whitespace-separated word: makes budgets easy to reason about in tests.
const wordCounter: TokenCounter = { id: 'words', count: (t) => t.split(/\s+/).filter(Boolean).length }

function doc(sections: ParsedDocument['sections'], title: string | null = null): ParsedDocument {
  return { title, meta: {}, sections }
}

describe('chunkDocument', () => {
  it('never lets a chunk straddle two sections and prefixes the title to the breadcrumb', () => {
    const chunks = chunkDocument(
      doc(
        [
          { headings: ['Intro'], level: 2, blocks: [{ kind: 'paragraph', text: 'Alpha text.' }] },
          { headings: ['Intro', 'Details'], level: 3, blocks: [{ kind: 'paragraph', text: 'Beta text.' }] },
        ],
        'Guide',
      ),
      wordCounter,
    )
    expect(chunks.map((c) => c.breadcrumb)).toEqual([
      ['Guide', 'Intro'],
      ['Guide', 'Intro', 'Details'],
    ])
    expect(chunks[0]!.text).toBe('Alpha text.')
  })

  it('splits a long table between rows and starts every piece with its header row', () => {
    const rows = Array.from({ length: 120 }, (_, i) => `| part-${i} | ${i * 3} mm | steel |`)
    const table = ['| Part | Length | Material |', '| --- | ---: | --- |', ...rows].join('\n')
    const chunks = chunkDocument(
      doc([{ headings: ['Parts'], level: 2, blocks: [{ kind: 'table', text: table }] }]),
      approximateTokenCounter,
      { maxTokens: 120, overlapTokens: 20 },
    )
    expect(chunks.length).toBeGreaterThan(4)
    for (const c of chunks) {
      expect(c.text.startsWith('| Part | Length | Material |\n| --- | ---: | --- |\n| part-')).toBe(true)
      expect(
        approximateTokenCounter.count(c.breadcrumb.join(' > ')) + 2 + approximateTokenCounter.count(c.text),
      ).toBeLessThanOrEqual(120)
    }
    // Every row is kept exactly once, in order.
    const kept = chunks.flatMap((c) => c.text.split('\n').slice(2))
    expect(kept).toEqual(rows)
  })

  it('splits long sections under the budget with overlap, counting the breadcrumb', () => {
    const text = words(300)
    const chunks = chunkDocument(doc([{ headings: ['Long'], level: 2, blocks: [{ kind: 'paragraph', text }] }]), wordCounter, {
      maxTokens: 100,
      overlapTokens: 10,
    })
    expect(chunks.length).toBeGreaterThan(3)
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(100)
    chunks.forEach((c, i) => expect(c.ordinal).toBe(i))
    // The second chunk starts with the tail of the first (overlap).
    const firstTail = chunks[0]!.text.split(' ').slice(-3).join(' ')
    expect(chunks[1]!.text.startsWith(firstTail) || chunks[1]!.text.includes(firstTail)).toBe(true)
  })

  it('keeps a code block whole when it fits and fences it', () => {
    const code = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n')
    const chunks = chunkDocument(
      doc([
        {
          headings: ['Code'],
          level: 2,
          blocks: [
            { kind: 'paragraph', text: words(50) },
            { kind: 'code', text: code },
          ],
        },
      ]),
      wordCounter,
      { maxTokens: 80, overlapTokens: 5 },
    )
    const withCode = chunks.filter((c) => c.text.includes('line 0'))
    expect(withCode).toHaveLength(1)
    expect(withCode[0]!.text).toContain('line 19')
    expect(withCode[0]!.text).toContain('```')
  })

  it('keeps page ranges from paged blocks', () => {
    const chunks = chunkDocument(
      doc([
        {
          headings: [],
          level: 0,
          blocks: [
            { kind: 'paragraph', text: 'a.', page: 3 },
            { kind: 'paragraph', text: 'b.', page: 4 },
          ],
        },
      ]),
      wordCounter,
    )
    expect(chunks[0]).toMatchObject({ pageStart: 3, pageEnd: 4 })
  })

  it('splits a single enormous line and never exceeds the budget with the approximate counter', () => {
    const chunks = chunkDocument(
      doc([{ headings: [], level: 0, blocks: [{ kind: 'paragraph', text: 'x'.repeat(200_000) }] }]),
      approximateTokenCounter,
    )
    expect(chunks.length).toBeGreaterThan(10)
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(DEFAULT_CHUNK_OPTIONS.maxTokens)
  })

  it('numbers ordinals per breadcrumb so an edit elsewhere keeps ids stable', () => {
    const a = chunkDocument(
      doc([
        { headings: ['A'], level: 2, blocks: [{ kind: 'paragraph', text: 'one.' }] },
        { headings: ['B'], level: 2, blocks: [{ kind: 'paragraph', text: 'two.' }] },
      ]),
      wordCounter,
    )
    expect(a.map((c) => c.ordinal)).toEqual([0, 0])
  })
})

describe('sections under level 4-6 headings', () => {
  const reference = [
    '# CLI',
    '',
    '## Options',
    '',
    'Flags the server takes.',
    '',
    '#### --port',
    '',
    'The port to listen on. Default 8080.',
    '',
    '#### --host',
    '',
    'The address to bind. Default localhost.',
    '',
    '##### IPv6',
    '',
    'Brackets around the address.',
    '',
    '#### --verbose',
    '',
    'Log every request.',
    '',
    '### Exit codes',
    '',
    'Zero on success.',
    '',
  ].join('\n')

  it('packs small deep sections with their level 1-3 section and names each of them in the breadcrumb', () => {
    const chunks = chunkDocument(parseMarkdownString(reference, 'cli.md'), wordCounter)
    expect(chunks.map((c) => c.breadcrumb)).toEqual([
      ['CLI', 'Options', '--port · --host · IPv6 · --verbose'],
      ['CLI', 'Options', 'Exit codes'],
    ])
    // Where a packed section starts, its heading is a line of the text.
    expect(chunks[0]!.text).toBe(
      'Flags the server takes.\n\n--port\n\nThe port to listen on. Default 8080.\n\n--host\n\nThe address to bind. Default localhost.\n\nIPv6\n\nBrackets around the address.\n\n--verbose\n\nLog every request.',
    )
  })

  it('gives a deep section its own full breadcrumb when it is alone in a chunk', () => {
    const chunks = chunkDocument(parseMarkdownString(reference, 'cli.md'), wordCounter, { maxTokens: 14, overlapTokens: 0 })
    expect(chunks.map((c) => c.breadcrumb.join(' > '))).toEqual([
      'CLI > Options',
      'CLI > Options > --port',
      'CLI > Options > --host',
      'CLI > Options > --host > IPv6',
      'CLI > Options > --verbose',
      'CLI > Options > Exit codes',
    ])
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(14)
    // A chunk that starts a section does not repeat its heading in the text: the breadcrumb has it.
    expect(chunks[1]!.text).toBe('The port to listen on. Default 8080.')
  })

  it('keeps every chunk inside the budget, breadcrumb included, however many sections it names', () => {
    const lines = ['# Keys', '', '## Settings', '']
    for (let i = 0; i < 60; i++) lines.push(`#### settingNumber${i}`, '', `Sets thing ${i}.`, '')
    const chunks = chunkDocument(parseMarkdownString(lines.join('\n'), 'keys.md'), wordCounter, {
      maxTokens: 40,
      overlapTokens: 5,
    })
    expect(chunks.length).toBeGreaterThan(5)
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(40)
    // Every key is named by the breadcrumb of the chunk that holds its text.
    for (let i = 0; i < 60; i++) {
      const holder = chunks.find((c) => c.text.includes(`Sets thing ${i}.`))!
      expect(holder.breadcrumb.at(-1)!.split(' · ')).toContain(`settingNumber${i}`)
    }
  })

  it('does not pack deep sections of different tabs together', () => {
    const md = [
      '## Install',
      '',
      '<Tabs>',
      '<Tab title="Python">',
      '',
      '#### Requirements',
      '',
      'Python 3.10.',
      '',
      '</Tab>',
      '<Tab title="Node">',
      '',
      '#### Requirements',
      '',
      'Node 20.',
      '',
      '</Tab>',
      '</Tabs>',
    ].join('\n')
    const chunks = chunkDocument(parseMarkdownString(md, 'install.mdx'), wordCounter)
    expect(chunks.map((c) => c.breadcrumb.join(' > '))).toEqual([
      'Install > Python > Requirements',
      'Install > Node > Requirements',
    ])
  })
})

describe('counting tokens once', () => {
  // A word-piece-like counter: a token per word and per punctuation mark, so counts of texts joined
  // at a space or a mark add up, as the real tokenizer's do.
  const pieces = (t: string) => t.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0
  const counting = (additive: boolean) => {
    const calls = { n: 0, chars: 0 }
    const counter: TokenCounter = {
      id: 'pieces',
      ...(additive ? { additive: true } : {}),
      count: (t) => {
        calls.n++
        calls.chars += t.length
        return pieces(t)
      },
    }
    return { counter, calls }
  }
  const code = Array.from({ length: 600 }, (_, i) => `const value${i} = compute(${i}, "line ${i}");`).join('\n')
  const long = doc([
    { headings: ['Code'], level: 2, blocks: [{ kind: 'code', text: code }] },
    { headings: ['Prose'], level: 2, blocks: [{ kind: 'paragraph', text: words(900) }] },
    { headings: ['Word'], level: 2, blocks: [{ kind: 'paragraph', text: 'x'.repeat(5000) + ' end.' }] },
  ])

  it('gives the same chunks adding counts as counting each joined text, reading far less text', () => {
    const whole = counting(false)
    const added = counting(true)
    const a = chunkDocument(long, whole.counter)
    const b = chunkDocument(long, added.counter)
    expect(b).toEqual(a)
    expect(a.length).toBeGreaterThan(10)
    // A 600-line code block split by lines recounted its growing buffer at every line.
    expect(added.calls.chars * 5).toBeLessThan(whole.calls.chars)
  })
})
