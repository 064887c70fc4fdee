/**
 * Work that must not overlap (writers on PGlite's one connection, calls on one llama.cpp sequence,
 * writes to the models folder's records) runs through a queue: one task at a time, in the order
 * queued. A task that fails rejects only its own caller; the next one runs all the same.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve()
  private queued = 0

  /** Runs `task` after every task queued before it has settled. */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.queued++
    const settle = async (): Promise<T> => {
      try {
        return await task()
      } finally {
        this.queued--
      }
    }
    const result = this.tail.then(settle)
    this.tail = result.catch(() => undefined)
    return result
  }

  /** True while a task is queued or running. */
  get busy(): boolean {
    return this.queued > 0
  }

  /** Settles once every task queued so far has settled (never rejects). */
  idle(): Promise<void> {
    return this.tail.then(() => undefined)
  }
}
