import { utilityProcess } from 'electron'
import type { EngineProcess, EngineProcessListeners, SpawnEngine } from '../engine/host/client'
import type { EngineLaunch } from './location-setting'

/**
 * The engine process in the app: an Electron utility process (a Node environment without a window,
 * sandboxed from the renderer), so a crash or an out-of-memory in a native model takes down only
 * the engine, never the window. The client restarts it on the next request. `launch` is asked at
 * every start, so a process started after the library moved opens the new location; its `env`
 * (a server's password as PGPASSWORD) goes into the child's environment only, never its arguments.
 */
export function utilityEngineSpawner(entry: string, args: string[], launch: () => EngineLaunch): SpawnEngine {
  return (listeners: EngineProcessListeners): EngineProcess => {
    const extra = launch()
    const child = utilityProcess.fork(entry, [...args, ...extra.args], {
      serviceName: 'Docent engine',
      stdio: 'inherit',
      env: { ...process.env, ...extra.env },
    })
    let gone = false
    child.on('message', (m: unknown) => listeners.onMessage(m))
    child.on('exit', (code: number) => {
      if (gone) return
      gone = true
      listeners.onExit(`exit code ${code}`)
    })
    return {
      get pid() {
        return child.pid
      },
      postMessage: (m) => child.postMessage(m),
      kill: () => {
        child.kill()
      },
    }
  }
}
