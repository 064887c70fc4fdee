import type { Result } from '../../shared/api'
import type { EngineHost } from './host'
import { ErrorCode, errorResult } from './protocol'

/**
 * The requests a library that opens in the background is serving (owner.ts for a data folder,
 * open-server.ts for a PostgreSQL server): each waits until the library is open, and is counted
 * while it runs, so that closing waits for it.
 */
export class RequestsInFlight {
  private count = 0

  constructor(
    private readonly opened: Promise<boolean>,
    /** The host once the library is open; null before, or when it failed to open. */
    private readonly host: () => EngineHost | null,
  ) {}

  async serve(method: string, input: unknown): Promise<Result<unknown>> {
    this.count++
    try {
      const host = (await this.opened) ? this.host() : null
      if (!host) return errorResult('The library is closing.', ErrorCode.engineStopped)
      return await host.dispatch(method, input)
    } finally {
      this.count--
    }
  }

  /** True while a request, an import job or a question is running. */
  busy(): boolean {
    return this.count > 0 || (this.host()?.activeWork() ?? 0) > 0
  }
}
