/**
 * Versions and source-kind labels (DESIGN.md "Versions of a collection").
 *
 * A document's version comes from front matter (`version:`) or from a path segment that looks like a
 * version: a date (2025-03-26), v1.2, 1.2.0, or a pre-release word (draft, next, latest, ...).
 * `latest` as a scope means the highest *released* version, never a pre-release.
 */

const DATE = /^\d{4}-\d{2}-\d{2}$/
const SEMVER = /^v?\d+(\.\d+){1,3}$/i
const PRERELEASE_WORDS = new Set(['draft', 'next', 'latest', 'unreleased', 'canary', 'nightly', 'preview'])

export function isVersionSegment(segment: string): boolean {
  return DATE.test(segment) || SEMVER.test(segment) || PRERELEASE_WORDS.has(segment.toLowerCase())
}

export function isPrerelease(version: string): boolean {
  return PRERELEASE_WORDS.has(version.toLowerCase())
}

/** Version of a document from its front matter, else the first version-like folder segment of its path. */
export function detectVersion(relativePath: string, meta: Record<string, unknown>): string | null {
  const fm = meta['version']
  if (typeof fm === 'string' && fm.trim()) return fm.trim()
  if (typeof fm === 'number') return String(fm)
  const segments = relativePath.split('/').slice(0, -1)
  for (const seg of segments) if (isVersionSegment(seg)) return seg
  // A file named like a version (docs/2025-03-26.md) is a changelog entry, not a release: ignored.
  return null
}

/**
 * Source kind label from the first path segment inside the collection ("specification/..." ->
 * "Specification"), unless the collection maps segments to labels itself (settings.kinds).
 */
export function detectKind(relativePath: string, kinds?: Record<string, string>): string | null {
  const segments = relativePath.split('/')
  if (segments.length < 2) return null
  const first = segments[0]!
  if (kinds && Object.prototype.hasOwnProperty.call(kinds, first)) return kinds[first] ?? null
  if (isVersionSegment(first)) return null
  const words = first.replace(/[-_]+/g, ' ').trim()
  if (!words) return null
  return words.replace(/\b\w/g, (c) => c.toUpperCase())
}

function versionKey(v: string): number[] {
  const clean = v.replace(/^v/i, '')
  if (DATE.test(clean)) return clean.split('-').map(Number)
  if (/^\d+(\.\d+)*$/.test(clean)) return clean.split('.').map(Number)
  return []
}

/** Orders versions oldest first; released before pre-release words at the end. */
export function compareVersions(a: string, b: string): number {
  const pa = isPrerelease(a)
  const pb = isPrerelease(b)
  if (pa !== pb) return pa ? 1 : -1
  const ka = versionKey(a)
  const kb = versionKey(b)
  for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
    const d = (ka[i] ?? 0) - (kb[i] ?? 0)
    if (d !== 0) return d
  }
  return a.localeCompare(b)
}

/** The highest released version, or null when there is none (only pre-releases or nothing). */
export function latestVersion(versions: Iterable<string>): string | null {
  const released = [...versions].filter((v) => !isPrerelease(v)).sort(compareVersions)
  return released.at(-1) ?? null
}
