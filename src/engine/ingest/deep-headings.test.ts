import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { isHit } from '../eval/questions'
import { tempDir } from '../../test-support/paths'

/**
 * A reference page whose entries sit under level-4 headings, through the real engine (import,
 * PGlite, keyword search): the passage found for an entry is cited under that entry's heading,
 * not its parent's, though the chunker packs the small entries together.
 */
describe('deep headings in citations', () => {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []
  const options = [
    ['maxRetries', 'How many times a failed upload is tried again before the client gives up. Default 3.'],
    ['retryDelay', 'Milliseconds to wait between two tries. Doubles after each failure.'],
    ['chunkSize', 'Bytes sent per request. Larger chunks mean fewer requests.'],
    ['checksum', 'Algorithm used to verify each chunk: sha256 or none.'],
  ]
  const page = [
    '# Upload client',
    '',
    '## Configuration',
    '',
    'The client reads these options from its constructor.',
    '',
    '### Options',
    '',
    'Every option is optional.',
    '',
    ...options.flatMap(([name, text]) => [`#### \`${name}\``, '', text!, '']),
    '## Events',
    '',
    'The client emits progress and done.',
  ].join('\n')

  beforeAll(async () => {
    const corpus = await tempDir()
    const data = await tempDir()
    cleanups.push(corpus.cleanup, data.cleanup)
    await mkdir(path.join(corpus.dir, 'reference'), { recursive: true })
    await writeFile(path.join(corpus.dir, 'reference/client.md'), page)
    engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'no-models') })
    expect((await engine.importFolder(corpus.dir, { collection: 'docs' })).failed).toEqual([])
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('cites a level-4 entry under its own heading, with its parents before it', async () => {
    const r = await engine.search('how many times does it try again, maxRetries', { mode: 'keyword', k: 5 })
    const top = r.results[0]!
    expect(top.path).toBe('reference/client.md')
    expect(top.text).toContain('How many times a failed upload is tried again')
    expect(top.heading.startsWith('Upload client > Configuration > Options > ')).toBe(true)
    // The four small entries share one passage; each keeps its heading in its citation.
    expect(top.heading.split(' > ').at(-1)!.split(' · ')).toEqual(['maxRetries', 'retryDelay', 'chunkSize', 'checksum'])
    for (const [name] of options) expect(isHit(top, { path: 'reference/client.md', heading: `\`${name}\`` })).toBe(true)
    expect(isHit(top, { path: 'reference/client.md', heading: 'Options' })).toBe(true)
    expect(isHit(top, { path: 'reference/client.md', heading: 'Events' })).toBe(false)
    // "Contains" is still one whole heading, not a part of one.
    expect(isHit(top, { path: 'reference/client.md', heading: 'Retries' })).toBe(false)
  })
})
