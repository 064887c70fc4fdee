import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { ParsedDocument } from '../types'
import { parseMarkdown, parseMarkdownString } from './markdown'

const md = (text: string, path = 'doc.md') => parseMarkdownString(text, path)
const mdx = (text: string) => parseMarkdownString(text, 'doc.mdx')
const allText = (d: ParsedDocument) => d.sections.flatMap((s) => s.blocks.map((b) => b.text)).join('\n')
const section = (d: ParsedDocument, last: string) => d.sections.find((s) => s.headings[s.headings.length - 1] === last)

const TRANSPORTS = '/work/shared/corpora/mcp-docs/specification/2025-03-26/basic/transports.mdx'

describe('markdown: structure', () => {
  it('starts a section at every heading with the full breadcrumb', () => {
    const d = md('# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n### On Linux\n\nApt.\n\n## Use\n\nGo.\n')
    expect(d.title).toBe('Guide')
    expect(d.sections.map((s) => [s.headings, s.level])).toEqual([
      [['Guide'], 1],
      [['Guide', 'Install'], 2],
      [['Guide', 'Install', 'On Linux'], 3],
      [['Guide', 'Use'], 2],
    ])
    expect(section(d, 'On Linux')!.blocks).toEqual([{ kind: 'paragraph', text: 'Apt.' }])
  })

  it('puts text before the first heading in an intro section with an empty breadcrumb', () => {
    const d = md('Before.\n\n## Later\n\nAfter.\n')
    expect(d.sections[0]).toEqual({ headings: [], level: 0, blocks: [{ kind: 'paragraph', text: 'Before.' }] })
    expect(d.title).toBeNull()
  })

  it('reads setext headings', () => {
    const d = md('Title\n=====\n\ntext\n\nSub\n---\n\nmore\n')
    expect(d.sections.map((s) => s.headings)).toEqual([['Title'], ['Title', 'Sub']])
  })

  it('does not treat # inside fenced code as a heading, and keeps code whole', () => {
    const d = md('# Real\n\n```bash\n# not a heading\necho hi\n\n# still code\n```\n\n~~~\n## nor this\n~~~\n')
    expect(d.sections.map((s) => s.headings)).toEqual([['Real']])
    expect(d.sections[0]!.blocks).toEqual([
      { kind: 'code', text: '# not a heading\necho hi\n\n# still code' },
      { kind: 'code', text: '## nor this' },
    ])
  })

  it('keeps indented code (Markdown) and tables as Markdown rows', () => {
    const d = md(
      'Para:\n\n    const x = 1\n    # comment\n\n| Name | Type |\n|:-----|-----:|\n| `id` | **string** |\n| a \\| b | [link](http://x) |\n',
    )
    expect(d.sections[0]!.blocks).toEqual([
      { kind: 'paragraph', text: 'Para:' },
      { kind: 'code', text: 'const x = 1\n# comment' },
      { kind: 'table', text: '| Name | Type |\n| --- | --- |\n| id | string |\n| a \\| b | link |' },
    ])
  })

  it('renders nested lists as indented "- item" lines, and splits a fenced block out of a list', () => {
    const d = md(
      '- one\n  continued\n- two\n  - two.a\n  - two.b\n\n1. first\n2. second\n\n   ```sh\n   npm i\n   ```\n3. third\n',
    )
    const blocks = d.sections[0]!.blocks
    expect(blocks[0]).toEqual({ kind: 'list', text: '- one continued\n- two\n  - two.a\n  - two.b\n1. first\n2. second' })
    expect(blocks[1]).toEqual({ kind: 'code', text: 'npm i' })
    expect(blocks[2]).toEqual({ kind: 'list', text: '3. third' })
  })

  it('reads block quotes and GitHub alerts', () => {
    const d = md('> Quoted *text*\n> more\n\n> [!WARNING]\n> Be careful.\n')
    expect(d.sections[0]!.blocks).toEqual([
      { kind: 'quote', text: 'Quoted text more' },
      { kind: 'quote', text: 'Warning: Be careful.' },
    ])
  })

  it('reduces inline markup to readable text', () => {
    const d = md(
      'A **bold** and *em* and _under_ word, `code_with_underscores`, snake_case_name, [a link](https://x.y "t"), ' +
        '![alt text](img.png), <https://auto.link>, ~~gone~~, 2 * 3 * 4, \\*literal\\*, &amp; &copy; &#x41;, ref [text][r].\n\n[r]: https://example.com\n',
    )
    expect(allText(d)).toBe(
      'A bold and em and under word, code_with_underscores, snake_case_name, a link, alt text, https://auto.link, gone, 2 * 3 * 4, *literal*, & © A, ref text.',
    )
  })

  it('decodes every HTML named entity and numbers ordered lists as rendered', () => {
    const d = md('&eacute; &frac12; &hellip; &notanentity;\n\n1. one\n1. two\n1. three\n')
    expect(d.sections[0]!.blocks).toEqual([
      { kind: 'paragraph', text: 'é ½ … &notanentity;' },
      { kind: 'list', text: '1. one\n2. two\n3. three' },
    ])
  })

  it('reduces headings with inline code and links to text, and drops {#id} anchors', () => {
    const d = md('## The `initialize` [request](#init) {#init}\n\nx\n')
    expect(d.sections[0]!.headings).toEqual(['The initialize request'])
  })

  it('drops HTML comments and raw <script>/<style>, reads raw HTML blocks', () => {
    const d = md(
      '<!-- hidden\n\nstill hidden -->\n\nVisible.\n\n<script>\nalert("no")\n</script>\n\n<div class="x"><p>Inside <b>html</b></p></div>\n\n<style>p{}</style>\n',
    )
    expect(allText(d)).toBe('Visible.\nInside html')
  })

  it('starts sections at raw HTML headings too', () => {
    const d = md('# Doc\n\n<h2 id="x">Raw <code>heading</code></h2>\n\nUnder it.\n')
    expect(d.sections.map((s) => [s.headings, s.blocks.map((b) => b.text)])).toEqual([[['Doc', 'Raw heading'], ['Under it.']]])
  })

  it('reads front matter: title (not added to the breadcrumb) and version as written', () => {
    const d = md('---\ntitle: Transports\nversion: 1.10\ntags: [a, b]\n---\n\n## stdio\n\nText.\n')
    expect(d.title).toBe('Transports')
    expect(d.meta).toMatchObject({ title: 'Transports', version: '1.10', tags: ['a', 'b'] })
    expect(d.sections[0]!.headings).toEqual(['stdio'])
  })

  // Issue 26: `...` ends a YAML document, and the CommonMark spec's own source closes its front
  // matter with it; read as "not closed", everything up to the next `---` (a thematic break 880
  // lines down in the spec) was swallowed as front matter.
  it('ends front matter at a `...` line, in .md and .mdx alike', () => {
    const src =
      "---\ntitle: CommonMark Spec\nversion: '0.31.2'\n...\n\n# Introduction\n\nKestrels hover.\n\n---\n\nAfter the break.\n"
    for (const d of [md(src), mdx(src)]) {
      expect(d.title).toBe('CommonMark Spec')
      expect(d.meta).toMatchObject({ title: 'CommonMark Spec', version: '0.31.2' })
      expect(d.sections.map((s) => s.headings)).toEqual([['Introduction']])
      expect(allText(d)).toBe('Kestrels hover.\nAfter the break.')
    }
  })

  it('still ends front matter at the first closing line when `...` comes later', () => {
    const d = md('---\ntitle: Dashes\n---\n\nBody text.\n\n...\n\nMore.\n')
    expect(d.title).toBe('Dashes')
    expect(allText(d)).toBe('Body text.\n...\nMore.')
  })

  it('ignores invalid front matter YAML but still reads the body', () => {
    const d = md('---\ntitle: [unclosed\n---\n\nBody.\n')
    expect(d.meta).toEqual({})
    expect(allText(d)).toBe('Body.')
  })

  // Hugo and Zola write TOML front matter between `+++` fences. Before, the block was indexed as a
  // paragraph of text ("+++ title = ...") and neither the title nor the version was read.
  it('reads TOML front matter (Hugo, Zola): title, version as written, dates as written; the block is not text', () => {
    for (const d of [
      md('+++\ntitle = "Configuration"\nversion = 1.10\ndate = 2024-11-05\nweight = 3\n[params]\nmenu = "main"\n+++\n\n## Keys\n\nText.\n'),
      mdx('+++\ntitle = "Configuration"\nversion = 1.10\ndate = 2024-11-05\nweight = 3\n[params]\nmenu = "main"\n+++\n\n## Keys\n\nText.\n'),
    ]) {
      expect(d.title).toBe('Configuration')
      expect(d.meta).toEqual({ title: 'Configuration', version: '1.10', date: '2024-11-05', weight: 3, params: { menu: 'main' } })
      expect(d.sections.map((s) => s.headings)).toEqual([['Keys']])
      expect(allText(d)).toBe('Text.')
    }
    const bad = md('+++\ntitle = "unclosed\n+++\n\nBody.\n')
    expect(bad.meta).toEqual({})
    expect(allText(bad)).toBe('Body.')
  })

  it('handles CRLF line endings', () => {
    const d = md('# A\r\n\r\nOne\r\ntwo\r\n\r\n## B\r\n\r\n```\r\ncode\r\n```\r\n')
    expect(d.sections.map((s) => s.headings)).toEqual([['A'], ['A', 'B']])
    expect(d.sections[1]!.blocks[0]).toEqual({ kind: 'code', text: 'code' })
  })

  it('decodes bytes via the ParserFn', async () => {
    const d = await parseMarkdown(new TextEncoder().encode('# Hi\n\nThere\n'), 'a.md')
    expect(d.sections[0]!.headings).toEqual(['Hi'])
  })
})

