import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Engine } from '../engine'
import { makePptx, makeXlsx } from '../ingest/parsers/__fixtures__/office'
import type { ChunkSource } from '../store/passages'
import { tempDir } from '../../test-support/paths'
import { openSource, SourceError } from './source'

/** The viewer's HTML for the office formats: built from what the parser reads, escaped, the file vetted again. */
describe('openSource for office formats', () => {
  let t: Awaited<ReturnType<typeof tempDir>>
  const engineFor = (rel: string) =>
    ({
      passages: {
        source: async (): Promise<ChunkSource> => ({
          chunk_id: 'c1',
          collection: 'docs',
          root: t.dir,
          path: rel,
          heading: '',
          version: null,
          page_start: null,
          page_end: null,
          text: 'x',
        }),
      },
    }) as unknown as Engine

  beforeAll(async () => {
    t = await tempDir('docent-source-')
    await writeFile(path.join(t.dir, 'deck.pptx'), makePptx([{ shapes: [{ title: 'Plan <b>' }, { body: ['Ship & test'] }] }]))
    await writeFile(
      path.join(t.dir, 'book.xlsx'),
      makeXlsx([
        {
          name: 'Parts',
          rows: [
            ['Part', 'Qty'],
            ['<script>', 2],
          ],
        },
      ]),
    )
    await writeFile(path.join(t.dir, 'fake.xlsx'), 'not a workbook')
  })
  afterAll(async () => t.cleanup())

  it('shows a deck and a workbook as escaped HTML (headings, lists, tables)', async () => {
    const deck = await openSource(engineFor('deck.pptx'), 'c1')
    expect(deck.format).toBe('html')
    expect(deck.content).toBe('<h1>Plan &lt;b&gt;</h1>\n<ul><li>Ship &amp; test</li></ul>')
    const book = await openSource(engineFor('book.xlsx'), 'c1')
    expect(book.content).toBe(
      '<h1>Parts</h1>\n<table><tr><th>Part</th><th>Qty</th></tr><tr><td>&lt;script&gt;</td><td>2</td></tr></table>',
    )
  })

  it('refuses a file that no longer reads, with the parser reason', async () => {
    const e = await openSource(engineFor('fake.xlsx'), 'c1').catch((x: unknown) => x)
    expect(e).toBeInstanceOf(SourceError)
    expect((e as SourceError).message).toBe('This document cannot be shown: file is not a valid XLSX (not a zip archive)')
  })
})
