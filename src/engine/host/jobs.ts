import { randomUUID } from 'node:crypto'
import { ErrorCode } from './protocol'
import { HostError } from './types'

/**
 * Long-running work the host answers at once with a job id and then reports through events:
 * imports and model downloads. One job per key (collection, model role) at a time.
 */

export interface Job {
  id: string
  kind: 'import' | 'models'
  /** The collection (imports) or model role (downloads) it works on: one job per key at a time. */
  key: string
  /** The folder an import reads. */
  root?: string
  controller: AbortController
  finished: Promise<void>
}

export class JobRegistry {
  private readonly jobs = new Map<string, Job>()

  /** Registers a job for `key`, or refuses with `busy` while one of the same kind runs for it. */
  claim(kind: Job['kind'], key: string): Job {
    for (const j of this.jobs.values()) {
      if (j.kind === kind && j.key === key) {
        throw new HostError(
          kind === 'import' ? `"${key}" is already being imported.` : `A ${key} model is already being downloaded.`,
          ErrorCode.busy,
        )
      }
    }
    const job: Job = {
      id: `${kind === 'import' ? 'imp' : 'mdl'}_${randomUUID()}`,
      kind,
      key,
      controller: new AbortController(),
      finished: Promise.resolve(),
    }
    this.jobs.set(job.id, job)
    return job
  }

  release(job: Job): void {
    this.jobs.delete(job.id)
  }

  get(id: string): Job | undefined {
    return this.jobs.get(id)
  }

  ids(): string[] {
    return [...this.jobs.keys()]
  }

  all(): Job[] {
    return [...this.jobs.values()]
  }

  /** Imports of a collection, queued or running. */
  importsOf(collection: string): Job[] {
    return this.all().filter((j) => j.kind === 'import' && j.key === collection)
  }
}