describe('mdx', () => {
  it('drops import/export lines and {/* comments */}', () => {
    const d = mdx(
      "import { Foo } from '../foo'\nexport const meta = {\n  a: 1,\n}\n\n{/* a comment */}\n\nText {/* inline */} here.\n",
    )
    expect(allText(d)).toBe('Text here.')
  })

  it('keeps "import" in prose and code', () => {
    const d = mdx('import the module before use.\n\n```js\nimport x from "y"\n```\n')
    expect(d.sections[0]!.blocks).toEqual([
      { kind: 'paragraph', text: 'import the module before use.' },
      { kind: 'code', text: 'import x from "y"' },
    ])
  })

  it('reduces components to their text, keeping useful attribute text', () => {
    const d = mdx(
      [
        '<Note>Servers MUST validate input.</Note>',
        '',
        '<Warning>',
        '',
        'Never log secrets.',
        '',
        '</Warning>',
        '',
        '<Card title="Quickstart" href="/quickstart">Build a server</Card>',
        '',
        '<CardGroup cols={2}>',
        '  <Card',
        '    title="Clients"',
        '    icon="computer"',
        '    href="/clients"',
        '  >',
        '    Build a client',
        '  </Card>',
        '  <Card title="Only a title" href="/t" />',
        '</CardGroup>',
        '',
        '<Icon icon="star" size={24} />',
        '<Frame>',
        '  <img src="/a.png" alt="Architecture diagram" />',
        '</Frame>',
        '',
        'MCP is a <Tooltip tip="no state kept between requests">stateless protocol</Tooltip>. <Badge color="blue">Tier&nbsp;1</Badge>',
        '',
        '<AccordionGroup>',
        '<Accordion title="Why MCP?">',
        'Because tools.',
        '</Accordion>',
        '</AccordionGroup>',
        '',
        '<ParamField path="id" type="string" required>The resource id.</ParamField>',
      ].join('\n'),
    )
    expect(d.sections[0]!.blocks.map((b) => b.text)).toEqual([
      'Note: Servers MUST validate input.',
      'Warning: Never log secrets.',
      'Quickstart: Build a server',
      'Clients: Build a client',
      'Only a title',
      'Architecture diagram',
      'MCP is a stateless protocol (no state kept between requests). Tier 1',
      'Why MCP? Because tools.',
      'id (string, required): The resource id.',
    ])
    expect(allText(d)).not.toMatch(/[<>{}]/)
  })

  it('gives a tab its own section with the tab title in the breadcrumb (also of headings inside it)', () => {
    const d = mdx(
      [
        '## Setup',
        '',
        'Pick a language.',
        '',
        '<Tabs>',
        "<Tab title='Python'>",
        '',
        'Python intro.',
        '',
        '### Install',
        '',
        '```bash',
        'uv add mcp',
        '```',
        '',
        '</Tab>',
        '<Tab title="TypeScript">',
        '',
        '### Install',
        '',
        'npm install.',
        '',
        '</Tab>',
        '</Tabs>',
        '',
        'After the tabs.',
        '',
        '<CodeGroup>',
        '```bash macOS',
        'brew install x',
        '```',
        '</CodeGroup>',
      ].join('\n'),
    )
    expect(d.sections.map((s) => s.headings)).toEqual([
      ['Setup'],
      ['Setup', 'Python'],
      ['Setup', 'Python', 'Install'],
      ['Setup', 'TypeScript', 'Install'],
      ['Setup'],
    ])
    expect(d.sections[0]!.blocks.map((b) => b.text)).toEqual(['Pick a language.'])
    expect(d.sections[1]!.blocks.map((b) => b.text)).toEqual(['Python intro.'])
    expect(d.sections[2]!.blocks).toEqual([{ kind: 'code', text: 'uv add mcp' }])
    expect(d.sections[3]!.blocks).toEqual([{ kind: 'paragraph', text: 'npm install.' }])
    expect(d.sections[4]!.blocks).toEqual([
      { kind: 'paragraph', text: 'After the tabs.' },
      { kind: 'code', text: 'brew install x' },
    ])
  })

  it('reads a component inside a list item as that component, and keeps tags inside code as written', () => {
    const d = mdx('1. First\n   <Warning>\n     Mind the `<Tab>` tag.\n   </Warning>\n2. Second\n')
    expect(d.sections[0]!.blocks).toEqual([
      { kind: 'list', text: '1. First' },
      { kind: 'paragraph', text: 'Warning: Mind the <Tab> tag.' },
      { kind: 'list', text: '2. Second' },
    ])
  })

  it('reads steps with titles and indented content', () => {
    const d = mdx(
      '<Steps>\n  <Step title="Install">\n    Run the installer.\n\n    - fast\n    - easy\n  </Step>\n  <Step title="Run" />\n</Steps>\n',
    )
    expect(d.sections[0]!.blocks).toEqual([
      { kind: 'paragraph', text: 'Install: Run the installer.' },
      { kind: 'list', text: '- fast\n- easy' },
      { kind: 'paragraph', text: 'Run' },
    ])
  })

  it('parses the MCP transports page into sections with breadcrumbs', async () => {
    if (!existsSync(TRANSPORTS)) return // corpus not present on this machine
    const d = await parseMarkdown(readFileSync(TRANSPORTS), 'specification/2025-03-26/basic/transports.mdx')
    expect(d.title).toBe('Transports')
    const crumbs = d.sections.map((s) => s.headings)
    expect(crumbs).toContainEqual(['Streamable HTTP'])
    expect(crumbs).toContainEqual(['Streamable HTTP', 'Sending Messages to the Server'])
    expect(crumbs).toContainEqual(['Streamable HTTP', 'Security Warning'])
    expect(crumbs).toContainEqual(['stdio'])
    const http = section(d, 'Streamable HTTP')!
    expect(http.level).toBe(2)
    expect(http.blocks[0]!.text).toMatch(/^Info: This replaces the HTTP\+SSE transport from protocol version 2024-11-05/)
    const stdio = section(d, 'stdio')!
    const mermaid = stdio.blocks.find((b) => b.kind === 'code')!
    expect(mermaid.text.startsWith('sequenceDiagram\n')).toBe(true)
    expect(allText(d)).not.toMatch(/<\/?(Info|Note|Warning)\b|\*\*MUST\*\*/)
  })
})

