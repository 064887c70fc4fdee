import { z } from 'zod'
import { HttpStatusError } from './download'
import type { DownloadFetch } from './network'

/**
 * The few Hugging Face hub endpoints the manager uses, and only while a download the person started is running:
 *   GET {endpoint}/api/models/{repo}/revision/{ref}          -> { sha }            (resolve `main` to a commit once)
 *   GET {endpoint}/api/models/{repo}/tree/{revision}?recursive=true
 *                                                          -> [{ type, path, size, oid, lfs?: { oid, size } }]
 *   GET {endpoint}/{repo}/resolve/{revision}/{file}          -> the bytes (may redirect to a CDN)
 * For LFS files `lfs.oid` is the file's SHA-256; for small files kept in git, `oid` is the git blob SHA-1.
 */

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co'

export interface HubFile {
  path: string
  size: number
  /** SHA-256 published for LFS files; null for files stored in git. */
  sha256: string | null
  /** Git blob SHA-1 (for files stored in git; for LFS files it is the pointer's id). */
  gitOid: string
  lfs: boolean
}

const TreeEntry = z.object({
  type: z.string(),
  path: z.string(),
  size: z.number().int().nonnegative().optional(),
  oid: z.string().optional(),
  lfs: z.object({ oid: z.string().regex(/^[0-9a-f]{64}$/i), size: z.number().int().nonnegative() }).nullish(),
})
const Tree = z.array(TreeEntry)
const RevisionInfo = z.object({ sha: z.string().regex(/^[0-9a-f]{40}$/i) })

export function normaliseEndpoint(endpoint: string): string {
  return endpoint.replace(/\/+$/, '')
}

function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/')
}

export function resolveUrl(endpoint: string, repo: string, revision: string, file: string): string {
  return `${normaliseEndpoint(endpoint)}/${repo}/resolve/${encodeURIComponent(revision)}/${encodePath(file)}`
}

async function getJson(url: string, fetchImpl: DownloadFetch, signal?: AbortSignal): Promise<{ body: unknown; res: Response }> {
  const res = await fetchImpl(url, { headers: { Accept: 'application/json' }, signal })
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined)
    throw new HttpStatusError(res.status, url)
  }
  return { body: await res.json(), res }
}

/** The commit a branch or tag points at now. */
export async function resolveRevision(
  endpoint: string,
  repo: string,
  ref: string,
  fetchImpl: DownloadFetch,
  signal?: AbortSignal,
): Promise<string> {
  const url = `${normaliseEndpoint(endpoint)}/api/models/${repo}/revision/${encodeURIComponent(ref)}`
  const { body } = await getJson(url, fetchImpl, signal)
  const parsed = RevisionInfo.safeParse(body)
  if (!parsed.success) throw new Error(`The hub's answer for ${repo}@${ref} has no commit id.`)
  return parsed.data.sha.toLowerCase()
}

/** Every file of the repository at a commit, with the sizes and hashes the hub publishes. Follows pagination. */
export async function listRepoFiles(
  endpoint: string,
  repo: string,
  revision: string,
  fetchImpl: DownloadFetch,
  signal?: AbortSignal,
): Promise<Map<string, HubFile>> {
  const files = new Map<string, HubFile>()
  let url: string | null = `${normaliseEndpoint(endpoint)}/api/models/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`
  for (let page = 0; url !== null && page < 50; page++) {
    const { body, res }: { body: unknown; res: Response } = await getJson(url, fetchImpl, signal)
    const parsed = Tree.safeParse(body)
    if (!parsed.success) throw new Error(`The hub's file list for ${repo}@${revision} is not in the expected form.`)
    for (const e of parsed.data) {
      if (e.type !== 'file') continue
      const size = e.lfs?.size ?? e.size
      if (size === undefined) continue
      files.set(e.path, {
        path: e.path,
        size,
        sha256: e.lfs ? e.lfs.oid.toLowerCase() : null,
        gitOid: (e.oid ?? '').toLowerCase(),
        lfs: Boolean(e.lfs),
      })
    }
    url = nextLink(res.headers.get('link'), url)
  }
  return files
}

function nextLink(header: string | null, base: string): string | null {
  if (!header) return null
  for (const part of header.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/i.exec(part)
    if (m?.[1]) return new URL(m[1], base).toString()
  }
  return null
}
