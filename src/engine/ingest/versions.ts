/**
 * Versions and source-kind labels (docs/contracts.md, "Versions of a collection").
 *
 * A document's version comes from front matter (`version:`) or from a path segment that looks like a
 * version: a date (2025-03-26), v1.2, 1.2.0, or a pre-release word (draft, next, latest, ...).
 * `latest` as a scope means the highest *released* version, never a pre-release.
 */

export { compareVersions, isPrerelease, isVersionSegment, latestVersion } from '../../shared/versions'
import { isVersionSegment } from '../../shared/versions'

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
  'odt',
  'rtf',
  'epub',
])

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
  // A folder named after a file format ("pdf/", "md/") sorts files by format, not by what they are.
  if (FORMAT_FOLDERS.has(first.toLowerCase())) return null
  const words = first.replace(/[-_]+/g, ' ').trim()
  if (!words) return null
  return words.replace(/\b\w/g, (c) => c.toUpperCase())
}
