import { parseArgs } from 'node:util'
import path from 'node:path'
import { defaultDataDir, defaultModelsDir } from '../engine/paths'
import { serveEngine, type HostPort } from '../engine/host/serve'
import type { FromHost } from '../engine/host/protocol'

/**
 * Entry of the engine's process: `utilityProcess.fork(<out/main/engine-host.js>, args)` in the app
 * (messages over `process.parentPort`), or `child_process.fork` in tests (over `process.send`).
 * Arguments: --data <dir> --models <dir> [--app-version <v>] [--no-watch] (tests that drive imports
 * themselves: no folder watching, no automatic resume); DOCENT_DATA_DIR / DOCENT_MODELS_DIR
 * when absent, then the app's default folders. Protocol: ./protocol.ts.
 */

interface ParentPortLike {
  postMessage(message: unknown): void
  on(event: 'message', listener: (e: { data: unknown }) => void): void
}

function electronParentPort(): ParentPortLike | null {
  const candidate: unknown = Reflect.get(process, 'parentPort')
  return candidate && typeof candidate === 'object' && 'postMessage' in candidate && 'on' in candidate
    ? (candidate as ParentPortLike)
    : null
}

function pickPort(): HostPort {
  const parent = electronParentPort()
  if (parent) {
    return {
      postMessage: (m: FromHost) => parent.postMessage(m),
      onMessage: (listener) => parent.on('message', (e) => listener(e.data)),
    }
  }
  const send = process.send?.bind(process)
  if (send) {
    return {
      postMessage: (m: FromHost) => {
        if (process.connected) send(m)
      },
      onMessage: (listener) => process.on('message', listener),
    }
  }
  throw new Error('engine host: started without a parent port (run it with utilityProcess.fork or child_process.fork)')
}

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    data: { type: 'string' },
    models: { type: 'string' },
    'app-version': { type: 'string' },
    'no-watch': { type: 'boolean' },
  },
  strict: false,
})
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined)

const dataDir = path.resolve(str(values['data']) ?? process.env['DOCENT_DATA_DIR'] ?? defaultDataDir())
const modelsDir = path.resolve(str(values['models']) ?? process.env['DOCENT_MODELS_DIR'] ?? defaultModelsDir())
const appVersion = str(values['app-version'])

const port = pickPort()
// A forked Node child whose parent went away has nobody to answer: stop rather than linger.
process.on('disconnect', () => process.exit(0))

void serveEngine(port, {
  dataDir,
  modelsDir,
  ...(appVersion ? { appVersion } : {}),
  watchFolders: values['no-watch'] !== true,
  exit: (code) => process.exit(code),
})
