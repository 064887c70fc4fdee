import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { formatSignature } from './parsers/index'

/**
 * A format whose parser changed is read again on the next sync, and only its files: .rst files
 * were imported as plain text before reStructuredText had a parser (their stored signature has no
 * `;rst=` part); the other documents stay as they were.
 */
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups) await c()
})

describe('per-format parser versions', () => {
  it('names the version of formats that have one, and nothing for the others', () => {
    expect(formatSignature('docs/a.rst')).toBe(';rst=1')
    expect(formatSignature('docs/a.ADOC')).toBe(';asciidoc=1')
    expect(formatSignature('t.tsv')).toBe(';csv=1')
    // Unchanged formats keep the signature they were stored with: nothing of theirs is read again.
    expect(formatSignature('a.txt')).toBe('')
    expect(formatSignature('a.pdf')).toBe(';pdf=1')
    // Markdown 1 reads TOML front matter; HTML 1 a built Docusaurus page's version meta.
    expect(formatSignature('a.md')).toBe(';markdown=1')
    expect(formatSignature('a.html')).toBe(';html=1')
  })

  it('reads again an .rst imported under the old text parser, and leaves the Markdown alone', async () => {
    const root = await tempDir('docent-formats-')
    const data = await tempDir('docent-formats-data-')
    cleanups.push(root.cleanup, data.cleanup)
    await writeFile(path.join(root.dir, 'guide.rst'), 'Guide\n=====\n\nInstalling\n----------\n\nRun the kingfisher installer.\n')
    await writeFile(path.join(root.dir, 'notes.md'), '# Notes\n\nAlbatrosses glide.\n')
    const engine = await Engine.open({ dataDir: data.dir, modelsDir: path.join(data.dir, 'no-models') })
    cleanups.unshift(() => engine.close())
    expect((await engine.importFolder(root.dir, { collection: 'c' })).imported).toBe(2)

    // As an older build stored it: the signature without the format's version.
    await engine.db.query(`UPDATE documents SET chunker = replace(chunker, $1, '') WHERE path = 'guide.rst'`, [
      formatSignature('guide.rst'),
    ])
    const second = await engine.importFolder(root.dir, { collection: 'c' })
    expect(second).toMatchObject({ imported: 1, unchanged: 1 })
    const third = await engine.importFolder(root.dir, { collection: 'c' })
    expect(third).toMatchObject({ imported: 0, unchanged: 2 })

    const { rows } = await engine.db.query<{ heading: string }>(`SELECT heading FROM chunks WHERE path = 'guide.rst'`)
    expect(rows.map((r) => r.heading).join('\n')).toContain('Installing')
  }, 60_000)
})
