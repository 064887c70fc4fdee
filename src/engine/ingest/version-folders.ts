import { isNumberedVersion, isVersionSegment } from '../../shared/versions'
import { join, type LayoutReader } from './layout-types'

/**
 * Version folders that no tool's marker file announces, recognised by the folders beside them
 * (docs/contracts.md, "Versions of a collection"). A folder named by a number alone could be a
 * chapter, a lesson or an API's only version, so such a name is a version only where its siblings
 * make a choice of versions:
 *
 * - `v1/`, `v2/`, `v10/` (and `v2beta2/`): where at least two numbered version folders stand
 *   side by side (`v1/` with `v2/`, or with `1.2/`); a lone `api/v1/` is part of an address;
 * - `16/`, `3/`: beside a numbered release (`9.6/`, `3.12/`, `v2/`), or two or more of them beside
 *   `current/`, `stable/`, `latest/` or `devel/` (numbered chapters and years have neither);
 * - `@v1/` (Redocly): an `@` folder beside a `versions.yaml`, or named as a version (`@v1/`,
 *   `@v1.0/`); Redocly's own `@l10n/`, `@theme/` and npm scopes (`packages/@acme/`) are not;
 * - `release-1.2/`, `version-1.2/`: by themselves; `version-2/` beside `version-3/`;
 * - `python-3.12.1-docs-html/`, `flink-docs-release-1.18/`: where two or more sibling folders are
 *   named alike but for their release (not `chapter-1.1/` beside `chapter-1.2/`: section words);
 *   likewise Boost's underscored `boost_1_84_0/` or `1_84_0/`, shown as "1.84.0";
 * - beside numbered releases, `current/` and `stable/` are the newest release, `dev/`, `devel/`,
 *   `main/`, `master/` a development build, each under its own name.
 *
 * A folder beside versions that is a link to one of them (PostgreSQL's `current/`,
 * typedoc-plugin-versions' `stable/` and `v0.2/`), or an alias whose Sphinx build names a release
 * beside it (Python's `3/` holds 3.12.1), is a copy of that version and is not imported again.
 */

/** What one folder of a group of version folders is. */
export interface FolderVersion {
  version: string
  tool: 'folders' | 'redocly'
  /** Set when the folder is a copy of another version folder beside it: why. */
  copy?: string
}

const MAJOR = /^v\d+(?:(?:alpha|beta|rc)\d*)?$/i
/** 1 to 999 without a leading zero: not a year (2024/), not a numbered lesson (01/). */
const NUMBER = /^[1-9]\d{0,2}$/
const WORDED = /^(version|release|rel|ver)[-_]?(v?\d+(?:\.\d+)*(?:\.x)?)$/i
const NAMED = /^(.+?)[-_](v?\d+(?:\.\d+)+(?:\.x)?|v\d+)(?:[-_](.+))?$/i
/** Releases written with underscores, alone or after a name: Boost's `1_84_0/`, `boost_1_84_0/`. */
const UNDERSCORED = /^(?:(.*?[a-z])[-_])?(\d{1,3}(?:_\d+){1,3})$/i
/** Aliases of a release or a build beside numbered versions; `latest` alone is already a version word. */
const ALIASES = new Set(['current', 'stable', 'latest', 'dev', 'devel', 'develop', 'main', 'master', 'trunk', 'nightly'])
/** Aliases that, beside two numbered folders, make them releases (PostgreSQL's current/ and devel/). */
const NUMBER_EVIDENCE = new Set(['current', 'stable', 'latest', 'devel', 'dev'])
/** Words that number parts of a text, not releases of it. */
const SECTIONING = new Set(
  'chapter chap ch part section sec lesson lecture unit module week day step exercise ex lab appendix episode session sprint phase level figure fig table page tutorial example sample test case problem homework hw assignment quiz exam slide slides volume vol issue'.split(
    ' ',
  ),
)
const REDOCLY_RESERVED = new Set(['@l10n', '@theme', '@i18n', '@portal'])

