import { errorMessage } from '../../shared/errors'
import type { Engine } from '../engine'
import type { ImportJobs } from './imports'
import type { Emit } from './types'

/**
 * On start (in the app): finish imports a crash or quit interrupted (each resumes where it
 * stopped), then watch every other collection; a catch-up sync picks up what changed while the app
 * was closed. Never throws: a failure is logged and the app runs unwatched.
 */
export async function resumeAndWatch(engine: Engine, imports: ImportJobs, emit: Emit): Promise<void> {
  try {
    const unfinished = await engine.unfinishedImports()
    const resumed = new Set<string>()
    for (const u of unfinished) {
      // Only what a crash or quit interrupted: an import the person cancelled stays cancelled.
      if (u.state !== 'interrupted' || resumed.has(u.collection)) continue
      resumed.add(u.collection)
      imports.start(u.root, u.collection, undefined)
    }
    for (const c of await engine.catalog.list()) {
      if (resumed.has(c.id)) continue
      await engine
        .watch(c.id, {
          onEvent: (e) => {
            if (e.type === 'sync-finished' && e.added + e.changed + e.removed > 0)
              emit('collections.changed', { collection: c.id })
          },
        })
        .catch((err: unknown) => console.error(`[engine-host] cannot watch ${c.id}: ${errorMessage(err)}`))
    }
  } catch (err) {
    console.error(`[engine-host] start-up sync: ${errorMessage(err)}`)
  }
}
