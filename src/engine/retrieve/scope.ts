import type { Queryable } from '../store/db'
import type { Scope } from '../../shared/search'
import { latestVersion } from '../ingest/versions'

/**
 * The one filter model every retriever applies (seed 002: keyword and vector search with identical
 * filters). A scope resolves to a set of collections and, per collection, the versions allowed;
 * unversioned documents are always in scope. `toSql` renders it once, and both retrievers embed
 * the same fragment, so they cannot disagree about what is in scope.
 */
export interface ResolvedScope {
  collections: string[]
  /** null = every version; otherwise "collection|version" pairs allowed (plus unversioned chunks). */
  versionKeys: string[] | null
  /** Words for progress messages: "the 2025-03-26 docs". */
  label: string
  /** Versions actually searched, per collection (for traces and the UI). */
  versions: Record<string, string[] | 'all'>
}

export class ScopeError extends Error {
  override readonly name = 'ScopeError'
}

export async function resolveScope(db: Queryable, scope: Scope): Promise<ResolvedScope> {
  const { rows: cols } = await db.query<{ id: string }>('SELECT id FROM collections ORDER BY id')
  const known = new Set(cols.map((c) => c.id))
  const requested = scope.collections.length ? scope.collections : [...known]
  for (const c of requested) {
    if (!known.has(c)) throw new ScopeError(`no collection named "${c}"; run "docent ingest <folder> --collection ${c}" first`)
  }
  const version = scope.version ?? 'all'
  if (version === 'all') {
    return {
      collections: requested,
      versionKeys: null,
      label: 'all versions',
      versions: Object.fromEntries(requested.map((c) => [c, 'all' as const])),
    }
  }
  const { rows } = await db.query<{ collection_id: string; version: string }>(
    `SELECT DISTINCT collection_id, version FROM documents
      WHERE collection_id = ANY($1::text[]) AND version IS NOT NULL AND status = 'indexed'`,
    [requested],
  )
  const byCollection = new Map<string, string[]>()
  for (const r of rows) byCollection.set(r.collection_id, [...(byCollection.get(r.collection_id) ?? []), r.version])
  const keys: string[] = []
  const versions: Record<string, string[]> = {}
  for (const c of requested) {
    const present = byCollection.get(c) ?? []
    const chosen = version === 'latest' ? latestVersion(present) : present.includes(version) ? version : null
    versions[c] = chosen ? [chosen] : []
    if (chosen) keys.push(`${c}|${chosen}`)
  }
  const label =
    version === 'latest'
      ? `the latest docs (${[...new Set(Object.values(versions).flat())].join(', ') || 'unversioned only'})`
      : `the ${version} docs`
  return { collections: requested, versionKeys: keys, label, versions }
}

/** SQL condition on a chunks alias, with its parameters appended after `offset` existing ones. */
export function scopeSql(scope: ResolvedScope, alias: string, offset: number): { sql: string; params: unknown[] } {
  const a = alias
  if (scope.versionKeys === null) {
    return { sql: `${a}.collection_id = ANY($${offset + 1}::text[])`, params: [scope.collections] }
  }
  return {
    sql: `${a}.collection_id = ANY($${offset + 1}::text[]) AND (${a}.version IS NULL OR (${a}.collection_id || '|' || ${a}.version) = ANY($${offset + 2}::text[]))`,
    params: [scope.collections, scope.versionKeys],
  }
}
