import { opendir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { parseDocument } from 'yaml'
import { isPrerelease, isVersionSegment } from '../../shared/versions'
import { claimToolSite, isToolMarker, readToolSites, type ToolSite } from './doc-tool-sites'
import { join, LANGUAGE, NO_LAYOUT, parseJson, type Entries, type LayoutReader, type LayoutVerdict } from './layout-types'
import { builtFrom, readVersionGroup, sphinxRelease, type FolderVersion } from './version-folders'
import { readInsideRoot } from './walk'

export { NO_LAYOUT, type LayoutTool, type LayoutVerdict } from './layout-types'

/**
 * Versions as documentation tools lay them out on disk (docs/contracts.md, "Versions of a
 * collection"). Each tool marks its tree in its own way, and a file's version is read from the
 * nearest folder above it that such a mark makes a site:
 *
 * - Docusaurus: `versioned_docs/` (beside its `versions.json`), or `versions.json` beside a
 *   `docusaurus.config.*`; `versioned_docs/version-X/` is version X, the current `docs/` is `next`
 *   (also `<id>_versioned_docs/` and `<id>/` for a second docs plugin, and
 *   `i18n/<locale>/docusaurus-plugin-content-docs/{current,version-X}/`);
 * - mike (MkDocs): `versions.json` as a list of `{version, title, aliases}`; `X/` is version X, an
 *   alias folder (`latest/`) is a copy of its version and is not imported again;
 * - Read the Docs: `<language>/` holding `latest/` or `stable/` beside version folders; `latest` is
 *   the development build, shown as `dev`; `stable` is a copy of the release it was built from
 *   (Sphinx's `_static/documentation_options.js` says which) or, when that release is not there,
 *   that release itself;
 * - Antora: `antora.yml` with `version:` for everything under its folder (`~`: unversioned);
 * - Mintlify, vitepress-versioning-plugin and starlight-versions: their configuration lists the
 *   versions and their pages (doc-tool-sites.ts).
 *
 * A file that no tool's site places gets its version from the folders around it
 * (version-folders.ts: `v1/` beside `v2/`, `16/` beside `9.6/`, Redocly's `@v1/`, alias links
 * skipped as copies), else from the path rule (versions.ts). Reads only folder listings and small
 * marker files, through the same guard as documents (nothing outside the folder).
 */

/** File names whose change can change the versions of other files (the folder watcher syncs their folder). */
export function isLayoutMarker(relativePath: string): boolean {
  const name = relativePath.split('/').pop() ?? ''
  return (
    name === 'versions.json' ||
    name.endsWith('_versions.json') ||
    name === 'antora.yml' ||
    name === 'versions.yaml' ||
    isToolMarker(relativePath)
  )
}

/** What a stored document remembers of its layout, so that a change of layout re-imports it (sync/plan.ts). */
export function layoutKey(v: LayoutVerdict): string {
  return v.tool ? `${v.tool}:${v.version ?? '~'}:${v.base}` : ''
}

const MARKER_MAX_BYTES = 1024 * 1024
const VERSION_FOLDER = /^version-(.+)$/
const DOCS_PLUGIN = /^docusaurus-plugin-content-docs(?:-(.+))?$/

type Site =
  | { tool: 'docusaurus'; dir: string; instances: Set<string> }
  | { tool: 'mike'; dir: string; versions: Set<string>; aliases: Map<string, string> }
  | { tool: 'readthedocs'; dir: string; stable: { copyOf: string } | { version: string } }
  | { tool: 'antora'; dir: string; version: string | null }
  | ToolSite

export class VersionLayouts implements LayoutReader {
  private readonly entries = new Map<string, Promise<Entries>>()
  private readonly sites = new Map<string, Promise<Site[]>>()
  private readonly groups = new Map<string, Promise<Map<string, FolderVersion>>>()

  /** `root` is the real path of the imported folder. */
  constructor(private readonly root: string) {}

  /** The layout's word on one file (relative POSIX path). */
  async verdict(relativePath: string): Promise<LayoutVerdict> {
    const segments = relativePath.split('/')
    for (let depth = segments.length - 1; depth >= 0; depth--) {
      const dir = segments.slice(0, depth).join('/')
      for (const site of await this.sitesAt(dir)) {
        const v = claim(site, segments.slice(depth))
        if (v) return v
      }
    }
    return this.folderVerdict(segments)
  }

  /**
   * The version the folders around a file give it: the outermost folder that is a version by its
   * siblings (or a copy of one) decides; a folder the path rule reads by itself (1.2/, a date)
   * leaves the file to that rule, which reads the same folder.
   */
  private async folderVerdict(segments: string[]): Promise<LayoutVerdict> {
    for (let i = 0; i < segments.length - 1; i++) {
      const name = segments[i]!
      const dir = segments.slice(0, i).join('/')
      let group = this.groups.get(dir)
      if (!group) {
        group = readVersionGroup(dir, this)
        this.groups.set(dir, group)
      }
      const found = (await group).get(name)
      if (found) {
        const base = `${segments.slice(0, i + 1).join('/')}/`
        return { tool: found.tool, version: found.version, base, ...(found.copy ? { skip: found.copy } : {}) }
      }
      if (isVersionSegment(name)) return NO_LAYOUT
    }
    return NO_LAYOUT
  }

  private sitesAt(dir: string): Promise<Site[]> {
    let p = this.sites.get(dir)
    if (!p) {
      p = this.readSites(dir)
      this.sites.set(dir, p)
    }
    return p
  }

  private async readSites(dir: string): Promise<Site[]> {
    const here = await this.list(dir)
    const sites: Site[] = []
    const versionsJson =
      here.get('versions.json')?.type === 'file' ? parseJson(await this.text(join(dir, 'versions.json'))) : undefined
    const instances = new Set<string>()
    for (const [name, entry] of here) {
      const m = /^(.+)_versioned_docs$/.exec(name)
      if (m && entry.type === 'dir') instances.add(m[1]!)
    }
    // A list of names in versions.json is common enough elsewhere: Docusaurus's own folders, or its
    // config beside the list, must be there too.
    const config = [...here.keys()].some((n) => /^docusaurus\.config\.[cm]?[jt]s$/.test(n))
    if (here.get('versioned_docs')?.type === 'dir' || instances.size > 0 || (config && isStringList(versionsJson)))
      sites.push({ tool: 'docusaurus', dir, instances })
    else if (isMikeList(versionsJson)) sites.push(mikeSite(dir, versionsJson))
    if (here.get('antora.yml')?.type === 'file') {
      const version = antoraVersion(await this.text(join(dir, 'antora.yml')))
      if (version !== undefined) sites.push({ tool: 'antora', dir, version })
    }
    const name = dir ? path.posix.basename(dir) : path.basename(this.root)
    if (LANGUAGE.test(name) && (here.get('latest')?.type === 'dir' || here.get('stable')?.type === 'dir'))
      sites.push({ tool: 'readthedocs', dir, stable: await this.stableOf(dir, here) })
    sites.push(...(await readToolSites(dir, here, this)))
    return sites
  }

  /** What Read the Docs' `stable` holds: a copy of a version folder beside it, or a release of its own. */
  private async stableOf(dir: string, here: Entries): Promise<{ copyOf: string } | { version: string }> {
    const built = await sphinxRelease(this, join(dir, 'stable'))
    if (!built) return { version: 'stable' }
    const folders = [...here].filter(([n, e]) => e.type === 'dir' && n !== 'stable' && n !== 'latest').map(([n]) => n)
    const copyOf = builtFrom(built, folders)
    return copyOf ? { copyOf } : { version: built }
  }

  list(dir: string): Promise<Entries> {
    let p = this.entries.get(dir)
    if (!p) {
      p = listEntries(path.join(this.root, ...(dir ? dir.split('/') : [])))
      this.entries.set(dir, p)
    }
    return p
  }

  async real(rel: string): Promise<string | null> {
    return realpath(path.join(this.root, ...rel.split('/'))).catch(() => null)
  }

  async text(rel: string): Promise<string | null> {
    try {
      const bytes = await readInsideRoot(this.root, path.join(this.root, ...rel.split('/')), MARKER_MAX_BYTES)
      return new TextDecoder('utf-8', { fatal: false }).decode(bytes)
    } catch {
      // A marker that cannot be read marks nothing: the files keep the versions their paths give.
      return null
    }
  }
}

async function listEntries(abs: string): Promise<Entries> {
  const out: Entries = new Map()
  try {
    for await (const e of await opendir(abs)) {
      if (e.isDirectory()) out.set(e.name, { type: 'dir', link: false })
      else if (e.isFile()) out.set(e.name, { type: 'file', link: false })
      else if (e.isSymbolicLink()) {
        // What a link leads to; reading it goes through the folder guard all the same.
        const st = await stat(path.join(abs, e.name)).catch(() => null)
        if (st?.isDirectory()) out.set(e.name, { type: 'dir', link: true })
        else if (st?.isFile()) out.set(e.name, { type: 'file', link: true })
      }
    }
  } catch {
    // Unreadable folders are reported by the walk.
  }
  return out
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string')
}

interface MikeEntry {
  version: string
  aliases?: unknown
}

function isMikeList(v: unknown): v is MikeEntry[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((x) => typeof x === 'object' && x !== null && typeof (x as { version?: unknown }).version === 'string')
  )
}

