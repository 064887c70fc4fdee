import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import path from 'node:path'
import { defaultDataDir, defaultModelsDir } from '../engine/paths'
import { serveEngine, type HostPort } from '../engine/host/serve'
import { chooseDownloadFetch, type DownloadFetch } from '../engine/models/install'

/**
 * Entry of the engine's process: `utilityProcess.fork(<out/main/engine-host.js>, args)` in the app
 * (messages over `process.parentPort`), or `child_process.fork` in tests (over `process.send`).
 * Arguments: --data <dir> --models <dir> [--app-version <v>] [--no-watch] (tests that drive imports
 * themselves: no folder watching, no automatic resume); DOCENT_DATA_DIR / DOCENT_MODELS_DIR
 * when absent, then the app's default folders. `--database <postgres://…>` (a URL without its
 * password; the app's "Library location" setting) opens a library on a PostgreSQL server instead of
 * the data folder, with the password from PGPASSWORD, which main sets in this process's environment
 * only (never in arguments, which other users can read). Protocol: ./protocol.ts.
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
      postMessage: (m) => parent.postMessage(m),
      onMessage: (listener) => parent.on('message', (e) => listener(e.data)),
    }
  }
  const send = process.send?.bind(process)
  if (send) {
    return {
      postMessage: (m) => {
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
    database: { type: 'string' },
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
const database = str(values['database'])

/**
 * Electron's `net` inside the utility process, so model downloads follow the system's proxy settings.
 * Only src/main and src/preload import Electron statically (the layers lint); the engine's process is
 * the one exception, and it loads `net` at run time, only when chooseDownloadFetch has seen that this
 * is an Electron utility process. Main cannot hand a function across the process boundary, and the
 * alternative, main proxying every download over the message port, would move 2 GB streams through
 * Electron's main process. In plain Node (tests, the CLI's host) this is never called.
 */
function loadElectronNet(): { fetch: DownloadFetch } {
  const electron: unknown = createRequire(import.meta.url)('electron')
  const net: unknown = electron !== null && typeof electron === 'object' ? Reflect.get(electron, 'net') : undefined
  const fetchFn: unknown = net !== null && typeof net === 'object' ? Reflect.get(net, 'fetch') : undefined
  if (!isDownloadFetch(fetchFn)) throw new Error('engine host: Electron exposes no net.fetch in this process')
  return { fetch: (url, init) => fetchFn.call(net, url, init) }
}

function isDownloadFetch(v: unknown): v is DownloadFetch {
  return typeof v === 'function'
}

const download = chooseDownloadFetch({
  electronVersion: process.versions['electron'],
  processType: Reflect.get(process, 'type'),
  loadElectronNet,
})

const port = pickPort()
// A forked Node child whose parent went away has nobody to answer: stop rather than linger.
process.on('disconnect', () => process.exit(0))

void serveEngine(port, {
  dataDir,
  ...(database ? { database } : {}),
  modelsDir,
  ...(appVersion ? { appVersion } : {}),
  watchFolders: values['no-watch'] !== true,
  downloadFetch: download.fetch,
  exit: (code) => process.exit(code),
})
