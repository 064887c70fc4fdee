import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { openSource } from './source'

/** The source viewer's content for the text formats of issue 26: AsciiDoc as its HTML, RST and CSV as their text. */
describe('source viewer for AsciiDoc, reStructuredText and CSV', () => {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []
  const chunkOf = async (rel: string): Promise<string> => {
    const { rows } = await engine.db.query<{ id: string }>('SELECT id FROM chunks WHERE path = $1 LIMIT 1', [rel])
    if (!rows[0]) throw new Error(`no chunk of ${rel}`)
    return rows[0].id
  }

  beforeAll(async () => {
    const [docs, data] = [await tempDir(), await tempDir()]
    cleanups.push(docs.cleanup, data.cleanup)
    await writeFile(path.join(docs.dir, 'guide.adoc'), '= Guide\n\n== Pairing\n\nHold the button.\n\ninclude::/etc/passwd[]\n')
    await writeFile(path.join(docs.dir, 'notes.rst'), 'Notes\n=====\n\nThe petrel flies far.\n')
    await writeFile(path.join(docs.dir, 'birds.csv'), 'bird,wingspan\nalbatross,3.5 m\n')
    engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'none') })
    expect((await engine.importFolder(docs.dir, { collection: 'docs' })).imported).toBe(3)
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('shows AsciiDoc as Asciidoctor HTML, its includes links and never the included file', async () => {
    const view = await openSource(engine, await chunkOf('guide.adoc'))
    expect(view.format).toBe('html')
    expect(view.content).toContain('<h1>Guide</h1>')
    expect(view.content).toContain('<h2 id="_pairing">Pairing</h2>')
    expect(view.content).toContain('<a href="/etc/passwd" class="bare include">')
    expect(view.content).not.toContain(readFileSync('/etc/passwd', 'utf8').split('\n')[0]!)
  })

  it('shows reStructuredText and CSV as their text', async () => {
    expect(await openSource(engine, await chunkOf('notes.rst'))).toMatchObject({
      format: 'text',
      content: 'Notes\n=====\n\nThe petrel flies far.\n',
    })
    expect(await openSource(engine, await chunkOf('birds.csv'))).toMatchObject({
      format: 'text',
      content: 'bird,wingspan\nalbatross,3.5 m\n',
    })
  })
})