/** The version folders of one folder, by name; folders the path rule reads by themselves are left to it. */
export async function readVersionGroup(dir: string, reader: LayoutReader): Promise<Map<string, FolderVersion>> {
  const entries = await reader.list(dir)
  const dirs = [...entries].filter(([n, e]) => e.type === 'dir' && !/^[._]/.test(n)).map(([n]) => n)
  const out = new Map<string, FolderVersion>()
  const set = (name: string, version: string, tool: FolderVersion['tool'] = 'folders') => {
    if (!out.has(name)) out.set(name, { version, tool })
  }

  const at = dirs.filter((n) => n.length > 1 && n.startsWith('@') && !REDOCLY_RESERVED.has(n.toLowerCase()))
  // Scoped package folders (`packages/@acme/`) are named with an @ too: only Redocly's
  // versions.yaml, or a name that is a version, makes them versions.
  const redocly = entries.get('versions.yaml')?.type === 'file'
  for (const n of at) if (redocly || isVersionSegment(n.slice(1)) || MAJOR.test(n.slice(1))) set(n, n.slice(1), 'redocly')

  const numbered = dirs.filter(isNumberedVersion)
  const majors = dirs.filter((n) => MAJOR.test(n))
  if (majors.length + numbered.length >= 2) for (const n of majors) set(n, n)
  const numbers = dirs.filter((n) => NUMBER.test(n))
  const beside =
    numbered.length + majors.length > 0 || (numbers.length >= 2 && dirs.some((n) => NUMBER_EVIDENCE.has(n.toLowerCase())))
  if (beside) for (const n of numbers) set(n, n)

  for (const [name, version] of wordedVersions(dirs)) set(name, version)
  for (const [name, version] of namedVersions(dirs)) set(name, version)
  for (const [name, version] of underscoredVersions(dirs)) set(name, version)

  const releases = [...new Set([...numbered, ...out.keys()])]
  if (releases.length > 0) await addAliases(dir, dirs, releases, out, reader)
  return out
}

/**
 * Whether a folder of this name can make, or be, a version by its siblings: a folder of such a
 * name appearing or going changes the versions of the folders beside it (sync/plan.ts widens a
 * watched change to their parent).
 */
export function groupsVersions(name: string): boolean {
  return (
    isNumberedVersion(name) ||
    MAJOR.test(name) ||
    NUMBER.test(name) ||
    name.startsWith('@') ||
    WORDED.test(name) ||
    NAMED.test(name) ||
    UNDERSCORED.test(name) ||
    ALIASES.has(name.toLowerCase())
  )
}

/** `release-1.2` by itself; `version-2` where another `version-N` stands beside it. */
function wordedVersions(dirs: string[]): Map<string, string> {
  const byWord = new Map<string, [string, string][]>()
  for (const n of dirs) {
    const m = WORDED.exec(n)
    if (m) byWord.set(m[1]!.toLowerCase(), [...(byWord.get(m[1]!.toLowerCase()) ?? []), [n, m[2]!]])
  }
  const out = new Map<string, string>()
  for (const group of byWord.values())
    for (const [name, version] of group) if (isNumberedVersion(version) || group.length >= 2) out.set(name, version)
  return out
}

/** Folders named alike but for a release: `python-3.11.7-docs-html` beside `python-3.12.1-docs-html`. */
function namedVersions(dirs: string[]): Map<string, string> {
  const groups = new Map<string, [string, string][]>()
  for (const n of dirs) {
    const m = NAMED.exec(n)
    if (!m || WORDED.test(n)) continue
    const lastWord = m[1]!.split(/[-_ ]/).pop()!.toLowerCase()
    if (SECTIONING.has(lastWord)) continue
    const key = `${m[1]!.toLowerCase()}\u0000${(m[3] ?? '').toLowerCase()}`
    groups.set(key, [...(groups.get(key) ?? []), [n, m[2]!]])
  }
  return differing(groups)
}

/** Of folders grouped by their name but for the release (`[folder, version]`), those whose group holds two or more releases. */
function differing(groups: Map<string, [string, string][]>): Map<string, string> {
  const out = new Map<string, string>()
  for (const group of groups.values())
    if (new Set(group.map(([, v]) => v)).size >= 2) for (const [name, version] of group) out.set(name, version)
  return out
}

