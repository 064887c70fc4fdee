import type { HostDeps } from '../context'
import type { HandlerMap } from '../types'

export type JobsHandlers = HandlerMap<'jobs.cancel'>

export function jobsHandlers({ jobs }: HostDeps): JobsHandlers {
  return {
    // The job still sends its final event (import.done / models.done) once it has stopped.
    'jobs.cancel': async ({ jobId }) => {
      const job = jobs.get(jobId)
      if (!job) return { cancelled: false }
      job.controller.abort()
      return { cancelled: true }
    },
  }
}
