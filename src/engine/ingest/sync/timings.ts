/** The stages an import's time is reported for (the report's `timings`, in ms). */
export type Stage = 'walk' | 'read' | 'parse' | 'chunk' | 'embed' | 'write'
export type StageTimes = Record<Stage, number>

/** Sums the time spent in each stage over a whole import. */
export class StageTimer {
  private readonly totals: StageTimes = { walk: 0, read: 0, parse: 0, chunk: 0, embed: 0, write: 0 }

  async time<T>(stage: Stage, fn: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now()
    try {
      return await fn()
    } finally {
      this.totals[stage] += performance.now() - t0
    }
  }

  add(stage: Stage, ms: number): void {
    this.totals[stage] += ms
  }

  /** Whole milliseconds: sub-millisecond precision is noise in a report read by people. */
  rounded(): StageTimes {
    const t = this.totals
    return {
      walk: Math.round(t.walk),
      read: Math.round(t.read),
      parse: Math.round(t.parse),
      chunk: Math.round(t.chunk),
      embed: Math.round(t.embed),
      write: Math.round(t.write),
    }
  }
}
