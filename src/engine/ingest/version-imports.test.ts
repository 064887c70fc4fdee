import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'

/**
 * Each version layout of version-folders.test.ts and version-sites.test.ts imported through the
 * real engine (PGlite, keyword search, no models): the collection has the versions the layout
 * names, a question scoped to one version gets passages from that version and the unversioned
 * pages only, and `latest` is the highest release.
 */
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups) await c()
})

async function folder(): Promise<string> {
  const t = await tempDir('docent-version-import-')
  cleanups.push(t.cleanup)
  return t.dir
}

/**
 * A page that says how long to hold the pairing button in this version, in the file's own format;
 * with `version`, the page names its version itself as its tool writes it: a built Docusaurus
 * page's meta tag, Hugo's TOML front matter.
 */
function pairing(file: string, seconds: number, version?: string): string {
  const text = `Hold the pairing button for ${seconds} seconds until the light blinks.`
  if (file.endsWith('.html')) {
    const meta = version ? `<meta name="docusaurus_version" content="${version}"><meta name="docsearch:version" content="${version}">` : ''
    return `<html><head>${meta}<title>Pairing</title></head><body><h1>Pairing</h1><p>${text}</p></body></html>`
  }
  if (version) return `+++\ntitle = "Pairing"\nversion = ${version}\nweight = 2\n+++\n\n${text}\n`
  if (file.endsWith('.mdx')) return `---\ntitle: Pairing\n---\n\n${text}\n`
  return `# Pairing\n\n${text}\n`
}

const SUPPORT = '# Support\n\nIf pairing fails, write to the support desk with the serial number of the button.\n'
const sphinx = (v: string) => `const DOCUMENTATION_OPTIONS = {\n    VERSION: '${v}',\n};\n`

interface Case {
  layout: string
  /** Pages by path and the seconds each says; other files verbatim. */
  pages: Record<string, number>
  files?: Record<string, string>
  /** The version a page names itself (see pairing()). */
  named?: Record<string, string>
  links?: Record<string, string>
  versions: string[]
  scoped: string
  /** The page of the scoped version the question must find first. */
  top: string
  latest: string
  skipped?: string[]
}

