import type { ImportReport } from '../../shared/api'
import { errorMessage } from '../../shared/errors'
import { SerialQueue } from '../core/serial-queue'
import type { Engine } from '../engine'
import { ImportRefusedError } from '../ingest/importer'
import type { JobRegistry } from './jobs'
import type { ModelUse } from './model-use'
import type { Emit } from './types'

/**
 * Imports as jobs: queued one at a time, reported as `import.progress`* then exactly one
 * `import.done`, and followed by a folder watch once they finish (in the app).
 */

const NO_TIMINGS: ImportReport['timings'] = { walk: 0, read: 0, parse: 0, chunk: 0, embed: 0, write: 0 }

function emptyReport(collection: string, root: string, notice: string): ImportReport {
  return {
    collection,
    root,
    files_seen: 0,
    imported: 0,
    unchanged: 0,
    skipped: 0,
    failed: [],
    skipped_files: [],
    pruned: 0,
    chunks_total: 0,
    chunks_written: 0,
    texts_embedded: 0,
    cancelled: true,
    notices: [notice],
    ms: 0,
    timings: { ...NO_TIMINGS },
  }
}

export class ImportJobs {
  // One import at a time: they share the CPU and the embedding model, and PGlite has one connection.
  private readonly queue = new SerialQueue()

  constructor(
    private readonly engine: Engine,
    private readonly jobs: JobRegistry,
    private readonly modelUse: ModelUse,
    private readonly emit: Emit,
    /** Keep imported folders in step by watching them (the app); off in tests that drive imports themselves. */
    private watchFolders: boolean,
  ) {}

  /** From now on, every imported folder is watched (the app attached to an owner that was not watching). */
  followFolders(): void {
    this.watchFolders = true
  }

  /** Queues an import of `folder` into `collection`; the job id answers at once. */
  start(
    folder: string,
    collection: string,
    kinds: Record<string, string> | undefined,
    opts: { allowEmpty?: boolean | undefined } = {},
  ): { jobId: string } {
    const job = this.jobs.claim('import', collection)
    job.root = folder
    const { signal } = job.controller
    const run = async (): Promise<void> => {
      let report: ImportReport | null = null
      let error: string | null = null
      let code: 'would_empty_collection' | undefined
      try {
        report = signal.aborted
          ? emptyReport(collection, folder, 'Import cancelled before it started.')
          : await this.modelUse.using(() =>
              this.engine.importFolder(folder, {
                collection,
                signal,
                onProgress: (p) => this.emit('import.progress', { ...p, jobId: job.id }),
                kinds,
                allowEmpty: opts.allowEmpty,
              }),
            )
      } catch (err) {
        error = errorMessage(err)
        // The one refusal the app asks the person about (then re-syncs with allowEmpty).
        if (err instanceof ImportRefusedError && err.code === 'would_empty_collection') code = err.code
      } finally {
        this.jobs.release(job)
        // The final event, whatever happened above: the renderer waits for exactly this.
        this.emit('import.done', { jobId: job.id, report, error, ...(code ? { code } : {}) })
        if (report && !(report.cancelled && report.imported === 0)) this.emit('collections.changed', { collection })
        if (report && !report.cancelled) void this.follow(collection)
      }
    }
    job.finished = this.queue.run(run)
    return { jobId: job.id }
  }

  /** Watches a collection's folder so edits, additions and deletions reach the index by themselves. */
  async follow(collection: string): Promise<void> {
    if (!this.watchFolders) return
    try {
      await this.engine.watch(collection, {
        catchUp: false,
        onEvent: (e) => {
          if (e.type === 'sync-finished' && e.added + e.changed + e.removed > 0) this.emit('collections.changed', { collection })
          if (e.type === 'sync-failed' || e.type === 'watch-error')
            console.error(`[engine-host] watching ${collection}: ${e.error}`)
        },
      })
    } catch (err) {
      // A folder on a drive that is not connected: the collection stays searchable, unwatched.
      console.error(`[engine-host] cannot watch ${collection}: ${errorMessage(err)}`)
    }
  }
}
