import { joinWords } from '../../../shared/words'

/**
 * The engine names a search without a version "all versions". For collections that have no
 * versions at all that is misleading (there is nothing to choose between), so the scope is named
 * by its collections instead: "Searching manuals", not "Searching all versions".
 */

interface CollectionVersions {
  id: string
  versions: string[]
}

/** The words for a search of these collections when none of them has versions; null when one has. */
export function unversionedLabel(library: CollectionVersions[], requested: readonly string[]): string | null {
  const inScope = requested.length ? library.filter((c) => requested.includes(c.id)) : library
  if (inScope.length === 0 || inScope.some((c) => c.versions.length > 0)) return null
  if (inScope.length > 3) return requested.length ? `${inScope.length} collections` : 'all collections'
  return joinWords(inScope.map((c) => c.id))
}

/** A scope text of the engine ("Searching all versions", "all versions, change logs first") in those words. */
export function withoutAllVersions(text: string, label: string | null): string {
  return label ? text.replace(/\ball versions\b/, label) : text
}