const cases: Case[] = [
  {
    layout: 'v1/, v2/, v10/ side by side (API docs, a VitePress site without a plugin)',
    pages: { 'docs/v1/pairing.md': 5, 'docs/v2/pairing.md': 8, 'docs/v10/pairing.md': 12 },
    files: { 'docs/.vitepress/config.mts': 'export default {}\n' },
    versions: ['v1', 'v2', 'v10'],
    scoped: 'v2',
    top: 'docs/v2/pairing.md',
    latest: 'v10',
  },
  {
    layout: 'release lines (9.x/, 10.x/, 11.x/)',
    pages: { '9.x/pairing.md': 5, '10.x/pairing.md': 8, '11.x/pairing.md': 12 },
    versions: ['9.x', '10.x', '11.x'],
    scoped: '10.x',
    top: '10.x/pairing.md',
    latest: '11.x',
  },
  {
    layout: "a Sphinx build without a language folder (Python's 3.12/, 3.11/, 3/, dev/)",
    pages: { '3.12/pairing.html': 5, '3.11/pairing.html': 8, '3/pairing.html': 5, 'dev/pairing.html': 3 },
    files: {
      '3.12/_static/documentation_options.js': sphinx('3.12.1'),
      '3.11/_static/documentation_options.js': sphinx('3.11.7'),
      '3/_static/documentation_options.js': sphinx('3.12.1'),
    },
    versions: ['3.11', '3.12', 'dev'],
    scoped: '3.11',
    top: '3.11/pairing.html',
    latest: '3.12',
    skipped: ['3/pairing.html'],
  },
  {
    layout: 'numbered releases with a current/ link (PostgreSQL)',
    pages: { '16/pairing.html': 5, '15/pairing.html': 8, '9.6/pairing.html': 12 },
    links: { current: '16' },
    versions: ['9.6', '15', '16'],
    scoped: '15',
    top: '15/pairing.html',
    latest: '16',
    // The walk meets 16/ first, so the link is a folder already imported: skipped whole, as a copy.
    skipped: ['current'],
  },
  {
    layout: 'typedoc-plugin-versions builds with their stable/ and minor links',
    pages: { 'docs/v0.1.1/pairing.html': 8, 'docs/v0.2.0/pairing.html': 5 },
    files: { 'docs/.typedoc-plugin-versions': '{"versions":["v0.2.0","v0.1.1"],"stable":"v0.2.0"}' },
    links: { 'docs/v0.1': 'v0.1.1', 'docs/v0.2': 'v0.2.0', 'docs/stable': 'v0.2' },
    versions: ['v0.1.1', 'v0.2.0'],
    scoped: 'v0.1.1',
    top: 'docs/v0.1.1/pairing.html',
    latest: 'v0.2.0',
    skipped: ['docs/stable/pairing.html', 'docs/v0.1/pairing.html', 'docs/v0.2'],
  },
  {
    layout: 'downloaded archives named after their release',
    pages: { 'python-3.11.7-docs-html/pairing.html': 8, 'python-3.12.1-docs-html/pairing.html': 5 },
    versions: ['3.11.7', '3.12.1'],
    scoped: '3.11.7',
    top: 'python-3.11.7-docs-html/pairing.html',
    latest: '3.12.1',
  },
  {
    layout: 'Mintlify docs.json versions',
    pages: { 'v1/pairing.mdx': 8, 'v2/pairing.mdx': 5 },
    files: {
      'docs.json': JSON.stringify({
        name: 'Widget',
        navigation: {
          versions: [
            { version: '2.0.0', groups: [{ group: 'Guides', pages: ['v2/pairing', 'support'] }] },
            { version: '1.0.0', groups: [{ group: 'Guides', pages: ['v1/pairing', 'support'] }] },
          ],
        },
      }),
    },
    versions: ['1.0.0', '2.0.0'],
    scoped: '1.0.0',
    top: 'v1/pairing.mdx',
    latest: '2.0.0',
  },
  {
    layout: 'Redocly @-version folders',
    pages: { 'guides/@v1/pairing.md': 8, 'guides/@v2/pairing.md': 5 },
    files: { 'guides/versions.yaml': 'default: v2\nversions:\n  - version: v1\n  - version: v2\n' },
    versions: ['v1', 'v2'],
    scoped: 'v1',
    top: 'guides/@v1/pairing.md',
    latest: 'v2',
  },
  {
    layout: 'vitepress-versioning-plugin',
    pages: { 'docs/versions/1.0.0/pairing.md': 8, 'docs/pairing.md': 5 },
    files: {
      'docs/.vitepress/config.mts':
        "import { defineVersionedConfig } from 'vitepress-versioning-plugin'\nexport default defineVersionedConfig({ versioning: { latestVersion: '2.0.0' } }, __dirname)\n",
    },
    versions: ['1.0.0', '2.0.0'],
    scoped: '1.0.0',
    top: 'docs/versions/1.0.0/pairing.md',
    latest: '2.0.0',
  },
  {
    layout: 'starlight-versions',
    pages: { 'src/content/docs/1.0/guides/pairing.md': 8, 'src/content/docs/guides/pairing.md': 5 },
    files: { 'src/content/versions/1.0.json': '{"sidebar": []}' },
    versions: ['1.0', 'current'],
    scoped: '1.0',
    top: 'src/content/docs/1.0/guides/pairing.md',
    latest: 'current',
  },
  {
    layout: "Boost's releases written with underscores (boost_1_83_0/, boost_1_84_0/)",
    pages: { 'boost_1_83_0/doc/html/pairing.html': 5, 'boost_1_84_0/doc/html/pairing.html': 8 },
    versions: ['1.83.0', '1.84.0'],
    scoped: '1.83.0',
    top: 'boost_1_83_0/doc/html/pairing.html',
    latest: '1.84.0',
  },
  {
    layout: "Azure's dated API versions, stable and preview (stable/2024-02-01/, preview/2023-05-01-preview/)",
    pages: {
      'Microsoft.Widget/stable/2023-01-01/pairing.md': 5,
      'Microsoft.Widget/stable/2024-02-01/pairing.md': 12,
      'Microsoft.Widget/preview/2023-05-01-preview/pairing.md': 8,
    },
    versions: ['2023-01-01', '2024-02-01', '2023-05-01-preview'],
    scoped: '2023-05-01-preview',
    top: 'Microsoft.Widget/preview/2023-05-01-preview/pairing.md',
    latest: '2024-02-01',
  },
  {
    layout: "Hugo's TOML front matter (version = 1.10)",
    pages: { 'content/en/docs/pairing.md': 12, 'content/en/archive/pairing.md': 5 },
    named: { 'content/en/docs/pairing.md': '1.10', 'content/en/archive/pairing.md': '1.9' },
    versions: ['1.9', '1.10'],
    scoped: '1.9',
    top: 'content/en/archive/pairing.md',
    latest: '1.10',
  },
  {
    layout: 'a built Docusaurus site (its newest release at docs/, named by each page)',
    pages: {
      'build/docs/pairing/index.html': 8,
      'build/docs/3.0/pairing/index.html': 5,
      'build/docs/next/pairing/index.html': 12,
    },
    named: {
      'build/docs/pairing/index.html': '3.1',
      'build/docs/3.0/pairing/index.html': '3.0',
      'build/docs/next/pairing/index.html': 'current',
    },
    versions: ['3.0', '3.1', 'next'],
    scoped: '3.1',
    top: 'build/docs/pairing/index.html',
    latest: '3.1',
  },
]

