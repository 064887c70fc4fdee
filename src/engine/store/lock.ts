import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/**
 * One owner per data folder. PGlite has no lock of its own: two processes that open one folder
 * overwrite each other's pages (measured: an import aborted inside the WASM and a document another
 * process had just written went missing). The owner holds `<data>/docent.lock`, created with
 * O_EXCL, mode 0600, naming its process id and the OS's record of when that process started.
 *
 * A lock outlives a crash; the next opener finds it stale when its process is gone (or a zombie),
 * or when that process id now belongs to a process that started at another time (a reused pid),
 * and takes it over (removeStale: one remover at a time, and only the lock it read), then creates
 * its own. Releasing removes the file only if it is still ours. The lock also carries the owner's socket and a token a client must present there
 * (host/socket.ts): reading the token needs the same user's permissions on the 0700 folder.
 */

export const LOCK_FILE = 'docent.lock'

/** Who owns a folder: the app's engine process, `docent watch`, `docent mcp`, another CLI command, or a bare Engine (tests, evals). */
export type OwnerRole = 'app' | 'watch' | 'mcp' | 'cli' | 'engine'

export interface LockInfo {
  pid: number
  /** The OS's record of the process's start (Linux: start ticks in /proc; macOS: `ps` lstart); null where unknown. */
  start: string | null
  /** Wall-clock start of the process, ms since the epoch (Windows compares this with the process's StartTime). */
  started: number
  host: string
  role: OwnerRole
  /** Where the owner serves the host protocol; null when it serves no other process. */
  socket: string | null
  /** What a client presents on the socket before anything else. */
  token: string
  since: string
}

export interface OwnerLock {
  readonly info: LockInfo
  readonly file: string
  /** Removes the lock file if it is still this one. */
  release(): void
}

const ROLE_NAMES: Record<OwnerRole, string> = {
  app: 'the Docent app',
  watch: '`docent watch`',
  mcp: '`docent mcp`',
  cli: 'a `docent` command',
  engine: 'another Docent process',
}

export function describeOwner(info: LockInfo): string {
  return `${ROLE_NAMES[info.role] ?? 'another Docent process'} (pid ${info.pid})`
}

/** Thrown when a live process owns the folder and this one cannot attach to it. */
export class LibraryInUseError extends Error {
  override readonly name = 'LibraryInUseError'
  readonly code = 'library_in_use'
  constructor(
    message: string,
    readonly holder: LockInfo,
  ) {
    super(message)
  }
}

/** The OS's record of when a process started, comparable between two reads; null when it cannot be read. */
export function processStart(pid: number): string | null {
  try {
    if (process.platform === 'linux') {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      // Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime field 22.
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
    }
    if (process.platform === 'darwin' || process.platform === 'freebsd' || process.platform === 'openbsd') {
      return execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', timeout: 5_000 }).trim() || null
    }
  } catch {
    // Gone, or no permission: the caller decides by the process id alone.
  }
  return null
}

/** Windows: the process's StartTime in ms since the epoch (PowerShell; only asked about a lock that looks alive). */
function windowsStartMs(pid: number): number | null {
  try {
    const out = execFileSync(
      'powershell.exe',
      ['-NoProfile', '-NonInteractive', '-Command', `(Get-Process -Id ${pid}).StartTime.ToUniversalTime().ToString('o')`],
      { encoding: 'utf8', timeout: 10_000, windowsHide: true },
    ).trim()
    const ms = Date.parse(out)
    return Number.isFinite(ms) ? ms : null
  } catch {
    return null
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      // A zombie (killed, not yet reaped) answers kill(0) but holds nothing.
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      if (state === 'Z' || state === 'X') return false
    } catch {
      return false
    }
  }
  return true
}

/** True when the process that wrote this lock is gone, or its pid now names another process. */
export function lockIsStale(info: LockInfo): boolean {
  // Another machine's process (a shared folder) cannot be checked from here: treat it as alive.
  if (info.host !== os.hostname()) return false
  if (!processAlive(info.pid)) return true
  if (process.platform === 'win32') {
    const ms = windowsStartMs(info.pid)
    return ms !== null && Math.abs(ms - info.started) > 10_000
  }
  const now = processStart(info.pid)
  return info.start !== null && now !== null && now !== info.start
}

