/**
 * How versions of a collection are named and ordered (docs/contracts.md, "Versions of a collection"),
 * shared by the engine (scope "latest") and the renderer (version pickers): plain functions, no
 * Node or DOM imports.
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

/** Newest released version first, then pre-releases (draft, next, …): the order pickers show. */
export function compareVersionsDesc(a: string, b: string): number {
  const pa = isPrerelease(a)
  const pb = isPrerelease(b)
  if (pa !== pb) return pa ? 1 : -1
  return -compareVersions(a, b)
}

/** The highest released version, or null when there is none (only pre-releases or nothing). */
export function latestVersion(versions: Iterable<string>): string | null {
  const released = [...versions].filter((v) => !isPrerelease(v)).sort(compareVersions)
  return released.at(-1) ?? null
}
