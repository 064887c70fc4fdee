export interface DownloadProgress {
  /** Label of the file (its path inside the model by default). */
  file: string
  /** Bytes of this file on disk so far, including bytes from an earlier, resumed attempt. */
  bytesDone: number
  /** Size of the file, or null while unknown. */
  bytesTotal: number | null
  /** Transfer rate over the last few seconds (0 until measurable). */
  bytesPerSecond: number
  /** Seconds left at the current rate, or null when the rate or total is unknown. */
  etaSeconds: number | null
}

/** Rate over a sliding window, throttled emission, and a listener that cannot break the download. */
export class ProgressMeter {
  private samples: { t: number; bytes: number }[] = []
  private lastEmit = 0
  private lastEmittedBytes = -1
  private total: number | null = null
  private current = 0

  constructor(
    private readonly file: string,
    private readonly intervalMs: number,
    private readonly listener?: (p: DownloadProgress) => void,
  ) {}

  start(bytes: number, total: number | null): void {
    this.total = total
    this.current = bytes
    this.samples = [{ t: performance.now(), bytes }]
    this.emit()
  }

  setTotal(total: number | null): void {
    this.total = total
  }

  update(bytes: number): void {
    const t = performance.now()
    if (bytes < this.current) this.samples = [] // restarted from 0
    this.current = bytes
    this.samples.push({ t, bytes })
    while (this.samples.length > 2 && t - (this.samples[0]?.t ?? t) > 5000) this.samples.shift()
    if (t - this.lastEmit >= this.intervalMs) this.emit()
  }

  finish(bytes: number): void {
    this.current = bytes
    if (this.total === null) this.total = bytes
    this.emit()
  }

  private rate(): number {
    const first = this.samples[0]
    const last = this.samples[this.samples.length - 1]
    if (!first || !last || last.t - first.t < 50) return 0
    return ((last.bytes - first.bytes) * 1000) / (last.t - first.t)
  }

  /** Emits unless nothing changed since the last event (so bytesDone strictly increases between events). */
  private emit(): void {
    if (!this.listener) return
    if (this.current === this.lastEmittedBytes) return
    this.lastEmit = performance.now()
    this.lastEmittedBytes = this.current
    const bytesPerSecond = this.rate()
    const etaSeconds =
      this.total !== null && bytesPerSecond > 0 ? Math.max(0, (this.total - this.current) / bytesPerSecond) : null
    try {
      this.listener({
        file: this.file,
        bytesDone: this.current,
        bytesTotal: this.total,
        bytesPerSecond,
        etaSeconds: this.current === this.total ? 0 : etaSeconds,
      })
    } catch {
      // A failing progress listener must not fail the download.
    }
  }
}
