import path from 'node:path'
import type { EventName, EventPayload } from '../shared/api'
import { EngineClient } from '../engine/host/client'
import { nodeEngineSpawner } from '../engine/host/node-spawner'
import { repoRoot } from './paths'

/**
 * The real engine host (src/apps/engine-host.ts) in a Node child process behind the
 * app's own EngineClient: what Electron's utilityProcess runs, minus Electron.
 */
export type Seen = { event: EventName; payload: unknown }

export function eventRecorder() {
  const seen: Seen[] = []
  const waiters: { test: (s: Seen) => boolean; resolve: (s: Seen) => void }[] = []
  const onEvent = <E extends EventName>(event: E, payload: EventPayload<E>): void => {
    const s = { event, payload }
    seen.push(s)
    for (const w of [...waiters]) {
      if (w.test(s)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(s)
      }
    }
  }
  const waitFor = (test: (s: Seen) => boolean, timeoutMs = 120_000): Promise<Seen> => {
    const hit = seen.find(test)
    if (hit) return Promise.resolve(hit)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('event did not arrive')), timeoutMs)
      waiters.push({ test, resolve: (s) => (clearTimeout(timer), resolve(s)) })
    })
  }
  return { seen, onEvent, waitFor }
}

/** `watch: false` (the default here) for tests that drive imports themselves; true behaves as the app does. */
export function realEngineClient(dataDir: string, modelsDir: string, opts: { watch?: boolean } = {}) {
  const rec = eventRecorder()
  const client = new EngineClient({
    spawn: nodeEngineSpawner(
      path.join(repoRoot, 'src/apps/engine-host.ts'),
      ['--data', dataDir, '--models', modelsDir, '--app-version', 'test', ...(opts.watch ? [] : ['--no-watch'])],
      { execArgv: ['--import', 'tsx'] },
    ),
    onEvent: rec.onEvent,
    log: () => {},
  })
  return { client, rec }
}

/**
 * How the client reports a job whose engine process was SIGKILLed (node-spawner's exit detail in
 * the job's final error): a fault test checks for it to know its kill landed while the job ran.
 */
export const KILLED_BY_SIGKILL = /killed by SIGKILL/

/** SIGKILLs the engine process behind `client`; throws when there is no process to kill. */
export function killEngine(client: { readonly pid: number | undefined }): void {
  const pid = client.pid
  if (pid === undefined) throw new Error('no engine process to kill')
  if (!process.kill(pid, 'SIGKILL')) throw new Error(`could not SIGKILL the engine process ${pid}`)
}
