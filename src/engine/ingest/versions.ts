/**
 * Versions and source-kind labels (docs/contracts.md, "Versions of a collection").
 *
 * A document's version comes from front matter (`version:`), else from the layout of a
 * documentation tool (version-layouts.ts: Docusaurus, mike, Read the Docs, Antora, Mintlify,
 * vitepress-versioning-plugin, starlight-versions), else from the folders around it
 * (version-folders.ts: `v1/` beside `v2/`, `16/` beside `9.6/`, Redocly's `@v1/`), else from a
 * path segment that is a version by itself: a date (2025-03-26), v1.2, 1.2.0, a release line
 * (10.x, 3.0.x), or a pre-release word (draft, next, latest, ...). `latest` as a scope means the
 * highest *released* version, never a pre-release.
 */

export { compareVersions, isPrerelease, isVersionSegment, latestVersion } from '../../shared/versions'
import { isVersionSegment } from '../../shared/versions'
import { NO_LAYOUT, type LayoutVerdict } from './version-layouts'

/**
 * Version of a document from its front matter, else from its tree's layout (a layout that places
 * the file decides, unversioned included; the folder rule is one), else the first folder segment
 * of its path that is a version by itself (a numbered or dated one before a word).
 */
export function detectVersion(
  relativePath: string,
  meta: Record<string, unknown>,
  layout: LayoutVerdict = NO_LAYOUT,
): string | null {
  const fm = meta['version']
  if (typeof fm === 'string' && fm.trim()) return fm.trim()
  if (typeof fm === 'number') return String(fm)
  if (layout.tool) return layout.version
  const segments = relativePath.split('/').slice(0, -1).filter(isVersionSegment)
  // A numbered or dated segment is more specific than a word above it: Azure's
  // `preview/2023-05-01-preview/` is 2023-05-01-preview, not "preview".
  const numbered = segments.find((seg) => /\d/.test(seg))
  if (numbered) return numbered
  if (segments.length > 0) return segments[0]!
  // A file named like a version (docs/2025-03-26.md) is a changelog entry, not a release: ignored.
  return null
}

/** Folder names that are file formats, not source kinds. */
const FORMAT_FOLDERS = new Set([
  'pdf',
  'pdfs',
  'md',
  'markdown',
  'mdx',
  'html',
  'htm',
  'docx',
  'doc',
  'txt',
  'text',
  'rst',
  'adoc',
  'asciidoc',
  'csv',
  'tsv',
  'odt',
  'rtf',
  'epub',
  'pptx',
  'ppt',
  'ods',
  'xlsx',
  'xls',
])

/**
 * Source kind label from the first path segment inside the collection ("specification/..." ->
 * "Specification"), or inside the version's folder when a layout placed the file there
 * (`versioned_docs/version-3.1/guides/...` -> "Guides", as `docs/guides/...`), unless the
 * collection maps first segments to labels itself (settings.kinds).
 */
export function detectKind(relativePath: string, kinds?: Record<string, string>, base = ''): string | null {
  const top = relativePath.split('/')[0]!
  if (!relativePath.includes('/')) return null
  if (kinds && Object.prototype.hasOwnProperty.call(kinds, top)) return kinds[top] ?? null
  const segments = (base && relativePath.startsWith(base) ? relativePath.slice(base.length) : relativePath).split('/')
  if (segments.length < 2) return null
  const first = segments[0]!
  if (isVersionSegment(first)) return null
  // A folder named after a file format ("pdf/", "md/") sorts files by format, not by what they are.
  if (FORMAT_FOLDERS.has(first.toLowerCase())) return null
  const words = first.replace(/[-_]+/g, ' ').trim()
  if (!words) return null
  return words.replace(/\b\w/g, (c) => c.toUpperCase())
}
