import { join, LANGUAGE, parseJson, type Entries, type LayoutReader, type LayoutVerdict } from './layout-types'

/**
 * Documentation tools whose configuration, not their folder names, says which pages are which
 * version (docs/contracts.md, "Versions of a collection"):
 *
 * - Mintlify: `docs.json` (`navigation.versions[]`, at any depth of the navigation) or the older
 *   `mint.json` (groups with a `version`); a page is the version whose navigation lists it, a page
 *   listed in several versions is shared (unversioned), and a page no navigation lists takes the
 *   version of its folder when every listed page in that folder has the same one;
 * - vitepress-versioning-plugin: `versions/<v>/` beside `.vitepress/` is v; the other pages are
 *   the current docs, named by the config's `latestVersion` ("current" when it names none);
 * - starlight-versions: each `content/versions/<slug>.json` makes `content/docs/<slug>/` (and
 *   `content/docs/<locale>/<slug>/`) version slug; the other docs are "current".
 */

export type ToolSite =
  | {
      tool: 'mintlify'
      dir: string
      pages: Map<string, string | null>
      folders: Map<string, string | null>
      bases: Map<string, string>
    }
  | { tool: 'vitepress'; dir: string; current: string }
  | { tool: 'starlight'; dir: string; slugs: Set<string> }

/** Names of the marker files these tools write (a change re-reads the folder's versions). */
export function isToolMarker(relativePath: string): boolean {
  const name = relativePath.split('/').pop() ?? ''
  return name === 'docs.json' || name === 'mint.json' || /(?:^|\/)content\/versions\/[^/]+\.(?:json|ya?ml)$/.test(relativePath)
}

/** The sites these tools mark in one folder. */
export async function readToolSites(dir: string, here: Entries, reader: LayoutReader): Promise<ToolSite[]> {
  const sites: ToolSite[] = []
  for (const name of ['docs.json', 'mint.json']) {
    if (here.get(name)?.type !== 'file') continue
    const site = mintlifySite(dir, parseJson(await reader.text(join(dir, name))))
    if (site) {
      sites.push(site)
      break
    }
  }
  if (here.get('.vitepress')?.type === 'dir' && here.get('versions')?.type === 'dir') {
    const current = await vitepressCurrent(dir, reader)
    if (current !== undefined) sites.push({ tool: 'vitepress', dir, current })
  }
  if (here.get('content')?.type === 'dir') {
    const content = await reader.list(join(dir, 'content'))
    if (content.get('docs')?.type === 'dir' && content.get('versions')?.type === 'dir') {
      const slugs = new Set<string>()
      for (const [n, e] of await reader.list(join(dir, 'content/versions'))) {
        const m = /^([^_.][^/]*)\.(?:json|ya?ml)$/.exec(n)
        if (m && e.type === 'file') slugs.add(m[1]!)
      }
      if (slugs.size > 0) sites.push({ tool: 'starlight', dir, slugs })
    }
  }
  return sites
}

/** The verdict of one tool site on a path below it (its segments from the site's folder), or null. */
export function claimToolSite(site: ToolSite, sub: string[], base: (n: number) => string): LayoutVerdict | null {
  switch (site.tool) {
    case 'mintlify': {
      const page = sub.join('/').replace(/\.mdx?$/i, '')
      const version = site.pages.has(page) ? site.pages.get(page)! : folderVersion(site.folders, sub)
      if (version === undefined) return null
      const prefix = version === null ? '' : (site.bases.get(version) ?? '')
      const depth = prefix && page.startsWith(prefix) ? prefix.split('/').length - 1 : 0
      return { tool: 'mintlify', version, base: depth > 0 ? base(depth) : '' }
    }
    case 'vitepress': {
      if (sub[0] === 'versions' && sub.length > 2) return { tool: 'vitepress', version: sub[1]!, base: base(2) }
      if (sub[0]!.startsWith('.') || sub[0] === 'versions' || sub[0] === 'public') return null
      return { tool: 'vitepress', version: site.current, base: base(0) }
    }
    case 'starlight': {
      if (sub[0] !== 'content' || sub[1] !== 'docs' || sub.length < 3) return null
      const rest = sub.slice(2)
      if (rest.length > 1 && site.slugs.has(rest[0]!)) return { tool: 'starlight', version: rest[0]!, base: base(3) }
      const locale = rest.length > 1 && LANGUAGE.test(rest[0]!)
      if (locale && rest.length > 2 && site.slugs.has(rest[1]!)) return { tool: 'starlight', version: rest[1]!, base: base(4) }
      return { tool: 'starlight', version: 'current', base: base(locale ? 3 : 2) }
    }
  }
}

/**
 * Mintlify's navigation: every page string inside a `pages` list, with the version of the nearest
 * object above it that names one (`{"version": "2.0.0", "groups": [...]}`). Not a Mintlify
 * config (no `navigation`), or one without versions: null.
 */
