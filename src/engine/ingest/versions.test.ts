import { describe, expect, it } from 'vitest'
import { compareVersions, detectKind, detectVersion, isPrerelease, latestVersion } from './versions'

describe('detectVersion', () => {
  it('prefers front matter over the path', () => {
    expect(detectVersion('specification/2025-03-26/basic/index.mdx', { version: '9.9' })).toBe('9.9')
  })
  it('reads date, semver and pre-release folder segments', () => {
    expect(detectVersion('specification/2025-03-26/basic/transports.mdx', {})).toBe('2025-03-26')
    expect(detectVersion('guide/v1.2/intro.md', {})).toBe('v1.2')
    expect(detectVersion('api/1.2.0/x.md', {})).toBe('1.2.0')
    expect(detectVersion('specification/draft/x.mdx', {})).toBe('draft')
  })
  it('treats everything else as unversioned, including a file named like a date', () => {
    expect(detectVersion('docs/learn/architecture.mdx', {})).toBeNull()
    expect(detectVersion('changelog/2025-03-26.md', {})).toBeNull()
  })
})

describe('detectKind', () => {
  it('labels by first path segment unless configured', () => {
    expect(detectKind('specification/2025-03-26/x.mdx')).toBe('Specification')
    expect(detectKind('docs/learn/x.mdx', { docs: 'Guide' })).toBe('Guide')
    expect(detectKind('user-guides/x.md')).toBe('User Guides')
    expect(detectKind('README.md')).toBeNull()
  })
  it('does not call a folder named after a file format a source kind', () => {
    for (const f of ['pdf', 'PDF', 'md', 'html', 'docx', 'txt']) expect(detectKind(`${f}/manual.${f}`)).toBeNull()
    // Configured mappings still win.
    expect(detectKind('pdf/manual.pdf', { pdf: 'Manual' })).toBe('Manual')
  })
})

describe('latestVersion', () => {
  it('is the highest released version, never a pre-release', () => {
    expect(latestVersion(['2024-11-05', 'draft', '2026-07-28', '2025-03-26'])).toBe('2026-07-28')
    expect(latestVersion(['v1.10', 'v1.9', 'next'])).toBe('v1.10')
    expect(latestVersion(['draft'])).toBeNull()
  })
  it('orders pre-releases after releases', () => {
    expect(['draft', '1.0.0', '0.9'].sort(compareVersions)).toEqual(['0.9', '1.0.0', 'draft'])
  })
})

describe('versions as documentation tools name them', () => {
  it('never takes a development build or a numbered pre-release for the latest release', () => {
    expect(latestVersion(['30.4', '30.3', '2.0.0-beta.21', 'next'])).toBe('30.4')
    expect(latestVersion(['3.1', 'dev', 'main', '4.0-prerelease', '4.1-beta.1'])).toBe('3.1')
    expect(latestVersion(['4.4-preview', '4.3'])).toBe('4.3')
    for (const v of ['dev', 'master', 'trunk', '2.0.0-beta.21', '1.0rc1', '3.2.0.dev0']) expect(isPrerelease(v)).toBe(true)
    for (const v of ['3.1', '30.4', 'v1.2', '2025-03-26', 'stable', '3.29.x']) expect(isPrerelease(v)).toBe(false)
  })
  it('orders "x" releases and numbered pre-releases by their numbers', () => {
    expect(['3.10.x', '3.9.x', '3.29.5'].sort(compareVersions)).toEqual(['3.9.x', '3.10.x', '3.29.5'])
    expect(['next', '2.0.0-beta.21', '1.9'].sort(compareVersions)).toEqual(['1.9', '2.0.0-beta.21', 'next'])
  })
  it('does not make a folder named dev or main a version by itself', () => {
    expect(detectVersion('dev/setup.md', {})).toBeNull()
    expect(detectVersion('main/index.md', {})).toBeNull()
  })
})

describe('versions as documentation trees number them', () => {
  it('orders single numbers, release lines and a major beside its minors by their numbers', () => {
    expect(['v10', 'v2', 'v1'].sort(compareVersions)).toEqual(['v1', 'v2', 'v10'])
    expect(latestVersion(['v1', 'v2', 'v10'])).toBe('v10')
    expect(['11.x', '2.x', '10.x', '1.x'].sort(compareVersions)).toEqual(['1.x', '2.x', '10.x', '11.x'])
    expect(['v3.x', '1.2.x', '1.10.x'].sort(compareVersions)).toEqual(['1.2.x', '1.10.x', 'v3.x'])
    // Python's 3/ (the newest 3.x) sorts below its minors, so "latest" is the numbered release.
    expect(['3.12', '3', '3.11', '2.7'].sort(compareVersions)).toEqual(['2.7', '3', '3.11', '3.12'])
    expect(latestVersion(['3', '3.12', '3.11'])).toBe('3.12')
    expect(latestVersion(['16', '9.6', '15', 'devel'])).toBe('16')
  })
  it('takes current and stable for the newest release, and v2beta2 or devel for pre-releases', () => {
    expect(latestVersion(['1.0', '2.0', 'current'])).toBe('current')
    expect(['current', '2.0', 'next', '1.0'].sort(compareVersions)).toEqual(['1.0', '2.0', 'current', 'next'])
    expect(latestVersion(['v1', 'v2', 'v2beta2'])).toBe('v2')
    expect(isPrerelease('v2beta2')).toBe(true)
    expect(isPrerelease('devel')).toBe(true)
  })
  it('reads release lines as version folders by themselves', () => {
    expect(detectVersion('laravel/10.x/installation.md', {})).toBe('10.x')
    expect(detectVersion('flask/3.0.x/quickstart.html', {})).toBe('3.0.x')
    expect(detectVersion('mongoose/v3.x/guide.md', {})).toBe('v3.x')
    // A single number needs its siblings to be a version (version-layouts), not the path alone.
    expect(detectVersion('docs/v1/guide.md', {})).toBeNull()
    expect(detectVersion('book/2/setup.md', {})).toBeNull()
  })
})
