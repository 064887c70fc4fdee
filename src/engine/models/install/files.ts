import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'

/** Small file-system helpers the manager's parts share. */

export async function hashFile(p: string, algorithm: 'sha256' | 'sha1' = 'sha256', prefix = ''): Promise<string> {
  const h = createHash(algorithm).update(prefix)
  for await (const chunk of createReadStream(p, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer)
  return h.digest('hex')
}

export async function fileRecord(root: string, rel: string): Promise<{ path: string; size: number; sha256: string }> {
  const p = path.join(root, ...rel.split('/'))
  return { path: rel, size: (await stat(p)).size, sha256: await hashFile(p) }
}

/** Regular files under a folder, as forward-slash relative paths; skips hidden entries and symlinks. */
export async function walkFiles(root: string): Promise<{ rel: string; size: number }[]> {
  const out: { rel: string; size: number }[] = []
  const visit = async (dir: string, prefix: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true })
    for (const e of entries) {
      if (e.name.startsWith('.')) continue
      const abs = path.join(dir, e.name)
      const rel = prefix ? `${prefix}/${e.name}` : e.name
      if (e.isDirectory()) await visit(abs, rel)
      else if (e.isFile()) out.push({ rel, size: (await stat(abs)).size })
    }
  }
  await visit(root, '')
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))
}

export async function exists(p: string): Promise<boolean> {
  try {
    await stat(p)
    return true
  } catch {
    return false
  }
}
