import { createHash } from 'node:crypto'

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** Two files with the same name in different folders are different documents: the id keys on the full relative path. */
export function documentId(collection: string, relativePath: string): string {
  return 'd_' + sha256Hex(`${collection}\u0000${relativePath}`).slice(0, 24)
}

/**
 * Deterministic chunk id from (collection, relative path, breadcrumb, ordinal within that
 * breadcrumb): re-importing the same content gives the same ids, and editing one section leaves
 * the ids of the others alone.
 */
export function chunkId(collection: string, relativePath: string, breadcrumb: string[], ordinal: number): string {
  return 'c_' + sha256Hex(`${collection}\u0000${relativePath}\u0000${breadcrumb.join('\u0001')}\u0000${ordinal}`).slice(0, 24)
}

/** Collection ids are short, readable slugs of the name a person gave. */
export function collectionSlug(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
  if (!slug) throw new Error(`"${name}" is not a usable collection name: use letters or digits`)
  return slug
}
