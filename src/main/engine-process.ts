import { utilityProcess } from 'electron'
import type { EngineProcess, EngineProcessListeners, SpawnEngine } from '../engine/host/client'

/**
 * The engine process in the app: an Electron utility process (a Node environment without a window,
 * sandboxed from the renderer), so a crash or an out-of-memory in a native model takes down only
 * the engine, never the window. The client restarts it on the next request.
 */
export function utilityEngineSpawner(entry: string, args: string[]): SpawnEngine {
  return (listeners: EngineProcessListeners): EngineProcess => {
    const child = utilityProcess.fork(entry, args, { serviceName: 'Docent engine', stdio: 'inherit' })
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
