import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'

/**
 * Versioned documentation trees through the real engine (PGlite, keyword search, no models): the
 * versions a layout names are the versions a collection has, a search scoped to one of them gets
 * only that version and the unversioned pages, and a change of layout re-tags files that did not
 * change themselves.
 */
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups) await c()
})

async function folder(): Promise<string> {
  const t = await tempDir('docent-layouts-')
  cleanups.push(t.cleanup)
  return t.dir
}

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await writeFile(path.join(root, rel), text)
  }
}

async function openEngine(): Promise<Engine> {
  const data = await folder()
  const engine = await Engine.open({ dataDir: data, modelsDir: path.join(data, 'no-models') })
  cleanups.unshift(() => engine.close())
  return engine
}

const pairing = (seconds: number, extra = '') =>
  `# Pairing\n\nHold the pairing button for ${seconds} seconds until the light blinks.${extra}\n\n## Reset\n\nA reset clears every paired phone.\n`

describe('a Docusaurus site', () => {
  it('imports with its versions, and a scoped question gets that version and the unversioned pages only', async () => {
    const site = await folder()
    await write(site, {
      'docusaurus.config.js': 'module.exports = {}\n',
      'versions.json': '["3.1", "3.0"]\n',
      'versioned_docs/version-3.1/guides/pairing.md': pairing(5, ' Pairing by QR code works too.'),
      'versioned_docs/version-3.0/guides/pairing.md': pairing(10),
      'docs/guides/pairing.md': pairing(5, ' Pairing by QR code or by voice.'),
      'src/pages/support.md': '# Support\n\nIf pairing fails, write to the support desk with the serial number.\n',
    })
    const engine = await openEngine()
    const report = await engine.importFolder(site, { collection: 'widget' })
    expect(report.failed).toEqual([])
    expect(report.imported).toBe(4)

    const [info] = await engine.catalog.list()
    // Under their own names: "3.1", not "version-3.1"; the current docs are "next".
    expect(info!.versions).toEqual(['3.0', '3.1', 'next'])

    const r = await engine.search('how long do I hold the pairing button', { scope: { version: '3.0' }, mode: 'keyword', k: 10 })
    expect(r.results.length).toBeGreaterThan(1)
    expect(new Set(r.results.map((h) => h.version))).toEqual(new Set(['3.0', null]))
    expect(r.results.map((h) => h.path)).toContain('src/pages/support.md')
    expect(r.results[0]).toMatchObject({ path: 'versioned_docs/version-3.0/guides/pairing.md', version: '3.0' })
    expect(r.results[0]!.text).toContain('10 seconds')

    // "latest" is the highest release, never the unreleased next docs.
    const latest = await engine.search('pairing by QR code', { scope: { version: 'latest' }, mode: 'keyword', k: 10 })
    expect(latest.scope.versions).toEqual({ widget: ['3.1'] })
    expect(latest.results[0]).toMatchObject({ path: 'versioned_docs/version-3.1/guides/pairing.md', version: '3.1' })

    // A version named in the question scopes it the same way.
    const named = await engine.search('pairing button in 3.0', { mode: 'keyword', k: 10 })
    expect(named.scope.versions).toEqual({ widget: ['3.0'] })
    expect(named.results.every((h) => h.version === '3.0' || h.version === null)).toBe(true)
  })

  it('re-tags unchanged files when the layout changes, and then leaves them alone', async () => {
    const site = await folder()
    await write(site, { 'docs/guides/pairing.md': pairing(5), 'README.md': '# Widget docs\n\nSee docs/.\n' })
    const engine = await openEngine()
    const first = await engine.importFolder(site, { collection: 'widget' })
    expect(first.imported).toBe(2)
    expect((await engine.catalog.list())[0]!.versions).toEqual([])

    // The site starts versioning: docs/ becomes "next" without docs/guides/pairing.md changing.
    await write(site, { 'versions.json': '["1.0"]', 'versioned_docs/version-1.0/guides/pairing.md': pairing(8) })
    const second = await engine.importFolder(site, { collection: 'widget' })
    expect(second.failed).toEqual([])
    // The new 1.0 page, and the unchanged docs/ page again (re-tagged); README.md stays as it was.
    expect(second.imported).toBe(2)
    expect(second.unchanged).toBe(1)
    expect((await engine.catalog.list())[0]!.versions).toEqual(['1.0', 'next'])
    const next = await engine.search('pairing button', { scope: { version: 'next' }, mode: 'keyword', k: 10 })
    const hit = next.results.find((h) => h.path === 'docs/guides/pairing.md')
    expect(hit?.version).toBe('next')
    expect(next.results.some((h) => h.version === '1.0')).toBe(false)

    const third = await engine.importFolder(site, { collection: 'widget' })
    expect(third.imported).toBe(0)
    expect(third.unchanged).toBe(3)

    // And back: without the markers, docs/ is unversioned again.
    await rm(path.join(site, 'versions.json'))
    await rm(path.join(site, 'versioned_docs'), { recursive: true })
    const fourth = await engine.importFolder(site, { collection: 'widget' })
    expect(fourth.imported).toBe(1)
    expect(fourth.pruned).toBe(1)
    expect((await engine.catalog.list())[0]!.versions).toEqual([])
  })
})

