import path from 'node:path'
import { watch, type FSWatcher } from 'chokidar'
import { isIgnoredPath } from '../ingest/walk'

/**
 * Watches an imported folder and turns file events into change sets: the relative paths touched
 * since the last set. Events are coalesced until the folder has been quiet for `quietMs`, or at
 * most `maxWaitMs` after the first one, so a `git checkout` that fires thousands of events gives
 * one change set rather than thousands of syncs. One change set is applied at a time; events
 * arriving meanwhile gather into the next.
 *
 * Hidden paths, node_modules, .git and files of a type Docent cannot import are not watched, as
 * a full import would not list them either. Symbolic links are not followed (see start()). Folders added or removed are reported as the folder
 * path: the sync walks it (added) or removes every document under it (removed).
 */

export interface FolderWatcherOptions {
  root: string
  /** Whether a file (relative POSIX path) has a format Docent imports. */
  isSupported(relativePath: string): boolean
  /** Quiet period that ends a burst, ms. */
  quietMs?: number
  /** Longest wait from the first event of a burst to its change set, ms. */
  maxWaitMs?: number
  /**
   * Applies one change set (relative POSIX paths, sorted; `firstEventAt` is when its first event
   * arrived, epoch ms). Errors go to onError; watching goes on.
   */
  onChanges(paths: string[], info: { firstEventAt: number }): Promise<void>
  onError?(err: Error): void
}

export const DEFAULT_QUIET_MS = 300
export const DEFAULT_MAX_WAIT_MS = 3000

export class FolderWatcher {
  private readonly pending = new Set<string>()
  private firstEventAt = 0
  private quietTimer: NodeJS.Timeout | null = null
  private maxTimer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null
  /** A timer fired while a change set was being applied: apply the next one right after. */
  private due = false
  private closed = false
  private idleWaiters: (() => void)[] = []

  private constructor(
    private readonly opts: FolderWatcherOptions,
    private readonly fsw: FSWatcher,
  ) {}

  /** Starts watching; resolves once the initial scan is done and events are being reported. */
  static async start(opts: FolderWatcherOptions): Promise<FolderWatcher> {
    const root = path.resolve(opts.root)
    const rel = (p: string) => path.relative(root, p).split(path.sep).join('/')
    const fsw = watch(root, {
      ignoreInitial: true,
      persistent: true,
      // Links are watched as links, never followed: a link leading outside the folder must not make
      // Docent watch (or later read) what it points to. The sync a link's event starts checks where
      // it leads (walk.ts) and imports it only when that is inside the folder; a file reached through
      // a link inside the folder is watched under its own path.
      followSymlinks: false,
      ignorePermissionErrors: true,
      ignored: (p: string, stats) => {
        const r = rel(p)
        if (!r || r.startsWith('..')) return false
        if (isIgnoredPath(r)) return true
        // Without stats chokidar is asking about a path it has not looked at yet: it may be a folder.
        return !!stats?.isFile() && !opts.isSupported(r)
      },
    })
    const watcher = new FolderWatcher({ ...opts, root }, fsw)
    const note = (p: string) => {
      const r = rel(p)
      if (r && !r.startsWith('..')) watcher.note(r)
    }
    for (const ev of ['add', 'change', 'unlink', 'addDir', 'unlinkDir'] as const) fsw.on(ev, note)
    fsw.on('error', (err) => opts.onError?.(err instanceof Error ? err : new Error(String(err))))
    await new Promise<void>((resolve, reject) => {
      fsw.once('ready', resolve)
      fsw.once('error', reject)
    })
    return watcher
  }

  get root(): string {
    return this.opts.root
  }

  private note(rel: string): void {
    if (this.closed) return
    if (this.pending.size === 0) this.firstEventAt = Date.now()
    this.pending.add(rel)
    if (this.quietTimer) clearTimeout(this.quietTimer)
    this.quietTimer = setTimeout(() => this.fire(), this.opts.quietMs ?? DEFAULT_QUIET_MS)
    this.maxTimer ??= setTimeout(() => this.fire(), this.opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS)
  }

  private clearTimers(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer)
    if (this.maxTimer) clearTimeout(this.maxTimer)
    this.quietTimer = this.maxTimer = null
  }

  private fire(): void {
    this.clearTimers()
    if (this.running) {
      this.due = true
      return
    }
    this.running = this.drain().finally(() => {
      this.running = null
      this.settle()
    })
  }

  private async drain(): Promise<void> {
    do {
      this.due = false
      if (this.pending.size === 0 || this.closed) break
      const batch = [...this.pending].sort()
      const firstEventAt = this.firstEventAt
      this.pending.clear()
      try {
        await this.opts.onChanges(batch, { firstEventAt })
      } catch (err) {
        this.opts.onError?.(err instanceof Error ? err : new Error(String(err)))
      }
    } while (this.due)
  }

  private settle(): void {
    if (this.running || this.quietTimer || this.pending.size > 0) return
    for (const w of this.idleWaiters.splice(0)) w()
  }

  /** Applies what is pending now, without waiting for the quiet period. */
  async flush(): Promise<void> {
    if (this.pending.size > 0) this.fire()
    await this.idle()
  }

  /** Resolves when nothing is pending or being applied. */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve)
      this.settle()
    })
  }

  /** Stops watching. A change set being applied finishes (its caller may cancel it); pending paths are dropped. */
  async close(): Promise<void> {
    this.closed = true
    this.clearTimers()
    this.pending.clear()
    await this.fsw.close()
    await this.running
    this.settle()
  }
}
