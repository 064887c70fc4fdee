/** Types shared by the readers of documentation layouts (version-layouts.ts and its helpers). */

export type LayoutTool =
  'docusaurus' | 'mike' | 'readthedocs' | 'antora' | 'mintlify' | 'redocly' | 'vitepress' | 'starlight' | 'folders'

export interface LayoutVerdict {
  /** Which tool's layout placed the file; null when none did (the path's own segments then decide). */
  tool: LayoutTool | null
  /** The version that layout gives the file (null: unversioned by the layout's own rule). */
  version: string | null
  /** The folder of that version (with a trailing slash, '' for none): the source kind is read below it. */
  base: string
  /** Set when the file is not a document of its own (a copy under an alias, a redirect page): why. */
  skip?: string
}

export const NO_LAYOUT: LayoutVerdict = { tool: null, version: null, base: '' }

export interface Entry {
  type: 'dir' | 'file'
  /** A symbolic link (to what it leads to: `type`). */
  link: boolean
}

/** A folder's entries by name. */
export type Entries = Map<string, Entry>

/** What the layout readers may look at: folder listings and small marker files, inside the imported folder only. */
export interface LayoutReader {
  /** Entries of a folder (relative POSIX path, '' for the top); empty when it cannot be read. */
  list(dir: string): Promise<Entries>
  /** Text of a small file (relative POSIX path), or null when it is missing, too large or outside the folder. */
  text(rel: string): Promise<string | null>
  /** The real path of a folder (relative POSIX path), or null when it cannot be resolved. */
  real(rel: string): Promise<string | null>
}

export function join(dir: string, rel: string): string {
  return dir ? `${dir}/${rel}` : rel
}

/** A language folder as Read the Docs and Starlight name them: en, pt-br, zh_CN. */
export const LANGUAGE = /^[a-z]{2}(?:[-_][a-z]{2,4})?$/i

/** A marker file's JSON (versions.json, docs.json); undefined when it is missing or not JSON. */
export function parseJson(text: string | null): unknown {
  if (text === null) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
