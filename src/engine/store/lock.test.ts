import { spawn, type ChildProcess } from 'node:child_process'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-support/paths'
import { Engine } from '../engine'
import {
  acquireLock,
  LibraryInUseError,
  LOCK_FILE,
  lockIsStale,
  processStart,
  readLock,
  tryAcquireLock,
  type LockInfo,
} from './lock'

/**
 * The data folder's lock: one owner, a clear refusal for a second opener, and a stale lock (its
 * process gone, or its pid now another process's) taken over. Real processes, real files.
 */

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c()
})
async function folder(): Promise<string> {
  const t = await tempDir('docent-lock-')
  cleanups.push(t.cleanup)
  return path.join(t.dir, 'index')
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())))
}

/** A lock as another process would have written it. */
async function writeForeignLock(dataDir: string, over: Partial<LockInfo>): Promise<LockInfo> {
  const info: LockInfo = {
    pid: 1,
    start: null,
    started: Date.now(),
    host: (await import('node:os')).hostname(),
    role: 'mcp',
    socket: null,
    token: 'x'.repeat(64),
    since: new Date().toISOString(),
    ...over,
  }
  await mkdir(dataDir, { recursive: true })
  await writeFile(path.join(dataDir, LOCK_FILE), JSON.stringify(info), { mode: 0o600 })
  return info
}

describe('data folder lock', () => {
  it('is private (0600 in a 0700 folder), refuses a second opener by name, and goes with its owner', async () => {
    const dir = await folder()
    await mkdir(dir, { mode: 0o755 })
    await chmod(dir, 0o755)
    const lock = acquireLock(dir, { role: 'watch', socket: null })
    expect((await stat(path.join(dir, LOCK_FILE))).mode & 0o777).toBe(0o600)
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
    expect(readLock(dir)).toMatchObject({ pid: process.pid, role: 'watch', start: processStart(process.pid) })
    const second = tryAcquireLock(dir, { role: 'cli', socket: null })
    expect('release' in second).toBe(false)
    expect(() => acquireLock(dir, { role: 'cli', socket: null })).toThrow(LibraryInUseError)
    lock.release()
    expect(readLock(dir)).toBeNull()
  })

  it('a second Engine.open on an open folder gets a clear message, not a database abort', async () => {
    const dir = await folder()
    const engine = await Engine.open({ dataDir: dir, modelsDir: path.join(dir, 'none') })
    try {
      const err = await Engine.open({ dataDir: dir, modelsDir: path.join(dir, 'none') }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(LibraryInUseError)
      expect(String((err as Error).message)).toMatch(/already open in this process/)
    } finally {
      await engine.close()
    }
    // Released on close: the next open works.
    const again = await Engine.open({ dataDir: dir, modelsDir: path.join(dir, 'none') })
    await again.close()
  })

  it('takes over the lock of a process that is gone', async () => {
    const dir = await folder()
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'])
    const pid = child.pid!
    const start = processStart(pid)
    expect(start).not.toBeNull()
    const stale = await writeForeignLock(dir, { pid, start })
    expect(lockIsStale(stale)).toBe(false)
    child.kill('SIGKILL')
    await exited(child)
    // The fault: the lock names a process that no longer runs.
    expect(child.signalCode).toBe('SIGKILL')
    expect(() => process.kill(pid, 0)).toThrow()
    expect(lockIsStale(stale)).toBe(true)
    const lock = acquireLock(dir, { role: 'cli', socket: null })
    expect(readLock(dir)?.pid).toBe(process.pid)
    lock.release()
  })

  it('takes over a lock whose pid now belongs to a process started at another time (a reused pid)', async () => {
    const dir = await folder()
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'])
    cleanups.push(async () => void child.kill('SIGKILL'))
    const pid = child.pid!
    const real = processStart(pid)
    expect(real).not.toBeNull()
    // Same pid, alive, but the lock records another start: the process that wrote it is gone.
    const stale = await writeForeignLock(dir, { pid, start: String(Number(real) - 1000) })
    expect(() => process.kill(pid, 0)).not.toThrow()
    expect(lockIsStale(stale)).toBe(true)
    const lock = acquireLock(dir, { role: 'cli', socket: null })
    expect(readLock(dir)?.pid).toBe(process.pid)
    lock.release()
    // With its real start the same pid holds the folder.
    const live = await writeForeignLock(dir, { pid, start: real })
    expect(tryAcquireLock(dir, { role: 'cli', socket: null })).toMatchObject({ pid: live.pid, start: real })
  })

  it('release leaves another process’s lock alone', async () => {
    const dir = await folder()
    const lock = acquireLock(dir, { role: 'cli', socket: null })
    const theirs = JSON.stringify({ ...lock.info, pid: 1, token: 'y'.repeat(64) })
    await writeFile(path.join(dir, LOCK_FILE), theirs)
    lock.release()
    expect(await readFile(path.join(dir, LOCK_FILE), 'utf8')).toBe(theirs)
  })

  it('six processes taking over one stale lock at the same moment: exactly one wins', async () => {
    const dir = await folder()
    const dead = spawn(process.execPath, ['-e', ''])
    await exited(dead)
    await writeForeignLock(dir, { pid: dead.pid!, start: '1' })
    expect(lockIsStale(readLock(dir)!)).toBe(true)
    const go = path.join(path.dirname(dir), 'go')
    const racers = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'lock-racer.testutil.ts'), dir, go, '3000'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    )
    let goAt = 0
    const lines = racers.map((r) => {
      const got: string[] = []
      let buffer = ''
      const waiters: (() => void)[] = []
      r.stdout!.on('data', (d: Buffer) => {
        buffer += d.toString()
        const parts = buffer.split('\n')
        buffer = parts.pop() ?? ''
        got.push(...parts)
        for (const w of waiters.splice(0)) w()
      })
      const nth = (n: number) =>
        new Promise<string>((resolve, reject) => {
          const check = () => (got.length > n ? resolve(got[n]!) : waiters.push(check))
          r.once('exit', (code) => (got.length > n ? undefined : reject(new Error(`racer exited ${code}`))))
          check()
        })
      return nth
    })
    await Promise.all(lines.map((nth) => nth(0)))
    goAt = Date.now()
    await writeFile(go, '')
    const results = await Promise.all(
      lines.map(async (nth) => ({ ...(JSON.parse(await nth(1)) as { pid: number; won: boolean }), lateMs: Date.now() - goAt })),
    )
    await Promise.all(racers.map(exited))
    // They really raced: every one had tried before the winner let go.
    for (const r of results) expect(r.lateMs).toBeLessThan(3_000)
    expect(results.filter((r) => r.won)).toHaveLength(1)
    expect(readLock(dir)).toBeNull()
  })
})
