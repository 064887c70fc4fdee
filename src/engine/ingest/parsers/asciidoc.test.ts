import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../../test-support/paths'
import { ParseError } from '../types'
import { asciidocHtml, parseAsciidocString, unwrapAdmonitions } from './asciidoc'
import { parseFile } from './index'
import { ParsePool } from './worker-pool'

const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'))

const GUIDE = [
  '= The *Widget* Guide',
  'Ann Writer',
  'v2.4, 2025-01-01',
  ':description: How to use the widget',
  '',
  'Preamble text.',
  '',
  '== Install',
  '',
  'Run the installer.',
  '',
  '[source,sh]',
  '----',
  'npm install widget',
  '  --save',
  '----',
  '',
  '=== On Linux',
  '',
  '* apt',
  '* snap',
  '',
  '==== Deep',
  '',
  '[cols="1,1"]',
  '|===',
  '|Name |Value',
  '',
  '|a|one',
  '|b|x \\| y',
  '|===',
  '',
  '===== Deeper',
  '',
  'Five.',
  '',
  '====== Deepest',
  '',
  'Six.',
  '',
  'NOTE: Mind the gap.',
  '',
  '[WARNING]',
  '====',
  'Hot surface.',
  '',
  '|===',
  '|inner|table',
  '|===',
  '====',
  '',
  'After.',
].join('\n')

describe('AsciiDoc', () => {
  it('makes = .. ====== headings of levels 1-6, with the title and revision from the header', async () => {
    const d = await parseAsciidocString(GUIDE)
    expect(d.title).toBe('The Widget Guide')
    expect(d.meta).toEqual({
      version: '2.4',
      author: 'Ann Writer',
      description: 'How to use the widget',
      title: 'The Widget Guide',
    })
    expect(d.sections.map((s) => [s.level, s.headings.at(-1)])).toEqual([
      [1, 'The Widget Guide'],
      [2, 'Install'],
      [3, 'On Linux'],
      [4, 'Deep'],
      [5, 'Deeper'],
      [6, 'Deepest'],
    ])
    expect(d.sections[5]!.headings).toEqual(['The Widget Guide', 'Install', 'On Linux', 'Deep', 'Deeper', 'Deepest'])
  })

  it('makes listings code, lists lists, tables Markdown tables and admonitions quotes', async () => {
    const blocks = (await parseAsciidocString(GUIDE)).sections.flatMap((s) => s.blocks)
    expect(blocks).toEqual([
      { kind: 'paragraph', text: 'Preamble text.' },
      { kind: 'paragraph', text: 'Run the installer.' },
      { kind: 'code', text: 'npm install widget\n  --save' },
      { kind: 'list', text: '- apt\n- snap' },
      { kind: 'table', text: '| Name | Value |\n| --- | --- |\n| a | one |\n| b | x \\| y |' },
      { kind: 'paragraph', text: 'Five.' },
      { kind: 'paragraph', text: 'Six.' },
      { kind: 'quote', text: 'Note: Mind the gap.' },
      { kind: 'quote', text: 'Warning:' },
      { kind: 'quote', text: 'Hot surface.' },
      { kind: 'table', text: '| inner | table |\n| --- | --- |' },
      { kind: 'paragraph', text: 'After.' },
    ])
  })

  it('unwraps an admonition without touching the HTML around it', () => {
    const html =
      '<p>a</p><div class="admonitionblock tip">\n<table>\n<tr>\n<td class="icon">\n<div class="title">Tip</div>\n</td>\n<td class="content">\nx\n</td>\n</tr>\n</table>\n</div><p>b</p>'
    expect(unwrapAdmonitions(html)).toBe('<p>a</p><blockquote>Tip: \nx\n</blockquote><div>\n</div><p>b</p>')
  })

  it('sets no version or title the file does not state', async () => {
    const d = await parseAsciidocString('== Only a section\n\nText.\n')
    expect(d.title).toBeNull()
    expect(d.meta).toEqual({})
    expect(d.sections[0]!.headings).toEqual(['Only a section'])
    expect((await parseAsciidocString(':version: 3.1\n\nText.\n')).meta).toEqual({ version: '3.1' })
  })

  it('never reads an include: not /etc/passwd, not a file beside the document', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      await mkdir(path.join(dir, 'docs'))
      await writeFile(path.join(dir, 'docs', 'secret.adoc'), 'The launch code is swordfish.\n')
      const passwd = readFileSync('/etc/passwd', 'utf8').split('\n')[0]!
      const src = `= Doc\n\ninclude::/etc/passwd[]\n\ninclude::secret.adoc[]\n\ninclude::${path.join(dir, 'docs', 'secret.adoc')}[]\n\nEnd.\n`
      const d = await parseFile(enc(src), 'docs/doc.adoc')
      const text = JSON.stringify(d)
      expect(passwd.length).toBeGreaterThan(0)
      expect(text).not.toContain(passwd)
      expect(text).not.toContain('swordfish')
      // Secure mode turns each include into a link to its target: the target's name is all that is left.
      expect(d.sections[0]!.blocks.map((b) => b.text)).toEqual([
        '/etc/passwd',
        'secret.adoc',
        path.join(dir, 'docs', 'secret.adoc'),
        'End.',
      ])
      expect(await asciidocHtml(enc(src))).toContain('<a href="/etc/passwd" class="bare include">')
    } finally {
      await cleanup()
    }
  })

  it('refuses invalid UTF-8 and an OpenPGP signature named .asc', async () => {
    const bad = await parseFile(new Uint8Array(Buffer.from('= T\n\ncaf\xe9\n', 'latin1')), 'a.adoc').catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(ParseError)
    expect((bad as Error).message).toMatch(/^not valid UTF-8 text \(byte 8\)/)
    const sig = '-----BEGIN PGP SIGNATURE-----\n\niQIzBAABCAAdFiEE\n-----END PGP SIGNATURE-----\n'
    const e = await parseFile(enc(sig), 'release.tar.gz.asc').catch((x: unknown) => x)
    expect((e as Error).message).toBe('an OpenPGP signature or key (ASCII armor), not an AsciiDoc document')
  })
})

describe('AsciiDoc in the parser worker', () => {
  let pool: ParsePool
  beforeAll(() => {
    pool = new ParsePool({ timeoutMs: 60_000 })
  })
  afterAll(async () => {
    await pool.close()
  })

  it('loads Asciidoctor inside the worker thread and parses there', async () => {
    const d = await pool.parse(enc(GUIDE), 'guide.adoc')
    expect(d.title).toBe('The Widget Guide')
    expect(d.sections.map((s) => s.level)).toEqual([1, 2, 3, 4, 5, 6])
  }, 60_000)
})
