import { fork } from 'node:child_process'
import type { EngineProcess, EngineProcessListeners, SpawnEngine } from './client'

/**
 * The engine process as a plain Node child (`child_process.fork`), speaking the same protocol as
 * the utility process: for tests and for running the host outside Electron. `serialization:
 * 'advanced'` gives the structured clone Electron's message ports use.
 */
export function nodeEngineSpawner(
  entry: string,
  args: string[],
  opts: { execArgv?: string[]; env?: NodeJS.ProcessEnv } = {},
): SpawnEngine {
  return (listeners: EngineProcessListeners): EngineProcess => {
    const child = fork(entry, args, {
      execArgv: opts.execArgv ?? [],
      env: opts.env ?? process.env,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    let gone = false
    const exit = (detail: string): void => {
      if (gone) return
      gone = true
      listeners.onExit(detail)
    }
    child.on('message', (m) => listeners.onMessage(m))
    child.on('exit', (code, signal) => exit(signal ? `killed by ${signal}` : `exit code ${code}`))
    child.on('error', (err) => {
      // A child that never started emits 'error' without 'exit'.
      if (child.pid === undefined || child.exitCode !== null) exit(`could not start: ${err.message}`)
    })
    return {
      get pid() {
        return child.pid
      },
      postMessage: (m) => {
        if (child.connected) child.send(m)
      },
      kill: () => {
        child.kill()
      },
    }
  }
}
