import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-support/paths'
import { isLayoutMarker, layoutKey, VersionLayouts } from './version-layouts'
import { detectKind, detectVersion } from './versions'

/**
 * Each tool's layout as a real tree on disk, in the shape the tool writes it (file names, marker
 * files and their contents as the tools produce them).
 */
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups) await c()
})

async function tree(files: Record<string, string>): Promise<string> {
  const t = await tempDir('docent-layout-')
  cleanups.push(t.cleanup)
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(t.dir, rel)), { recursive: true })
    await writeFile(path.join(t.dir, rel), text)
  }
  return realpath(t.dir)
}

/** Version, kind and skip reason of each path, as the import decides them (front matter empty). */
async function verdicts(root: string, paths: string[]): Promise<Record<string, [string | null, string | null, string?]>> {
  const layouts = new VersionLayouts(root)
  const out: Record<string, [string | null, string | null, string?]> = {}
  for (const p of paths) {
    const v = await layouts.verdict(p)
    const row: [string | null, string | null, string?] = [detectVersion(p, {}, v), detectKind(p, undefined, v.base)]
    if (v.skip) row.push(v.skip)
    out[p] = row
  }
  return out
}

describe('Docusaurus', () => {
  const site = {
    'website/docusaurus.config.js': 'module.exports = { title: "Widget" }\n',
    'website/versions.json': '[\n  "30.4",\n  "30.3",\n  "2.0.0-beta.21"\n]\n',
    'website/versioned_sidebars/version-30.4-sidebars.json': '{}',
    'website/versioned_docs/version-30.4/intro.md': '# Intro\n',
    'website/versioned_docs/version-30.4/guides/pairing.md': '# Pairing\n',
    'website/versioned_docs/version-30.3/guides/pairing.md': '# Pairing\n',
    'website/versioned_docs/version-2.0.0-beta.21/intro.md': '# Intro\n',
    'website/docs/guides/pairing.md': '# Pairing\n',
    'website/blog/2024-05-01-release.md': '# Released\n',
    'website/src/pages/index.md': '# Home\n',
    'website/i18n/fr/docusaurus-plugin-content-docs/current/intro.md': '# Intro\n',
    'website/i18n/fr/docusaurus-plugin-content-docs/version-30.3/intro.md': '# Intro\n',
    'website/community_versions.json': '["1.0"]',
    'website/community_versioned_docs/version-1.0/support.md': '# Support\n',
    'website/community/support.md': '# Support\n',
    'README.md': '# Repo\n',
  }

  it('reads versioned_docs/version-X as X and the current docs as next, under their own names', async () => {
    const root = await tree(site)
    expect(
      await verdicts(
        root,
        Object.keys(site).filter((p) => p.endsWith('.md')),
      ),
    ).toEqual({
      'website/versioned_docs/version-30.4/intro.md': ['30.4', null],
      // The source kind is read inside the version's folder, the same for every version.
      'website/versioned_docs/version-30.4/guides/pairing.md': ['30.4', 'Guides'],
      'website/versioned_docs/version-30.3/guides/pairing.md': ['30.3', 'Guides'],
      'website/versioned_docs/version-2.0.0-beta.21/intro.md': ['2.0.0-beta.21', null],
      'website/docs/guides/pairing.md': ['next', 'Guides'],
      // Pages outside the docs plugin stay unversioned.
      'website/blog/2024-05-01-release.md': [null, 'Website'],
      'website/src/pages/index.md': [null, 'Website'],
      'website/i18n/fr/docusaurus-plugin-content-docs/current/intro.md': ['next', null],
      'website/i18n/fr/docusaurus-plugin-content-docs/version-30.3/intro.md': ['30.3', null],
      'website/community_versioned_docs/version-1.0/support.md': ['1.0', null],
      'website/community/support.md': ['next', null],
      'README.md': [null, null],
    })
  })

  it('takes a site with versioned_docs but no versions.json, or a versions.json beside its config, as Docusaurus too', async () => {
    const root = await tree({ 'versioned_docs/version-1.2/a.md': '# A\n', 'docs/a.md': '# A\n' })
    expect(await verdicts(root, ['versioned_docs/version-1.2/a.md', 'docs/a.md'])).toEqual({
      'versioned_docs/version-1.2/a.md': ['1.2', null],
      'docs/a.md': ['next', null],
    })
    const young = await tree({ 'docusaurus.config.ts': 'export default {}\n', 'versions.json': '[]', 'docs/a.md': '# A\n' })
    expect(await verdicts(young, ['docs/a.md'])).toEqual({ 'docs/a.md': ['next', null] })
  })
})