function mikeSite(dir: string, list: MikeEntry[]): Site {
  const versions = new Set(list.map((e) => e.version))
  const aliases = new Map<string, string>()
  for (const e of list)
    if (Array.isArray(e.aliases))
      for (const a of e.aliases) if (typeof a === 'string' && !versions.has(a)) aliases.set(a, e.version)
  return { tool: 'mike', dir, versions, aliases }
}

/**
 * The version an `antora.yml` gives its component: `version` as written (a number keeps its
 * digits: 1.10 is "1.10"), null for a versionless component (`~`, or `true`, which takes the git
 * branch name Docent does not see). A pre-release flag becomes part of the name ("4.0-beta"; true:
 * "4.0-prerelease") where the name is not one already, so `latest` never picks it. Undefined when
 * the file is not a component descriptor.
 */
function antoraVersion(text: string | null): string | null | undefined {
  if (text === null) return undefined
  let doc
  try {
    doc = parseDocument(text, { prettyErrors: false })
  } catch {
    return undefined
  }
  if (doc.errors.length > 0 || !doc.has('name')) return undefined
  const node = doc.get('version', true) as { value?: unknown; range?: [number, number] } | undefined
  const value = node?.value
  if (value === null || value === undefined || value === true || value === false) return null
  const raw = typeof value === 'string' ? value : node?.range ? text.slice(node.range[0], node.range[1]).trim() : String(value)
  const version = raw.replace(/^['"]|['"]$/g, '').trim()
  if (!version) return null
  const pre = doc.get('prerelease') as unknown
  if (typeof pre === 'string' && pre.trim()) return isPrerelease(version) ? version : `${version}${pre.trim()}`
  if (pre === true && !isPrerelease(version)) return `${version}-prerelease`
  return version
}

/** The verdict of one site on a path below it (its segments from the site's folder), or null: not its file. */
function claim(site: Site, sub: string[]): LayoutVerdict | null {
  const base = (n: number) => {
    const parts = [...(site.dir ? [site.dir] : []), ...sub.slice(0, n)]
    return parts.length > 0 ? `${parts.join('/')}/` : ''
  }
  switch (site.tool) {
    case 'docusaurus':
      return claimDocusaurus(site, sub, base)
    case 'mike': {
      if (sub.length === 1 && sub[0] === 'index.html')
        return { tool: 'mike', version: null, base: '', skip: 'the page mike writes to redirect to the default version' }
      if (sub.length < 2) return null
      const first = sub[0]!
      if (site.versions.has(first)) return { tool: 'mike', version: first, base: base(1) }
      const target = site.aliases.get(first)
      if (target)
        return {
          tool: 'mike',
          version: target,
          base: base(1),
          skip: `a copy of version ${target} ("${first}" is its alias in versions.json)`,
        }
      return null
    }
    case 'readthedocs': {
      if (sub.length < 2) return null
      const first = sub[0]!
      if (sub[1] === '_sources')
        return { tool: 'readthedocs', version: null, base: '', skip: "Sphinx's copy of the page sources" }
      if (first === 'latest') return { tool: 'readthedocs', version: 'dev', base: base(1) }
      if (first === 'stable') {
        if ('copyOf' in site.stable)
          return {
            tool: 'readthedocs',
            version: site.stable.copyOf,
            base: base(1),
            skip: `a copy of version ${site.stable.copyOf} (Read the Docs' "stable")`,
          }
        return { tool: 'readthedocs', version: site.stable.version, base: base(1) }
      }
      return { tool: 'readthedocs', version: first, base: base(1) }
    }
    case 'antora': {
      const pages = sub[0] === 'modules' && sub[2] === 'pages' && sub.length > 3
      return { tool: 'antora', version: site.version, base: pages ? base(3) : base(0) }
    }
    default:
      return claimToolSite(site, sub, base)
  }
}

function claimDocusaurus(
  site: Extract<Site, { tool: 'docusaurus' }>,
  sub: string[],
  base: (n: number) => string,
): LayoutVerdict | null {
  const first = sub[0]!
  const version = (name: string | undefined) => (name ? VERSION_FOLDER.exec(name)?.[1] : undefined)
  const plugin = first.endsWith('_versioned_docs') ? first.slice(0, -'_versioned_docs'.length) : null
  const v = version(sub[1])
  if (sub.length > 2 && v && (first === 'versioned_docs' || (plugin !== null && site.instances.has(plugin))))
    return { tool: 'docusaurus', version: v, base: base(2) }
  if (sub.length > 1 && (first === 'docs' || site.instances.has(first)))
    return { tool: 'docusaurus', version: 'next', base: base(1) }
  // Translations: i18n/<locale>/docusaurus-plugin-content-docs[-<id>]/{current,version-X}/...
  if (first === 'i18n' && sub.length > 4 && DOCS_PLUGIN.test(sub[2]!)) {
    if (sub[3] === 'current') return { tool: 'docusaurus', version: 'next', base: base(4) }
    const translated = version(sub[3])
    if (translated) return { tool: 'docusaurus', version: translated, base: base(4) }
  }
  return null
}