async function importTree(
  c: Pick<Case, 'pages' | 'files' | 'links' | 'named'>,
): Promise<{ engine: Engine; report: Awaited<ReturnType<Engine['importFolder']>> }> {
  const site = await folder()
  const files: Record<string, string> = { 'support.md': SUPPORT, ...c.files }
  for (const [p, s] of Object.entries(c.pages)) files[p] = pairing(p, s, c.named?.[p])
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(site, rel)), { recursive: true })
    await writeFile(path.join(site, rel), text)
  }
  for (const [rel, target] of Object.entries(c.links ?? {})) await symlink(target, path.join(site, rel))
  const data = await folder()
  const engine = await Engine.open({ dataDir: data, modelsDir: path.join(data, 'no-models') })
  cleanups.unshift(() => engine.close())
  return { engine, report: await engine.importFolder(site, { collection: 'widget' }) }
}

describe('versions read from documentation layouts, through the import', () => {
  it.each(cases)('$layout', async (c) => {
    const { engine, report } = await importTree(c)
    expect(report.failed).toEqual([])
    for (const s of c.skipped ?? []) expect(report.skipped_files.map((f) => f.path)).toContain(s)
    expect((await engine.catalog.list())[0]!.versions).toEqual(c.versions)

    const r = await engine.search('how long do I hold the pairing button', {
      scope: { version: c.scoped },
      mode: 'keyword',
      k: 10,
    })
    expect(new Set(r.results.map((h) => h.version))).toEqual(new Set([c.scoped, null]))
    expect(r.results.map((h) => h.path)).toContain('support.md')
    expect(r.results[0]).toMatchObject({ path: c.top, version: c.scoped })
    expect(r.results[0]!.text).toContain(`${c.pages[c.top]} seconds`)

    const latest = await engine.search('pairing button', { scope: { version: 'latest' }, mode: 'keyword', k: 10 })
    expect(latest.scope.versions).toEqual({ widget: [c.latest] })
  })

  it('leaves a tree of near misses unversioned: a lone api/v1/, chapters, years, lessons, numbered sections', async () => {
    const { engine, report } = await importTree({
      pages: {
        'api/v1/pairing.md': 5,
        'book/1/pairing.md': 6,
        'book/2/reset.md': 7,
        'blog/2023/pairing.md': 8,
        'blog/2024/pairing.md': 9,
        'lessons/01/pairing.md': 10,
        'lessons/02/pairing.md': 11,
        'course/chapter-1.1/pairing.md': 12,
        'course/chapter-1.2/pairing.md': 13,
        'setup/python-3.12/pairing.md': 14,
      },
      files: { 'docs.json': '{"navigation": {"groups": [{"group": "A", "pages": ["api/v1/pairing"]}]}}' },
    })
    expect(report.failed).toEqual([])
    expect(report.imported).toBe(11)
    expect((await engine.catalog.list())[0]!.versions).toEqual([])
  })
})
