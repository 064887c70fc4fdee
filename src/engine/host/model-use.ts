import { errorMessage } from '../../shared/errors'
import type { ModelRole } from '../../shared/models'
import type { Engine } from '../engine'

/**
 * Models change under a running engine (download, import, new active model). Loaded ones are
 * swapped only when nothing is using them: imports, questions and searches in flight.
 */
export class ModelUse {
  private readonly stale = new Set<ModelRole>()
  private users = 0

  constructor(private readonly engine: Engine) {}

  /** Runs work that uses the loaded models; a reload waits until no such work is left. */
  async using<T>(fn: () => Promise<T>): Promise<T> {
    this.users++
    try {
      return await fn()
    } finally {
      this.users--
      await this.reloadIfIdle().catch((err: unknown) => console.error(`[engine-host] model reload: ${errorMessage(err)}`))
    }
  }

  /** The model in use for a role changed on disk: reload it now if idle, else when the last user ends. */
  changed(role: ModelRole): Promise<void> {
    this.stale.add(role)
    return this.reloadIfIdle()
  }

  private async reloadIfIdle(): Promise<void> {
    if (this.users > 0 || this.stale.size === 0) return
    const roles = [...this.stale]
    this.stale.clear()
    await this.engine.reloadModels(roles)
  }
}
