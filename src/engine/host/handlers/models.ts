import path from 'node:path'
import type { InvokeOutput } from '../../../shared/api'
import { errorMessage } from '../../../shared/errors'
import type { ModelManager } from '../../models/install'
import type { HostDeps } from '../context'
import { ErrorCode } from '../protocol'
import { HostError, type HandlerMap } from '../types'

export type ModelsHandlers = HandlerMap<'models.status' | 'models.download' | 'models.import' | 'models.setActive'>

/** Per role, the model the engine loads and whether anything stands in the way, in the contract's shape. */
async function modelStatus(models: ModelManager): Promise<InvokeOutput<'models.status'>> {
  return (await models.status()).map((s) => {
    const name = s.inUse
    const model = name === null ? null : (s.models.find((m) => m.name === name) ?? null)
    const problem =
      name !== null
        ? null
        : s.active
          ? `${s.active} is selected but not on disk; download or import it again.`
          : `No ${s.role} model is installed.`
    return {
      role: s.role,
      installed: name !== null,
      active: name,
      name,
      sizeBytes: model?.totalBytes ?? null,
      source: model?.source ?? null,
      problem,
    }
  })
}

export function modelsHandlers({ models, jobs, modelUse, emit }: HostDeps): ModelsHandlers {
  return {
    'models.status': async () => modelStatus(models),

    'models.download': async ({ role }) => {
      const job = jobs.claim('models', role)
      const { signal } = job.controller
      job.finished = (async () => {
        let error: string | null = null
        try {
          await models.download(role, {
            signal,
            onProgress: (p) =>
              emit('models.progress', {
                jobId: job.id,
                role,
                file: p.file,
                bytesDone: p.overallBytesDone,
                bytesTotal: p.overallBytesTotal,
                bytesPerSecond: p.bytesPerSecond,
                etaSeconds: p.etaSeconds,
              }),
          })
          await modelUse.changed(role)
        } catch (err) {
          error = signal.aborted ? 'Download cancelled; it resumes where it stopped next time.' : errorMessage(err)
        } finally {
          jobs.release(job)
          emit('models.done', { jobId: job.id, role, error })
        }
      })()
      return { jobId: job.id }
    },

    'models.import': async ({ path: source, role }) => {
      if (!path.isAbsolute(source)) throw new HostError('The model path must be absolute.', ErrorCode.invalidInput)
      const installed = await models.importFromDisk(source, role)
      const before = (await models.status()).find((s) => s.role === installed.role)
      // The first model of a role becomes the active one; otherwise the person chooses.
      if (!before?.installed) await models.setActive(installed.role, installed.name)
      await modelUse.changed(installed.role)
      const after = (await modelStatus(models)).find((s) => s.role === installed.role)
      if (!after) throw new HostError(`No status for ${installed.role}.`, ErrorCode.failed)
      return after
    },

    'models.setActive': async ({ role, name }) => {
      await models.setActive(role, name)
      await modelUse.changed(role)
      return modelStatus(models)
    },
  }
}