function mintlifySite(dir: string, config: unknown): ToolSite | null {
  if (!isObject(config) || !('navigation' in config)) return null
  const seen = new Map<string, Set<string | null>>()
  const visit = (node: unknown, version: string | null, inPages: boolean): void => {
    if (typeof node === 'string') {
      const page = node.replace(/^\//, '')
      if (inPages) seen.set(page, (seen.get(page) ?? new Set()).add(version))
      return
    }
    if (Array.isArray(node)) {
      for (const item of node) visit(item, version, inPages)
      return
    }
    if (!isObject(node)) return
    const own = typeof node['version'] === 'string' && node['version'].trim() ? node['version'].trim() : version
    for (const [key, value] of Object.entries(node)) if (key !== 'version') visit(value, own, key === 'pages')
  }
  visit(config['navigation'], null, false)
  const labels = new Map<string, string | null>()
  for (const [page, versions] of seen) {
    const named = [...versions].filter((v): v is string => v !== null)
    // Listed outside any version, or in several: the page belongs to none of them alone.
    labels.set(page, named.length === 1 && versions.size === 1 ? named[0]! : null)
  }
  const names = versionNames(labels)
  const pages = new Map([...labels].map(([page, label]) => [page, label === null ? null : names.get(label)!]))
  if (![...pages.values()].some((v) => v !== null)) return null
  return { tool: 'mintlify', dir, pages, folders: folderVersions(pages), bases: versionBases(pages) }
}

/** A version number inside a label: 2025-03-26, v2, 1.2.0, 10.x, 2.0.0-beta.1. */
const VERSION_IN_LABEL = /(?<![\p{L}\p{N}])v?\d+(?:[.-]\d+)*(?:\.x)?(?:-?(?:alpha|beta|rc|preview)[.\d]*)?(?![\p{L}\p{N}])/iu

/**
 * Mintlify's `version` is the label its dropdown shows ("Version 2025-03-26", "Version 2026-07-28
 * (latest)", "Draft", "2.0.0"): the version is the number in it, or the label itself; spelt as
 * the folder its pages sit in when every page has a folder of that name ("Draft" in `draft/`).
 */
function versionNames(labels: Map<string, string | null>): Map<string, string> {
  const pagesOf = new Map<string, string[]>()
  for (const [page, label] of labels) if (label !== null) pagesOf.set(label, [...(pagesOf.get(label) ?? []), page])
  const names = new Map<string, string>()
  for (const [label, pages] of pagesOf) {
    const token = VERSION_IN_LABEL.exec(label)?.[0] ?? label.trim()
    const spellings = pages.map((p) =>
      p
        .split('/')
        .slice(0, -1)
        .find((seg) => seg.toLowerCase() === token.toLowerCase()),
    )
    const folder = spellings.every((s) => s !== undefined && s === spellings[0]) ? spellings[0] : undefined
    names.set(label, folder ?? token)
  }
  return names
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Each folder of listed pages, with the one version of all the pages below it (null: several or none). */
function folderVersions(pages: Map<string, string | null>): Map<string, string | null> {
  const folders = new Map<string, string | null>()
  for (const [page, version] of pages) {
    const parts = page.split('/')
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/')
      const before = folders.get(folder)
      folders.set(folder, before === undefined || before === version ? version : null)
    }
  }
  return folders
}

/** The deepest folder under which a page of an unlisted file lies, with its version; undefined when none speaks. */
function folderVersion(folders: Map<string, string | null>, sub: string[]): string | undefined {
  for (let i = sub.length - 1; i >= 1; i--) {
    const v = folders.get(sub.slice(0, i).join('/'))
    if (v !== undefined && v !== null) return v
    if (v === null) return undefined
  }
  return undefined
}

/** The folder all of a version's pages share ("v2/"), read as the version's folder for source kinds. */
function versionBases(pages: Map<string, string | null>): Map<string, string> {
  const byVersion = new Map<string, string[][]>()
  for (const [page, version] of pages)
    if (version !== null) byVersion.set(version, [...(byVersion.get(version) ?? []), page.split('/').slice(0, -1)])
  const bases = new Map<string, string>()
  for (const [version, folders] of byVersion) {
    let common = folders[0]!
    for (const f of folders) common = common.slice(0, commonLength(common, f))
    bases.set(version, common.length > 0 ? `${common.join('/')}/` : '')
  }
  return bases
}

function commonLength(a: string[], b: string[]): number {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

/** The name vitepress-versioning-plugin's config gives the current docs, or undefined when the plugin is not in use. */
async function vitepressCurrent(dir: string, reader: LayoutReader): Promise<string | undefined> {
  for (const name of ['config.mts', 'config.ts', 'config.mjs', 'config.js', 'config.cts', 'config.cjs']) {
    const text = await reader.text(join(dir, `.vitepress/${name}`))
    if (text === null) continue
    if (!/vitepress-versioning-plugin|defineVersionedConfig/.test(text)) return undefined
    return /\blatestVersion\s*:\s*['"`]([^'"`]+)['"`]/.exec(text)?.[1]?.trim() || 'current'
  }
  return undefined
}
