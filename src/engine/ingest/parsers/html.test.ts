import { describe, expect, it } from 'vitest'
import type { ParsedDocument } from '../types'
import { parseHtml, parseHtmlString } from './html'

const allText = (d: ParsedDocument) => d.sections.flatMap((s) => s.blocks.map((b) => b.text)).join('\n')

const PAGE = `<!DOCTYPE html>
<html lang="en"><head>
  <meta charset="utf-8"><title>Docent &amp; You</title>
  <meta name="description" content="A guide">
  <style>body { color: red } .secret::after { content: "STYLE-TEXT" }</style>
  <script>document.write("SCRIPT-TEXT")</script>
</head><body>
<nav><a href="/">Home</a> <a href="/docs">NAV-TEXT</a></nav>
<header><h1>User Guide <a class="headerlink" href="#g">¶</a></h1></header>
<main>
  <p>Intro with <b>bold</b>,&nbsp;an entity &eacute; and a <a href="x">link</a>.</p>
  <noscript>NOSCRIPT-TEXT</noscript>
  <template><p>TEMPLATE-TEXT</p></template>
  <h2>Install</h2>
  <p>Run:</p>
  <pre><code>npm install docent
# not a heading
  indented &lt;tag&gt;</code></pre>
  <h3>Options</h3>
  <table>
    <thead><tr><th>Name</th><th>Default</th></tr></thead>
    <tbody><tr><td>port</td><td>8080</td></tr><tr><td>a|b</td><td><p>multi</p><p>para</p></td></tr></tbody>
  </table>
  <h2>Use</h2>
  <ul><li>one</li><li>two<ul><li>two.a</li></ul></li></ul>
  <ol start="3"><li>three</li><li>four</li></ol>
  <blockquote><p>Quoted.</p></blockquote>
  <div hidden>HIDDEN-TEXT</div><div aria-hidden="true">ARIA-HIDDEN</div>
  <button>BUTTON-TEXT</button>
  <svg><text>SVG-TEXT</text></svg>
</main>
<footer>FOOTER-TEXT</footer>
<script type="module">console.log("SCRIPT-TWO")</script>
</body></html>`

