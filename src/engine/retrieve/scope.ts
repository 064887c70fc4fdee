import type { Queryable } from '../store/db'
import type { Scope, ScopeInfo, ScopeSource } from '../../shared/search'
import { compareVersions, latestVersion } from '../../shared/versions'
import { detectVersionIntent, findVersionMentions, removeVersionMentions } from './version-mention'

/**
 * The one filter model every retriever applies (keyword and vector search with identical
 * filters). A scope resolves to a set of collections and, per collection, the versions allowed;
 * unversioned documents are always in scope. `toSql` renders it once, and both retrievers embed
 * the same fragment, so they cannot disagree about what is in scope.
 *
 * Precedence: a version the person chose (picker, --version, MCP `version`) wins; when they chose
 * none ('auto'), versions named in the question are searched; else every version (the default).
 */
export interface ResolvedScope {
  collections: string[]
  /** null = every version; otherwise "collection|version" pairs allowed (plus unversioned chunks). */
  versionKeys: string[] | null
  /** Words for progress messages: "the 2025-03-26 docs", "2024-11-05, named in your question". */
  label: string
  /** Versions actually searched, per collection (for traces and the UI). */
  versions: Record<string, string[] | 'all'>
  source: ScopeSource
  /** Every version of the collections in scope: their mentions are taken out of the search text. */
  known: string[]
  /** The words of the question that named the versions searched. */
  named: string[]
  /** The question asks what changed or when: change-log sections are ranked first (search.ts). */
  changeLogFirst: boolean
}

export class ScopeError extends Error {
  override readonly name = 'ScopeError'
}

export async function resolveScope(db: Queryable, scope: Scope, question = ''): Promise<ResolvedScope> {
  // Only collections the connected role may read (store/access.ts): on a server the policies
  // already hide the others' rows, and the scope is cut to the role's grants read now, so a
  // collection it may not read is "no collection" here, its name never echoed as existing.
  const { rows: cols } = await db.query<{ id: string }>(
    `SELECT c.id FROM collections c, (SELECT docent_readable_collections() AS r) a
      WHERE a.r IS NULL OR c.id = ANY(a.r) ORDER BY c.id`,
  )
  const known = new Set(cols.map((c) => c.id))
  const requested = scope.collections.length ? scope.collections : [...known]
  for (const c of requested) {
    if (!known.has(c)) throw new ScopeError(`no collection named "${c}"; run "docent ingest <folder> --collection ${c}" first`)
  }
  const { rows } = await db.query<{ collection_id: string; version: string }>(
    `SELECT DISTINCT collection_id, version FROM documents
      WHERE collection_id = ANY($1::text[]) AND version IS NOT NULL AND status = 'indexed'`,
    [requested],
  )
  const byCollection = new Map<string, string[]>()
  for (const r of rows) byCollection.set(r.collection_id, [...(byCollection.get(r.collection_id) ?? []), r.version])
  const allKnown = [...new Set(rows.map((r) => r.version))].sort(compareVersions)
  const base = { collections: requested, known: allKnown, named: [], changeLogFirst: false }

  const version = scope.version ?? 'auto'
  if (version === 'auto') return inferFromQuestion(requested, byCollection, question, allKnown)
  if (version === 'all') {
    const label = allKnown.length === 0 ? requested.join(', ') || 'the documents' : 'all versions'
    return { ...base, versionKeys: null, label, versions: allVersions(requested), source: 'chosen' }
  }
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
  return { ...base, versionKeys: keys, label, versions, source: 'chosen' }
}

function allVersions(collections: string[]): Record<string, 'all'> {
  return Object.fromEntries(collections.map((c) => [c, 'all' as const]))
}

/**
 * No version chosen: each collection reads the question against its own versions (its own
 * "latest"); a collection whose versions the question does not name keeps every version.
 */
function inferFromQuestion(
  requested: string[],
  byCollection: Map<string, string[]>,
  question: string,
  allKnown: string[],
): ResolvedScope {
  const versions: Record<string, string[] | 'all'> = {}
  const keys: string[] = []
  const named = new Set<string>()
  const searched = new Set<string>()
  let narrowed = false
  let changeLogFirst = false
  for (const c of requested) {
    const present = byCollection.get(c) ?? []
    const intent = detectVersionIntent(question, present, [c])
    changeLogFirst ||= intent.history
    if (Array.isArray(intent.versions) && intent.versions.length > 0) {
      narrowed = true
      versions[c] = intent.versions
      for (const v of intent.versions) {
        keys.push(`${c}|${v}`)
        searched.add(v)
      }
      for (const m of intent.mentions) named.add(m.text.trim())
    } else {
      versions[c] = 'all'
      for (const v of present) keys.push(`${c}|${v}`)
    }
  }
  const base = { collections: requested, known: allKnown, named: [...named], changeLogFirst }
  if (!narrowed) {
    // A collection without versions is searched whole: "all versions" would suggest it has some.
    const whole = allKnown.length === 0 ? requested.join(', ') || 'the documents' : 'all versions'
    const label = changeLogFirst ? `${whole}, change logs first` : whole
    return { ...base, versionKeys: null, label, versions, source: 'default' }
  }
  const list = [...searched].sort(compareVersions)
  const what = list.length <= 2 ? list.join(' and ') : `${list[0]} to ${list[list.length - 1]} (${list.length} versions)`
  const label = `${what}, named in your question${changeLogFirst ? ', change logs first' : ''}`
  return { ...base, versionKeys: keys, label, versions, source: 'named_in_question' }
}

/**
 * The text keyword and vector search read: the query without its version mentions, which name
 * where to search, not what the passage says. Applied to any query text (the question, a
 * rewritten query), against every version of the collections in scope.
 */
export function searchText(
  query: string,
  scope: Pick<ResolvedScope, 'known'> & Partial<Pick<ResolvedScope, 'collections'>>,
): string {
  // A release line ("v5", "fastify 4") stays in the text: documentation names its lines in titles
  // ("Migration Guide V5"), where a full release number or a date is rarely anything but noise.
  const mentions = findVersionMentions(query, scope.known, scope.collections ?? []).filter((m) => m.kind !== 'series')
  return removeVersionMentions(query, mentions)
}

/** The scope as front ends show it. */
export function scopeInfo(scope: ResolvedScope): ScopeInfo {
  return {
    label: scope.label,
    source: scope.source,
    collections: scope.collections,
    versions: scope.versions,
    named: scope.named,
    change_log_first: scope.changeLogFirst,
  }
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