function readRaw(file: string): string | null {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

function parseLock(raw: string): LockInfo | null {
  try {
    const v: unknown = JSON.parse(raw)
    if (!v || typeof v !== 'object') return null
    const o = v as Record<string, unknown>
    if (typeof o['pid'] !== 'number' || typeof o['token'] !== 'string' || typeof o['host'] !== 'string') return null
    return v as LockInfo
  } catch {
    return null
  }
}

/** The lock in a data folder, or null when there is none (or it cannot be read as one). */
export function readLock(dataDir: string): LockInfo | null {
  const raw = readRaw(path.join(dataDir, LOCK_FILE))
  return raw === null ? null : parseLock(raw)
}

/** The data folder, created if needed and readable only by its owner (POSIX): the socket and the token live in it. */
export function prepareDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  if (process.platform === 'win32') return
  const st = statSync(dataDir)
  if (st.uid === process.getuid?.() && (st.mode & 0o077) !== 0) chmodSync(dataDir, 0o700)
}

const pause = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * Removes a stale lock, but only the one that was read, and only one process at a time: the
 * remover holds `docent.lock.takeover` (O_EXCL, naming itself like a lock) while it checks and
 * unlinks, so a fresh lock another process just created is never removed in its place. A takeover
 * file left by a process that died in those few milliseconds is stale by the same test.
 */
function removeStale(file: string, expected: string, me: LockInfo): void {
  const takeover = `${file}.takeover`
  try {
    writeFileSync(takeover, JSON.stringify(me), { flag: 'wx', mode: 0o600 })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    const raw = readRaw(takeover)
    const holder = raw === null ? null : parseLock(raw)
    const age = Date.now() - (statSync(takeover, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
    if (raw !== null && (holder ? lockIsStale(holder) : age > 5_000)) {
      try {
        unlinkSync(takeover)
      } catch {
        // Someone else cleared it.
      }
    } else pause(20)
    return
  }
  try {
    if (readRaw(file) === expected) unlinkSync(file)
  } finally {
    unlinkSync(takeover)
  }
}

/**
 * Takes the folder's lock, taking over a stale one; answers the holder's LockInfo instead when a
 * live process (this one included) owns the folder.
 */
export function tryAcquireLock(dataDir: string, opts: { role: OwnerRole; socket: string | null }): OwnerLock | LockInfo {
  prepareDataDir(dataDir)
  const file = path.join(dataDir, LOCK_FILE)
  const info: LockInfo = {
    pid: process.pid,
    start: processStart(process.pid),
    started: Math.round(Date.now() - process.uptime() * 1000),
    host: os.hostname(),
    role: opts.role,
    socket: opts.socket,
    token: randomBytes(32).toString('hex'),
    since: new Date().toISOString(),
  }
  const text = JSON.stringify(info)
  for (let attempt = 0; attempt < 250; attempt++) {
    try {
      writeFileSync(file, text, { flag: 'wx', mode: 0o600 })
      return {
        info,
        file,
        release: () => {
          try {
            if (readRaw(file) === text) unlinkSync(file)
          } catch {
            // Already gone: nothing to release.
          }
        },
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const raw = readRaw(file)
    if (raw === null) continue
    const holder = parseLock(raw)
    if (holder === null) {
      // Unreadable: being written this very moment, or left half-written by a crash long ago.
      const age = Date.now() - (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0)
      if (age < 5_000) {
        pause(20)
        continue
      }
    } else if (!lockIsStale(holder)) {
      return holder
    }
    removeStale(file, raw, info)
  }
  throw new Error(`could not take the lock ${file}: it keeps changing; is another Docent starting?`)
}

/** tryAcquireLock that throws LibraryInUseError, with what to do, when a live process owns the folder. */
export function acquireLock(dataDir: string, opts: { role: OwnerRole; socket: string | null }): OwnerLock {
  const got = tryAcquireLock(dataDir, opts)
  if ('release' in got) return got
  if (got.pid === process.pid && got.host === os.hostname())
    throw new LibraryInUseError(`The index at ${dataDir} is already open in this process.`, got)
  throw new LibraryInUseError(
    `The index at ${dataDir} is open in ${describeOwner(got)}. Quit it first, or use the Docent CLI or MCP server, which ` +
      `attach to it (if that process is gone, delete ${path.join(dataDir, LOCK_FILE)}).`,
    got,
  )
}