/**
 * Folders named alike but for a release written with underscores (`boost_1_83_0` beside
 * `boost_1_84_0`, `1_83_0` beside `1_84_0`), shown with dots ("1.84.0"). The first number has at
 * most three digits, so `2024_01_15/` (a date) is not one; section words are not names of releases.
 */
function underscoredVersions(dirs: string[]): Map<string, string> {
  const groups = new Map<string, [string, string][]>()
  for (const n of dirs) {
    const m = UNDERSCORED.exec(n)
    if (!m) continue
    const prefix = (m[1] ?? '').toLowerCase()
    if (SECTIONING.has(prefix.split(/[-_ ]/).pop()!)) continue
    groups.set(prefix, [...(groups.get(prefix) ?? []), [n, m[2]!.replace(/_/g, '.')]])
  }
  return differing(groups)
}

/**
 * Beside version folders: a link to one of them is a copy; an alias (or a major beside its
 * minors, `3/` beside `3.12/`) whose Sphinx build names one of them is a copy; other aliases are
 * versions of their own name (`latest` stays with the path rule, which reads it the same way).
 */
async function addAliases(
  dir: string,
  dirs: string[],
  releases: string[],
  out: Map<string, FolderVersion>,
  reader: LayoutReader,
): Promise<void> {
  const entries = await reader.list(dir)
  const versionOf = (n: string) => out.get(n)?.version ?? n
  const originals = releases.filter((n) => !entries.get(n)?.link)
  const links = dirs.filter((n) => entries.get(n)?.link && (releases.includes(n) || ALIASES.has(n.toLowerCase())))
  if (links.length > 0) {
    const realOf = new Map<string, string | null>()
    for (const n of originals) realOf.set(n, await reader.real(join(dir, n)))
    for (const n of links) {
      const real = await reader.real(join(dir, n))
      const target = originals.find((o) => o !== n && real !== null && realOf.get(o) === real)
      if (target)
        out.set(n, {
          version: versionOf(target),
          tool: 'folders',
          copy: `a copy of version ${versionOf(target)} (a link to its folder)`,
        })
    }
  }
  const majorOfMinor = (n: string) => NUMBER.test(n) && releases.some((r) => r.replace(/^v/i, '').startsWith(`${n}.`))
  const alias = (n: string) => ALIASES.has(n.toLowerCase()) || majorOfMinor(n)
  // A build is a copy of a release folder, never of another alias (3.13.0a2 in dev/ is not 3/).
  const releaseFolders = originals.filter((o) => !alias(o) && !out.get(o)?.copy)
  for (const n of dirs) {
    if (out.get(n)?.copy || !alias(n)) continue
    const built = await sphinxRelease(reader, join(dir, n))
    const target = built ? builtFrom(built, releaseFolders) : undefined
    if (target) {
      const version = versionOf(target)
      out.set(n, { version, tool: 'folders', copy: `a copy of version ${version} (its Sphinx build is ${built})` })
    } else if (ALIASES.has(n.toLowerCase()) && n.toLowerCase() !== 'latest') out.set(n, { version: n, tool: 'folders' })
  }
}

/** The release a Sphinx build was made from (`_static/documentation_options.js`), if it is one. */
export async function sphinxRelease(reader: LayoutReader, folder: string): Promise<string | undefined> {
  const options = await reader.text(join(folder, '_static/documentation_options.js'))
  return options ? /\bVERSION\s*:\s*['"]([^'"]+)['"]/.exec(options)?.[1] : undefined
}

/** The folder among `names` that a build of release `built` belongs to (3.12.1 is 3.12), longest name first. */
export function builtFrom(built: string, names: string[]): string | undefined {
  const bare = (v: string) => v.replace(/^v/i, '')
  return names
    .filter((n) => bare(built) === bare(n) || bare(built).startsWith(bare(n) + '.'))
    .sort((a, b) => b.length - a.length)[0]
}
