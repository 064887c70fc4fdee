import { stat } from 'node:fs/promises'
import path from 'node:path'
import { errorMessage } from '../../../shared/errors'
import { collectionSlug } from '../../store/ids'
import type { HostDeps } from '../context'
import { ErrorCode } from '../protocol'
import { HostError, type HandlerMap } from '../types'

export type CollectionsHandlers = HandlerMap<
  | 'collections.list'
  | 'collections.import'
  | 'collections.resync'
  | 'collections.remove'
  | 'collections.failures'
  | 'collections.setOcr'
>

export function collectionsHandlers({ engine, jobs, imports, emit }: HostDeps): CollectionsHandlers {
  return {
    'collections.list': async () => engine.catalog.list(),

    'collections.import': async ({ folder, collection, allowEmpty }) => {
      if (!path.isAbsolute(folder)) throw new HostError('The folder must be an absolute path.', ErrorCode.invalidInput)
      const root = path.resolve(folder)
      const st = await stat(root).catch(() => null)
      if (!st?.isDirectory()) throw new HostError(`${root} is not a folder that can be read.`, ErrorCode.notFound)
      let base: string
      try {
        base = collectionSlug(collection ?? path.basename(root))
      } catch (err) {
        throw new HostError(errorMessage(err), ErrorCode.invalidInput)
      }
      // Importing a folder into a collection that came from another folder would replace (prune)
      // its documents. A chosen name must be free or the same folder; a derived one gets a suffix.
      let id = base
      for (let n = 2; ; n++) {
        const existing = await engine.catalog.root(id)
        // A queued import has not written its collection row yet: it holds the name too.
        const holder = existing?.root ?? jobs.importsOf(id)[0]?.root
        if (holder === undefined || path.resolve(holder) === root) return imports.start(root, id, existing?.kinds, { allowEmpty })
        if (collection !== undefined) {
          // Worded as the engine's own refusal (ImportRefusedError other_folder): every front end says the same.
          throw new HostError(
            `The collection "${id}" holds documents from ${holder}, not ${root}. ` +
              `Import ${root} under another collection name, or remove "${id}" first if it should now come from ${root}.`,
            ErrorCode.conflict,
          )
        }
        id = `${base.slice(0, 60)}-${n}`
      }
    },

    'collections.resync': async ({ collection, allowEmpty }) => {
      const existing = await engine.catalog.root(collection)
      if (!existing) throw new HostError(`There is no collection "${collection}".`, ErrorCode.notFound)
      return imports.start(existing.root, collection, existing.kinds, { allowEmpty })
    },

    'collections.remove': async ({ collection }) => {
      // A running import of this collection would write rows back: stop it and wait for its end first.
      for (const j of jobs.importsOf(collection)) {
        j.controller.abort()
        await j.finished
      }
      const removed = await engine.removeCollection(collection)
      if (removed) emit('collections.changed', { collection })
      return { removed }
    },

    'collections.failures': async ({ collection }) => engine.catalog.failed(collection),

    'collections.setOcr': async ({ collection, on }) => {
      const changed = await engine.catalog.setOcr(collection, on)
      if (!changed) throw new HostError(`There is no collection "${collection}".`, ErrorCode.notFound)
      emit('collections.changed', { collection })
      return { changed }
    },
  }
}
