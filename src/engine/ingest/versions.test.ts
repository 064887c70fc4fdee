import { describe, expect, it } from 'vitest'
import { compareVersions, detectKind, detectVersion, latestVersion } from './versions'

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
