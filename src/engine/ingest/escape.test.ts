import { lstatSync, rmSync, symlinkSync } from 'node:fs'
import { lstat, mkdir, realpath, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import type { WatchEvent } from '../watch/collection-watcher'
import type { ImportReport } from './importer'
import { readInsideRoot } from './sync/parse'
import { OUTSIDE_LINK_REASON } from './walk'

/**
 * Symbolic links leading out of an imported folder (git clone makes them; a synced folder may hold
 * one to a credentials file) are never read nor watched; links inside the folder still work. Each
 * test first proves the link is really there and really leads outside, then that nothing of the
 * secret can be found.
 */

const SECRET = 'zanzibarquokka'

describe('links leading outside the imported folder', () => {
  let root: string
  let outside: string
  let engine: Engine
  let report: ImportReport
  const cleanups: (() => Promise<void>)[] = []

  /** The link exists as a link (lstat) and its real target lies outside the root. */
  const expectOutsideLink = async (rel: string) => {
    const st = await lstat(path.join(root, rel))
    expect(st.isSymbolicLink()).toBe(true)
    const target = await realpath(path.join(root, rel))
    expect(path.relative(await realpath(root), target).startsWith('..')).toBe(true)
  }
  const secretHits = async () => (await engine.search(SECRET, { mode: 'keyword', k: 20 })).results
  const skippedReason = (r: ImportReport, p: string) => r.skipped_files.find((s) => s.path === p)?.reason
  const failedReason = (r: ImportReport, p: string) => r.failed.find((s) => s.path === p)?.reason

  beforeAll(async () => {
    const a = await tempDir()
    const b = await tempDir()
    const d = await tempDir()
    cleanups.push(a.cleanup, b.cleanup, d.cleanup)
    root = a.dir
    outside = b.dir
    await writeFile(path.join(outside, 'credentials.txt'), `aws_secret_access_key = ${SECRET}\n`)
    await mkdir(path.join(outside, 'keys'))
    await writeFile(path.join(outside, 'keys', 'id.md'), `# Key\n\nThe private key is ${SECRET}.\n`)
    await mkdir(path.join(root, 'guide'))
    await writeFile(path.join(root, 'guide', 'intro.md'), '# Intro\n\nThe walrus manual starts here.\n')
    await writeFile(path.join(root, 'swap.md'), '# Swap\n\nAn ordinary page about otters.\n')
    await symlink(path.join(outside, 'credentials.txt'), path.join(root, 'notes.txt'))
    await symlink(path.join(outside, 'keys'), path.join(root, 'linked-keys'))
    // A link inside the folder, to a file inside it: still imported.
    await symlink(path.join(root, 'guide', 'intro.md'), path.join(root, 'intro-link.md'))
    engine = await Engine.open({ dataDir: d.dir, modelsDir: path.join(d.dir, 'none') })
    report = await engine.importFolder(root, { collection: 'docs' })
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('skips a link to a file outside, with the reason', async () => {
    await expectOutsideLink('notes.txt')
    expect(skippedReason(report, 'notes.txt')).toBe(OUTSIDE_LINK_REASON)
    expect(await secretHits()).toEqual([])
  })

  it('skips a link to a folder outside, without entering it', async () => {
    await expectOutsideLink('linked-keys')
    expect(skippedReason(report, 'linked-keys')).toBe(OUTSIDE_LINK_REASON)
    expect(report.skipped_files.some((s) => s.path.startsWith('linked-keys/'))).toBe(false)
    const { rows } = await engine.db.query<{ path: string }>('SELECT path FROM documents ORDER BY path')
    expect(rows.map((r) => r.path)).toEqual(['guide/intro.md', 'intro-link.md', 'swap.md'])
  })

  it('still imports a link that stays inside the folder', async () => {
    expect((await lstat(path.join(root, 'intro-link.md'))).isSymbolicLink()).toBe(true)
    const hits = await engine.search('walrus', { mode: 'keyword', k: 10 })
    // The link and its target read the same word for word: one result that names the other (retrieve/same-text.ts).
    const found = hits.results.flatMap((h) => [h.path, ...(h.same_in ?? []).map((s) => s.path)])
    expect(found.sort()).toEqual(['guide/intro.md', 'intro-link.md'])
  })

  it('checks again when reading: a file swapped for an outside link after the walk is refused', async () => {
    const swap = path.join(root, 'swap.md')
    let swapped = false
    const r = await engine.importFolder(root, {
      collection: 'swapped',
      // The walk is over once the import phase starts; the swap happens before any file is read.
      onProgress: (p) => {
        if (p.phase !== 'importing' || swapped) return
        rmSync(swap)
        symlinkSync(path.join(outside, 'credentials.txt'), swap)
        swapped = true
      },
    })
    // The fault happened: the walk listed swap.md as a regular file, and it is now an outside link.
    expect(swapped).toBe(true)
    expect(lstatSync(swap).isSymbolicLink()).toBe(true)
    await expectOutsideLink('swap.md')
    expect(failedReason(r, 'swap.md')).toBe(OUTSIDE_LINK_REASON)
    expect(await secretHits()).toEqual([])
    // The reader itself, directly: the same refusal.
    await expect(readInsideRoot(await realpath(root), swap, 1024)).rejects.toThrow(OUTSIDE_LINK_REASON)
  })

  it('refuses a file over the cap at read time, whatever the walk saw', async () => {
    const file = path.join(root, 'guide', 'intro.md')
    await expect(readInsideRoot(await realpath(root), file, 10)).rejects.toThrow(/larger than/)
    expect((await readInsideRoot(await realpath(root), file, 1024)).byteLength).toBeGreaterThan(10)
  })

  it('the watcher neither follows nor imports a link leading outside', async () => {
    const events: WatchEvent[] = []
    const w = await engine.watch('docs', { catchUp: false, quietMs: 100, maxWaitMs: 500, onEvent: (e) => events.push(e) })
    try {
      await symlink(path.join(outside, 'keys'), path.join(root, 'new-keys'))
      await symlink(path.join(outside, 'credentials.txt'), path.join(root, 'new-notes.md'))
      await writeFile(path.join(root, 'marker.md'), '# Marker\n\nA page about pelicans.\n')
      // The marker makes the change set observable: once it is searchable, the links were synced too.
      await waitFor(async () => (await engine.search('pelicans', { mode: 'keyword', k: 5 })).results.length > 0)
      await w.idle()
      await expectOutsideLink('new-keys')
      await expectOutsideLink('new-notes.md')
      expect(await secretHits()).toEqual([])
      // A change to the target is not watched: no sync follows it.
      const before = events.length
      await writeFile(path.join(outside, 'keys', 'id.md'), `# Key\n\nRotated: ${SECRET} two.\n`)
      await writeFile(path.join(outside, 'credentials.txt'), `rotated ${SECRET}\n`)
      await new Promise((r) => setTimeout(r, 1200))
      await w.idle()
      expect(events.slice(before).filter((e) => e.type === 'sync-started')).toEqual([])
      expect(await secretHits()).toEqual([])
      const synced = events.flatMap((e) => (e.type === 'sync-finished' ? e.changes.map((c) => c.path) : []))
      expect(synced).toContain('marker.md')
      expect(synced.some((p) => p.startsWith('new-keys') || p === 'new-notes.md')).toBe(false)
      // A full sync of the folder as it is now gives the reason for both links.
      const full = await engine.importFolder(root, { collection: 'docs' })
      expect(skippedReason(full, 'new-keys')).toBe(OUTSIDE_LINK_REASON)
      expect(skippedReason(full, 'new-notes.md')).toBe(OUTSIDE_LINK_REASON)
    } finally {
      await w.stop()
    }
  })
})

async function waitFor(pred: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 50))
  }
}