describe('mike (MkDocs)', () => {
  const versions = JSON.stringify([
    { version: 'dev', title: 'dev', aliases: [] },
    { version: '1.1', title: '1.1 (current)', aliases: ['latest', 'stable'] },
    { version: '1.0', title: '1.0', aliases: [] },
  ])

  it('reads each version folder listed in versions.json and skips alias copies and the redirect page', async () => {
    const root = await tree({
      'versions.json': versions,
      'index.html': '<meta http-equiv="refresh" content="0; url=latest/">',
      'dev/index.html': '<h1>Home</h1>',
      '1.1/index.html': '<h1>Home</h1>',
      '1.1/user-guide/install/index.html': '<h1>Install</h1>',
      '1.0/index.html': '<h1>Home</h1>',
      'latest/index.html': '<h1>Home</h1>',
      'stable/user-guide/install/index.html': '<h1>Install</h1>',
    })
    expect(
      await verdicts(root, [
        'index.html',
        'dev/index.html',
        '1.1/index.html',
        '1.1/user-guide/install/index.html',
        '1.0/index.html',
        'latest/index.html',
        'stable/user-guide/install/index.html',
      ]),
    ).toEqual({
      'index.html': [null, null, 'the page mike writes to redirect to the default version'],
      'dev/index.html': ['dev', null],
      '1.1/index.html': ['1.1', null],
      '1.1/user-guide/install/index.html': ['1.1', 'User Guide'],
      '1.0/index.html': ['1.0', null],
      'latest/index.html': ['1.1', null, 'a copy of version 1.1 ("latest" is its alias in versions.json)'],
      'stable/user-guide/install/index.html': [
        '1.1',
        'User Guide',
        'a copy of version 1.1 ("stable" is its alias in versions.json)',
      ],
    })
  })

  it('leaves plain X.Y folders of an MkDocs build without mike to the path rule', async () => {
    const root = await tree({ '2.1/index.html': '<h1>A</h1>', 'about/index.html': '<h1>B</h1>' })
    expect(await verdicts(root, ['2.1/index.html', 'about/index.html'])).toEqual({
      '2.1/index.html': ['2.1', null],
      'about/index.html': [null, 'About'],
    })
  })
})

describe('Read the Docs (Sphinx)', () => {
  const options = (v: string) => `const DOCUMENTATION_OPTIONS = {\n    VERSION: '${v}',\n    LANGUAGE: 'en',\n};\n`

  it('reads en/X.Y, shows latest as dev, and skips stable when it is a copy of a version beside it', async () => {
    const root = await tree({
      'docs.example.org/en/latest/index.html': '<h1>A</h1>',
      'docs.example.org/en/stable/index.html': '<h1>A</h1>',
      'docs.example.org/en/stable/_static/documentation_options.js': options('3.1.2'),
      'docs.example.org/en/3.1/index.html': '<h1>A</h1>',
      'docs.example.org/en/3.1/_sources/index.rst.txt': 'A\n=\n',
      'docs.example.org/en/3.0/api/widgets.html': '<h1>A</h1>',
    })
    expect(
      await verdicts(root, [
        'docs.example.org/en/latest/index.html',
        'docs.example.org/en/stable/index.html',
        'docs.example.org/en/3.1/index.html',
        'docs.example.org/en/3.1/_sources/index.rst.txt',
        'docs.example.org/en/3.0/api/widgets.html',
      ]),
    ).toEqual({
      'docs.example.org/en/latest/index.html': ['dev', null],
      'docs.example.org/en/stable/index.html': ['3.1', null, `a copy of version 3.1 (Read the Docs' "stable")`],
      'docs.example.org/en/3.1/index.html': ['3.1', null],
      'docs.example.org/en/3.1/_sources/index.rst.txt': [null, 'Docs.Example.Org', "Sphinx's copy of the page sources"],
      'docs.example.org/en/3.0/api/widgets.html': ['3.0', 'Api'],
    })
  })

  it('names stable after the release it was built from when that release has no folder, else "stable"', async () => {
    const built = await tree({
      'en/stable/index.html': '<h1>A</h1>',
      'en/stable/_static/documentation_options.js': options('4.0.1'),
      'en/3.9/index.html': '<h1>A</h1>',
    })
    expect(await verdicts(built, ['en/stable/index.html'])).toEqual({ 'en/stable/index.html': ['4.0.1', null] })
    const unknown = await tree({ 'de/stable/index.html': '<h1>A</h1>', 'de/latest/index.html': '<h1>A</h1>' })
    expect(await verdicts(unknown, ['de/stable/index.html', 'de/latest/index.html'])).toEqual({
      'de/stable/index.html': ['stable', null],
      'de/latest/index.html': ['dev', null],
    })
  })
})