describe('html', () => {
  const d = parseHtmlString(PAGE)

  it('takes the title from <title> and meta description', () => {
    expect(d.title).toBe('Docent & You')
    expect(d.meta).toMatchObject({ title: 'Docent & You', description: 'A guide' })
  })

  // A built Docusaurus site keeps its newest release at docs/ with no version in the path; each
  // page says its version in a meta tag. Before, those pages came out unversioned.
  it('reads the version a built Docusaurus page names; its current docs are "next"; an explicit version meta wins', () => {
    const page = (metas: string) => `<html><head>${metas}<title>Intro</title></head><body><h1>Intro</h1><p>Text.</p></body></html>`
    expect(parseHtmlString(page('<meta name="docusaurus_version" content="3.1"><meta name="docsearch:version" content="3.1">')).meta.version).toBe('3.1')
    expect(parseHtmlString(page('<meta name="docusaurus_version" content="current">')).meta.version).toBe('next')
    expect(parseHtmlString(page('<meta name="docsearch:version" content="2.x,latest">')).meta.version).toBe('2.x')
    expect(parseHtmlString(page('<meta name="docsearch:version" content="3.1"><meta name="version" content="9.9">')).meta.version).toBe('9.9')
    expect(parseHtmlString(page('<meta name="docsearch:language" content="en">')).meta.version).toBeUndefined()
  })

  it('starts sections at h1-h6 with breadcrumbs (permalink markers dropped)', () => {
    expect(d.sections.map((s) => [s.headings, s.level])).toEqual([
      [['User Guide'], 1],
      [['User Guide', 'Install'], 2],
      [['User Guide', 'Install', 'Options'], 3],
      [['User Guide', 'Use'], 2],
    ])
  })

  it('reads paragraphs, code, tables, lists and quotes', () => {
    expect(d.sections[0]!.blocks).toEqual([{ kind: 'paragraph', text: 'Intro with bold, an entity é and a link.' }])
    expect(d.sections[1]!.blocks).toEqual([
      { kind: 'paragraph', text: 'Run:' },
      { kind: 'code', text: 'npm install docent\n# not a heading\n  indented <tag>' },
    ])
    expect(d.sections[2]!.blocks).toEqual([
      { kind: 'table', text: '| Name | Default |\n| --- | --- |\n| port | 8080 |\n| a\\|b | multi para |' },
    ])
    expect(d.sections[3]!.blocks).toEqual([
      { kind: 'list', text: '- one\n- two\n  - two.a' },
      { kind: 'list', text: '3. three\n4. four' },
      { kind: 'quote', text: 'Quoted.' },
    ])
  })

  it('never lets script, style, noscript, template, nav, footer or hidden content through', () => {
    const text = allText(d) + d.sections.flatMap((s) => s.headings).join(' ')
    for (const s of [
      'SCRIPT',
      'STYLE',
      'NOSCRIPT',
      'TEMPLATE',
      'NAV-TEXT',
      'FOOTER',
      'HIDDEN',
      'BUTTON',
      'SVG',
      'document.write',
      'console.log',
    ]) {
      expect(text).not.toContain(s)
    }
  })

  it('keeps scripts out even when malformed', () => {
    const evil = parseHtmlString(
      '<p>ok</p><script>var s = "</scr" + "ipt><p>EVIL</p>";</script><p>fine</p><script>unterminated EVIL2',
    )
    expect(allText(evil)).toBe('ok\nfine')
  })

  it('does not overflow the stack on 10,000 nested divs', () => {
    const deep = '<div>'.repeat(10_000) + '<h2>Deep</h2><p>bottom</p>' + '</div>'.repeat(10_000)
    const r = parseHtmlString(deep)
    expect(r.sections).toEqual([{ headings: ['Deep'], level: 2, blocks: [{ kind: 'paragraph', text: 'bottom' }] }])
    const unclosed = parseHtmlString('<span><b><i>'.repeat(3_000) + 'text')
    expect(allText(unclosed)).toBe('text')
  })

  it('refuses absurd numbers of unclosed elements quickly instead of hanging', () => {
    const t0 = Date.now()
    expect(() => parseHtmlString('<b>'.repeat(200_000) + '</i>'.repeat(200_000))).toThrow(/nests elements too deeply/)
    expect(Date.now() - t0).toBeLessThan(2000)
    // Implicitly closed elements do not pile up: 200,000 unclosed <p> are fine.
    expect(parseHtmlString('<p>x'.repeat(200_000)).sections[0]!.blocks).toHaveLength(200_000)
  })

  it('decodes a page in a declared legacy charset', async () => {
    const bytes = Buffer.from(
      '<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e \x93quoted\x94</p></body></html>',
      'latin1',
    )
    const r = await parseHtml(new Uint8Array(bytes), 'a.html')
    expect(r.title).toBe('Café')
    expect(allText(r)).toBe('crème brûlée “quoted”')
  })

  it('splits code and tables out of list items, and flattens lists and tables nested in cells', () => {
    const r = parseHtmlString(
      '<ol><li>Install:<pre>npm i</pre></li><li>Check<table><tr><td>a</td><td>b</td></tr></table></li><li>Done</li></ol>' +
        '<table><tr><th>Key</th><th>Values</th></tr><tr><td>k</td><td><ul><li>x</li><li>y</li></ul><table><tr><td>in</td><td>ner</td></tr></table></td></tr></table>',
    )
    expect(r.sections[0]!.blocks).toEqual([
      { kind: 'list', text: '1. Install:' },
      { kind: 'code', text: 'npm i' },
      { kind: 'list', text: '2. Check' },
      { kind: 'table', text: '| a | b |\n| --- | --- |' },
      { kind: 'list', text: '3. Done' },
      { kind: 'table', text: '| Key | Values |\n| --- | --- |\n| k | x y in ner |' },
    ])
  })

  it('uses the first h1 as the title when there is no <title>', () => {
    expect(parseHtmlString('<h1>Only heading</h1><p>x</p>').title).toBe('Only heading')
  })
})