describe('a mike site', () => {
  it('skips alias folders (a link or a copy) as copies of their version, with the reason, and fails nothing', async () => {
    const site = await folder()
    const page = (v: string) =>
      `<html><head><title>Widget ${v}</title></head><body><h1>Install</h1><p>Run widget-install for ${v}.</p></body></html>`
    await write(site, {
      'versions.json': JSON.stringify([
        { version: '1.1', title: '1.1', aliases: ['latest', 'stable'] },
        { version: '1.0', title: '1.0', aliases: [] },
      ]),
      'index.html': '<html><head><meta http-equiv="refresh" content="0; url=latest/"></head><body>Redirecting</body></html>',
      '1.1/install/index.html': page('1.1'),
      '1.0/install/index.html': page('1.0'),
      'stable/install/index.html': page('1.1'),
    })
    await symlink('1.1', path.join(site, 'latest'))
    const engine = await openEngine()
    const report = await engine.importFolder(site, { collection: 'widget' })
    expect(report.failed).toEqual([])
    expect(report.imported).toBe(2)
    expect(report.skipped_files).toEqual(
      expect.arrayContaining([
        { path: 'index.html', reason: 'the page mike writes to redirect to the default version' },
        { path: 'latest', reason: 'a copy of version 1.1 ("latest" is its alias in versions.json)' },
        { path: 'stable/install/index.html', reason: 'a copy of version 1.1 ("stable" is its alias in versions.json)' },
      ]),
    )
    expect((await engine.catalog.list())[0]!.versions).toEqual(['1.0', '1.1'])
    const r = await engine.search('widget-install', { scope: { version: 'all' }, mode: 'keyword', k: 10 })
    expect(r.results.map((h) => h.path).sort()).toEqual(['1.0/install/index.html', '1.1/install/index.html'])
  })
})

describe('an Antora content source', () => {
  it('imports its AsciiDoc pages with the version of their antora.yml', async () => {
    const site = await folder()
    await write(site, {
      'widget-2.4/antora.yml': "name: widget\ntitle: Widget\nversion: '2.4'\nnav:\n- modules/ROOT/nav.adoc\n",
      'widget-2.4/modules/ROOT/pages/pairing.adoc': '= Pairing\n\nHold the pairing button for six seconds.\n',
      'widget-2.5/antora.yml': "name: widget\ntitle: Widget\nversion: '2.5'\n",
      'widget-2.5/modules/ROOT/pages/pairing.adoc': '= Pairing\n\nHold the pairing button for two seconds.\n',
    })
    const engine = await openEngine()
    const report = await engine.importFolder(site, { collection: 'widget' })
    expect(report.failed).toEqual([])
    expect((await engine.catalog.list())[0]!.versions).toEqual(['2.4', '2.5'])
    const r = await engine.search('pairing button', { scope: { version: '2.4' }, mode: 'keyword', k: 5 })
    expect(r.results.map((h) => [h.path, h.version])).toEqual([['widget-2.4/modules/ROOT/pages/pairing.adoc', '2.4']])
  })
})