describe('markdown: robustness', () => {
  it('parses pathological inline input in linear-ish time', () => {
    const evil = [
      '**a '.repeat(50_000),
      '[x'.repeat(50_000),
      '`'.repeat(10_000) + 'x',
      '<a '.repeat(30_000),
      '{'.repeat(30_000),
      '_a'.repeat(50_000),
    ].join('\n\n')
    const t0 = Date.now()
    const d = mdx(evil)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(d.sections.length).toBe(1)
  })

  it('survives deeply nested lists, quotes and components', () => {
    const lists = Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i * 2)}- item ${i}`).join('\n')
    const quotes = '>'.repeat(5000) + ' deep'
    const comps = '<Note>\n'.repeat(3000) + 'inside\n' + '</Note>\n'.repeat(3000)
    const d = mdx([lists, quotes, comps].join('\n\n'))
    expect(allText(d)).toContain('item 2999')
    expect(allText(d)).toContain('deep')
    expect(allText(d)).toContain('inside')
  })

  it('treats an unclosed fence as code to the end (CommonMark) without losing text', () => {
    const d = md('# A\n\n```\nnever closed\n# inside\n')
    expect(d.sections).toEqual([{ headings: ['A'], level: 1, blocks: [{ kind: 'code', text: 'never closed\n# inside' }] }])
  })
})
