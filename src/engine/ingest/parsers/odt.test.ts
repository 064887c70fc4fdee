import { describe, expect, it } from 'vitest'
import { parseError } from './__fixtures__/errors'
import { makeZip } from './__fixtures__/generate'
import { makePptx, odfParts, oleFile } from './__fixtures__/office'
import { documentHtml } from './doc-html'
import { parseOdt } from './odt'

const numbered =
  '<text:list-style style:name="L2"><text:list-level-style-number text:level="1"/><text:list-level-style-bullet text:level="2"/></text:list-style>'
const body = [
  '<text:p text:style-name="Title">Field guide</text:p>',
  '<text:h text:outline-level="1">Setup</text:h>',
  '<text:p>Install<text:s text:c="2"/>it<text:tab/>now<text:line-break/>please.<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>Or later.</text:p></text:note-body></text:note></text:p>',
  '<text:h text:outline-level="2">Lists</text:h>',
  '<text:list text:style-name="L1"><text:list-item><text:p>apples</text:p><text:list><text:list-item><text:p>green</text:p></text:list-item></text:list></text:list-item><text:list-item><text:p>pears</text:p></text:list-item></text:list>',
  '<text:list text:style-name="L2"><text:list-item><text:p>first</text:p><text:list><text:list-item><text:p>detail</text:p></text:list-item></text:list></text:list-item><text:list-item><text:p>second</text:p></text:list-item></text:list>',
  '<text:h text:outline-level="1">Table</text:h>',
  '<table:table table:name="T1"><table:table-column table:number-columns-repeated="2"/><table:table-header-rows><table:table-row><table:table-cell><text:p>Key</text:p></table:table-cell><table:table-cell><text:p>Value</text:p></table:table-cell></table:table-row></table:table-header-rows>',
  '<table:table-row><table:table-cell><text:p>a|b</text:p></table:table-cell><table:table-cell><text:p>one</text:p><text:p>two</text:p></table:table-cell></table:table-row></table:table>',
  '<text:section text:name="S"><text:p>Inside a section<office:annotation><text:p>a reviewer comment</text:p></office:annotation>.</text:p></text:section>',
].join('')

describe('odt', () => {
  it('reads headings by outline level, paragraphs, lists, tables and notes, with the title from meta.xml', async () => {
    const d = await parseOdt(makeZip(odfParts('text', body, { title: 'The guide', styles: numbered })), 'g.odt')
    expect(d.title).toBe('The guide')
    expect(d.sections).toEqual([
      { headings: [], level: 0, blocks: [{ kind: 'paragraph', text: 'Field guide' }] },
      {
        headings: ['Setup'],
        level: 1,
        blocks: [
          { kind: 'paragraph', text: 'Install it now please.' },
          { kind: 'paragraph', text: 'Or later.' },
        ],
      },
      {
        headings: ['Setup', 'Lists'],
        level: 2,
        blocks: [
          { kind: 'list', text: '- apples\n  - green\n- pears' },
          { kind: 'list', text: '1. first\n  - detail\n2. second' },
        ],
      },
      {
        headings: ['Table'],
        level: 1,
        blocks: [
          { kind: 'table', text: '| Key | Value |\n| --- | --- |\n| a\\|b | one two |' },
          { kind: 'paragraph', text: 'Inside a section.' },
        ],
      },
    ])
    const html = documentHtml(d)
    expect(html).toContain('<h1>Setup</h1>\n<p>Install it now please.</p>')
    expect(html).toContain('<h2>Lists</h2>')
    expect(html).toContain('<tr><td>a|b</td><td>one two</td></tr>')
  })

  it('reads numbered headings that come wrapped in a list as headings', async () => {
    const wrapped =
      '<text:list text:style-name="Outline"><text:list-item><text:h text:outline-level="1">1 Scope</text:h><text:list><text:list-item><text:h text:outline-level="2">1.1 Terms</text:h></text:list-item></text:list></text:list-item></text:list><text:p>Defined here.</text:p>'
    const d = await parseOdt(makeZip(odfParts('text', wrapped)), 'w.odt')
    expect(d.sections).toEqual([
      { headings: ['1 Scope', '1.1 Terms'], level: 2, blocks: [{ kind: 'paragraph', text: 'Defined here.' }] },
    ])
  })

  it('falls back to the first level-1 heading for the title', async () => {
    const d = await parseOdt(
      makeZip(odfParts('text', '<text:h text:outline-level="1">Only heading</text:h><text:p>x</text:p>')),
      'h.odt',
    )
    expect(d.title).toBe('Only heading')
  })

  it('refuses password-protected, mislabelled and broken files with their reasons', async () => {
    const manifest =
      '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/></manifest:file-entry></manifest:manifest>'
    expect((await parseError(parseOdt(makeZip(odfParts('text', '', { manifest })), 'p.odt'))).message).toMatch(
      /^ODT is password-protected/,
    )
    expect((await parseError(parseOdt(makeZip(odfParts('spreadsheet', '')), 's.odt'))).message).toBe(
      'file is not a valid ODT (it is an OpenDocument spreadsheet (ODS))',
    )
    expect((await parseError(parseOdt(makePptx([{ shapes: [{ title: 'x' }] }]), 'p.odt'))).message).toBe(
      'file is not a valid ODT (it is a PowerPoint presentation (PPTX))',
    )
    const epub = makeZip([
      { name: 'mimetype', data: 'application/epub+zip', store: true },
      { name: 'META-INF/container.xml', data: '<container/>' },
    ])
    expect((await parseError(parseOdt(epub, 'e.odt'))).message).toBe('file is not a valid ODT (it is an EPUB book)')
    expect((await parseError(parseOdt(oleFile(['WordDocument']), 'o.odt'))).message).toBe(
      'file is not a valid ODT (it is an old binary Office file)',
    )
    // Compressed 1:166, below the zip-bomb ratio: only the tree limit refuses it.
    const huge = odfParts('text', '').map((p) =>
      p.name === 'content.xml' ? { ...p, data: new Uint8Array(400 * 1024), store: true, declaredSize: 65 * 1024 * 1024 } : p,
    )
    expect((await parseError(parseOdt(makeZip(huge), 'h.odt'))).message).toBe(
      'ODT part content.xml is too large to read (65 MB unpacked; the limit is 64 MB)',
    )
    const noContent = odfParts('text', '').filter((p) => p.name !== 'content.xml')
    expect((await parseError(parseOdt(makeZip(noContent), 'n.odt'))).message).toBe('file is not a valid ODT (no content.xml)')
  })
})