describe('Antora', () => {
  it('gives everything under an antora.yml its version; ~ is unversioned; a pre-release is named as one', async () => {
    const root = await tree({
      'widget-3.1/antora.yml': "name: widget\ntitle: Widget\nversion: '3.1'\nnav:\n- modules/ROOT/nav.adoc\n",
      'widget-3.1/modules/ROOT/pages/index.adoc': '= Widget\n',
      'widget-3.1/modules/admin/pages/backup/restore.adoc': '= Restore\n',
      'widget-3.10/antora.yml': 'name: widget\nversion: 3.10\n',
      'widget-3.10/modules/ROOT/pages/index.adoc': '= Widget\n',
      'widget-next/antora.yml': "name: widget\nversion: '4.0'\nprerelease: true\n",
      'widget-next/modules/ROOT/pages/index.adoc': '= Widget\n',
      'widget-beta/antora.yml': "name: widget\nversion: '4.1'\nprerelease: -beta.1\n",
      'widget-beta/modules/ROOT/pages/index.adoc': '= Widget\n',
      'shared/antora.yml': 'name: shared\nversion: ~\n',
      'shared/modules/ROOT/pages/glossary.adoc': '= Glossary\n',
      'notes/antora.yml': 'just: some yaml\n',
      'notes/2.0/a.adoc': '= A\n',
    })
    expect(
      await verdicts(root, [
        'widget-3.1/modules/ROOT/pages/index.adoc',
        'widget-3.1/modules/admin/pages/backup/restore.adoc',
        'widget-3.10/modules/ROOT/pages/index.adoc',
        'widget-next/modules/ROOT/pages/index.adoc',
        'widget-beta/modules/ROOT/pages/index.adoc',
        'shared/modules/ROOT/pages/glossary.adoc',
        'notes/2.0/a.adoc',
      ]),
    ).toEqual({
      'widget-3.1/modules/ROOT/pages/index.adoc': ['3.1', null],
      'widget-3.1/modules/admin/pages/backup/restore.adoc': ['3.1', 'Backup'],
      // YAML reads 3.10 as the number 3.1: the digits as written are kept.
      'widget-3.10/modules/ROOT/pages/index.adoc': ['3.10', null],
      'widget-next/modules/ROOT/pages/index.adoc': ['4.0-prerelease', null],
      'widget-beta/modules/ROOT/pages/index.adoc': ['4.1-beta.1', null],
      'shared/modules/ROOT/pages/glossary.adoc': [null, null],
      // Not a component descriptor (no name): the path rule applies.
      'notes/2.0/a.adoc': ['2.0', 'Notes'],
    })
  })
})

describe('trees that match no layout', () => {
  it('stay unversioned, and front matter still wins over any layout', async () => {
    const root = await tree({
      'docs/guide.md': '# Guide\n',
      'versions.json': '{"not": "a list"}',
      'en/intro.md': '# Intro\n',
      'versioned_docs/version-1.0/a.md': '# A\n',
    })
    const layouts = new VersionLayouts(root)
    expect(detectVersion('en/intro.md', {}, await layouts.verdict('en/intro.md'))).toBeNull()
    const a = await layouts.verdict('versioned_docs/version-1.0/a.md')
    expect(detectVersion('versioned_docs/version-1.0/a.md', { version: '9.9' }, a)).toBe('9.9')
    // A list in a versions.json of some other tool, beside docs/: not Docusaurus without its folders or config.
    const plain = await tree({ 'docs/guide.md': '# Guide\n', 'notes/version-2/x.md': '# X\n', 'versions.json': '["1.0", "2.0"]' })
    expect(await verdicts(plain, ['docs/guide.md', 'notes/version-2/x.md'])).toEqual({
      'docs/guide.md': [null, 'Docs'],
      'notes/version-2/x.md': [null, 'Notes'],
    })
  })

  it('reads no marker through a link that leads outside the folder', async () => {
    const outside = await tree({ 'versions.json': '["6.6"]' })
    const root = await tree({ 'docs/a.md': '# A\n', 'versioned_docs/version-6.6/a.md': '# A\n' })
    await symlink(path.join(outside, 'versions.json'), path.join(root, 'versions.json'))
    // The layout still stands on the folders (versioned_docs/), but the outside file is never read:
    // a marker that cannot be read marks nothing beyond what the tree itself shows.
    const v = await new VersionLayouts(root).verdict('versioned_docs/version-6.6/a.md')
    expect(v.version).toBe('6.6')
    const onlyLink = await tree({ 'guide/a.md': '# A\n' })
    await symlink(path.join(outside, 'versions.json'), path.join(onlyLink, 'versions.json'))
    expect((await new VersionLayouts(onlyLink).verdict('guide/a.md')).tool).toBeNull()
  })

  it('names marker files and keys verdicts', () => {
    expect(['versions.json', 'web/community_versions.json', 'docs/antora.yml'].every(isLayoutMarker)).toBe(true)
    // Mintlify, Redocly and starlight-versions name their versions in files of their own.
    expect(['docs.json', 'site/mint.json', 'guides/versions.yaml', 'src/content/versions/1.0.json'].every(isLayoutMarker)).toBe(
      true,
    )
    expect(isLayoutMarker('docs/versions.md')).toBe(false)
    expect(isLayoutMarker('src/content/versions/notes.md')).toBe(false)
    expect(layoutKey({ tool: null, version: null, base: '' })).toBe('')
    expect(layoutKey({ tool: 'docusaurus', version: 'next', base: 'docs/' })).toBe('docusaurus:next:docs/')
  })
})
