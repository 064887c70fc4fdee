import { z } from 'zod'
import { joinWords } from './words'

/**
 * Where a passage is: the one declaration of a passage's place, which every passage-shaped shape
 * of the contract extends (a search hit, a citation, a closest section, a preview, an opened
 * source, a trace's places, the MCP server's passages). Plain data only: no Node, Electron or DOM
 * imports here, so every process can load this file.
 *
 * Field names are the contract's (docs/contracts.md, "Casing"): snake_case, as the CLI's --json
 * and the MCP tools print them.
 */
export const PassageRef = z.object({
  /** Stable while its document is unchanged: `source.open` and the MCP's get_passage take it. */
  chunk_id: z.string(),
  collection: z.string(),
  /** The document's path relative to its collection's folder. */
  path: z.string(),
  /** Heading breadcrumb joined with " > " ("" for a page's introduction). */
  heading: z.string(),
  version: z.string().nullable(),
  /** Source kind label, e.g. "Specification" or "Guide". */
  kind: z.string().nullable(),
  /** First page of the chunk in paged documents, else null. */
  page: z.number().int().nullable(),
})
export type PassageRef = z.infer<typeof PassageRef>

/**
 * Another place that holds the same section word for word (the same page copied into each
 * release's folder, a file kept twice). A result stands for its copies and lists them here.
 */
export const SamePlace = PassageRef.pick({ chunk_id: true, path: true, version: true, page: true })
export type SamePlace = z.infer<typeof SamePlace>

/** A passage with what it says, and the last page it reaches in a paged document (else null). */
export const PassageText = PassageRef.extend({
  page_end: z.number().int().nullable(),
  text: z.string(),
})
export type PassageText = z.infer<typeof PassageText>

/** A passage in its document: its collection's folder and its order there (the host protocol's `passage.get`). */
export const PassageInDocument = PassageText.extend({
  root: z.string(),
  position: z.number().int().nullable(),
})
export type PassageInDocument = z.infer<typeof PassageInDocument>

/**
 * The copies of a passage in words, for a source line: "also word for word in 2024-11-05,
 * 2025-03-26 and 2 more", naming releases where the copies have them, else their files, in
 * order ("3.9" before "3.10").
 */
export function sameTextLabel(same: readonly SamePlace[] | undefined, shown = 4): string | null {
  if (!same?.length) return null
  const names = [...new Set(same.map((s) => s.version ?? s.path))].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
  const listed = names.slice(0, shown)
  const more = names.length - listed.length
  const words = more > 0 ? `${listed.join(', ')} and ${more} more` : joinWords(listed)
  return `also word for word in ${words}`
}
