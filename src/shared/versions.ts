/**
 * How versions of a collection are named and ordered (docs/contracts.md, "Versions of a collection"),
 * shared by the engine (scope "latest") and the renderer (version pickers): plain functions, no
 * Node or DOM imports.
 */

const DATE = /^\d{4}-\d{2}-\d{2}$/
/** A dated pre-release: Azure's REST API versions (`2023-01-01-preview`), `2024-06-01-beta`. */
const DATED_PRERELEASE = /^\d{4}-\d{2}-\d{2}-(?:preview|beta|alpha|rc|privatepreview)\d*$/i
const SEMVER = /^v?\d+(\.\d+){1,3}$/i
/** A release line: 10.x (Laravel's docs), 3.0.x (the Pallets projects'), v3.x. */
const RELEASE_LINE = /^v?\d+(?:\.\d+){0,2}\.x$/i
const PRERELEASE_WORDS = new Set(['draft', 'next', 'latest', 'unreleased', 'canary', 'nightly', 'preview'])
/**
 * Names documentation tools give a development build (Read the Docs' `latest` is shown as `dev`,
 * Antora's `master`/`trunk`, mike's `main`): pre-releases, but too common as ordinary folder names
 * ("dev/setup.md") to make a path segment a version by themselves.
 */
const DEVELOPMENT_NAMES = new Set(['dev', 'devel', 'develop', 'development', 'main', 'master', 'trunk'])
/**
 * Names a tool gives the newest release when it does not number it (PostgreSQL's `current`,
 * Read the Docs' `stable` when its build does not say which release it is, the current docs of
 * starlight-versions and vitepress-versioning-plugin): released, and newer than any numbered one.
 */
const NEWEST_RELEASE_NAMES = new Set(['current', 'stable'])
/** A numbered pre-release: 2.0.0-beta.21, 4.4-preview, 1.0rc1, 3.2.0.dev0. */
const NUMBERED_PRERELEASE = /^v?\d+(?:\.\d+)*(?:[-.+]?)(?:alpha|beta|rc|pre|preview|dev|next|canary|nightly|snapshot|prerelease)/i
/**
 * A numbered pre-release that is a version folder by itself (`2.0.0-beta.21/`, `v3.0.0-rc.1/`,
 * `1.0rc1/`, `4.4-preview/`): at least major.minor, then the pre-release word and its number.
 */
const PRERELEASE_SEGMENT = /^v?\d+(?:\.\d+){1,3}[-.+]?(?:alpha|beta|rc|pre|preview|dev|snapshot|prerelease)(?:[-.]?\d+)?$/i

export function isVersionSegment(segment: string): boolean {
  return (
    DATE.test(segment) ||
    SEMVER.test(segment) ||
    RELEASE_LINE.test(segment) ||
    PRERELEASE_WORDS.has(segment.toLowerCase()) ||
    DATED_PRERELEASE.test(segment) ||
    PRERELEASE_SEGMENT.test(segment)
  )
}

/** A term that names a release in a question's words: a date or a dotted number ("2025-03-26", "v3.1"). */
const RELEASE_TERM = /^(?:\d{4}-\d{2}-\d{2}|v?\d+(?:\.\d+)+)$/

/**
 * Whether a question's term names a release. Such a term says when, not what: a sentence that only
 * mentions the release ("deprecated since 2025-03-26") is not about the question, and an answer need
 * not hold it as it must hold an identifier.
 */
export function namesRelease(term: string): boolean {
  return RELEASE_TERM.test(term)
}

/** A numbered release that is a version folder by itself: 1.2, v1.2.3, 10.x, 3.0.x (not a date, not a word). */
export function isNumberedVersion(segment: string): boolean {
  return SEMVER.test(segment) || RELEASE_LINE.test(segment)
}

export function isPrerelease(version: string): boolean {
  const v = version.toLowerCase()
  return PRERELEASE_WORDS.has(v) || DEVELOPMENT_NAMES.has(v) || NUMBERED_PRERELEASE.test(v) || DATED_PRERELEASE.test(v)
}

/** Numeric parts of a version ("v1.2.x" is 1.2, "2.0.0-beta.21" is 2.0.0), or none for a name. */
function versionKey(v: string): number[] {
  const clean = v.replace(/^v/i, '')
  if (DATE.test(clean) || DATED_PRERELEASE.test(clean)) return clean.slice(0, 10).split('-').map(Number)
  const m = /^\d+(?:\.\d+)*/.exec(clean)
  return m ? m[0].split('.').map(Number) : []
}

/**
 * Orders versions oldest first by their numbers (v1 < v2 < v10, 9.x < 10.x, 3 < 3.11 < 3.12),
 * then the newest release's names (current, stable), then pre-releases.
 */
export function compareVersions(a: string, b: string): number {
  const pa = isPrerelease(a)
  const pb = isPrerelease(b)
  if (pa !== pb) return pa ? 1 : -1
  const na = NEWEST_RELEASE_NAMES.has(a.toLowerCase())
  const nb = NEWEST_RELEASE_NAMES.has(b.toLowerCase())
  if (na !== nb) return na ? 1 : -1
  const ka = versionKey(a)
  const kb = versionKey(b)
  // Among pre-releases a word (next, draft, dev) is the unreleased head: after numbered betas.
  if (pa && pb && (ka.length === 0) !== (kb.length === 0)) return ka.length === 0 ? 1 : -1
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
