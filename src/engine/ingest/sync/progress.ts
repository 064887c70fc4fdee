import type { FileProgress, ImportProgress } from '../../../shared/api'

/** Progress events are sent at most this often, unless forced (phase changes). */
const EMIT_EVERY_MS = 100
/**
 * A file of at least this many pages is long: each tenth of it parsed is always reported (not
 * only when the time since the last event allows), so its progress shows whatever the speed.
 */
export const LONG_FILE_PAGES = 100

/**
 * An import's progress: the stages bump the counters of `state`; emit() sends a snapshot,
 * throttled, with the elapsed time and the estimate of the time left filled in.
 */
export class ProgressReporter {
  readonly state: ImportProgress
  private lastEmit = 0
  // The rate counts only documents read since the import phase began (see ImportProgress.etaMs).
  private workStarted = 0
  private bytesWorked = 0

  constructor(
    collection: string,
    private readonly started: number,
    private readonly onProgress: ((p: ImportProgress) => void) | undefined,
  ) {
    this.state = {
      phase: 'scanning',
      collection,
      filesTotal: 0,
      filesDone: 0,
      currentFile: null,
      fileProgress: null,
      imported: 0,
      unchanged: 0,
      failed: 0,
      skipped: 0,
      chunksWritten: 0,
      textsEmbedded: 0,
      bytesTotal: 0,
      bytesDone: 0,
      elapsedMs: 0,
      etaMs: null,
    }
  }

  /** The import phase begins: the rate clock starts now. */
  startWork(): void {
    this.workStarted = Date.now()
  }

  /** A document of this size was read (unchanged ones skipped by size and time are not). */
  worked(bytes: number): void {
    this.bytesWorked += bytes
  }

  /** A file is finished, whatever became of it. */
  fileDone(bytes: number): void {
    this.state.filesDone++
    this.state.bytesDone += bytes
    this.state.fileProgress = null
  }

  /** How far the current file is (its pages parsed). */
  fileProgress(p: FileProgress): void {
    const before = this.state.fileProgress
    this.state.fileProgress = { ...p }
    const tenth = (n: number) => Math.floor((10 * n) / p.total)
    const crossed =
      p.total >= LONG_FILE_PAGES &&
      (before?.stage !== p.stage || before.total !== p.total || tenth(before.done) !== tenth(p.done))
    this.emit(crossed)
  }

  emit(force = false): void {
    const now = Date.now()
    if (!force && now - this.lastEmit < EMIT_EVERY_MS) return
    this.lastEmit = now
    const p = this.state
    p.elapsedMs = now - this.started
    const rate = this.bytesWorked / Math.max(1, now - this.workStarted)
    p.etaMs = p.phase === 'done' ? 0 : this.bytesWorked > 0 && rate > 0 ? Math.round((p.bytesTotal - p.bytesDone) / rate) : null
    this.onProgress?.({ ...p })
  }
}
