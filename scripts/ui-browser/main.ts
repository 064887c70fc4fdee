import path from 'node:path'
import { createInterface } from 'node:readline/promises'
import { parseArgs } from 'node:util'
import { startHarness } from '../../e2e/harness'
import { defaultDataDir, defaultModelsDir } from '../../src/engine/paths'

/**
 * `npm run ui:browser -- [--data <dir>] [--models <dir>]`: Docent's UI without Electron. The built
 * renderer (out/renderer; run `npm run build` first) opens in Debian's Chromium (CHROMIUM_PATH
 * elsewhere) and talks to the real engine on the same data and models folders the app and the CLI
 * use, through the browser e2e harness (e2e/harness): the same contract and dispatch as the app,
 * with Playwright bindings in place of the preload and the IPC relay. "Add folder" asks for the
 * folder's path here in the terminal. `--headless --check` opens the UI, waits for it to show the
 * library, and exits (the e2e test of this script).
 */
const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    models: { type: 'string' },
    headless: { type: 'boolean' },
    check: { type: 'boolean' },
  },
})

const dataDir = path.resolve(values.data ?? defaultDataDir())
const modelsDir = path.resolve(values.models ?? defaultModelsDir())
const terminal = process.stdin.isTTY ? createInterface({ input: process.stdin, output: process.stdout }) : null

const h = await startHarness({
  dataDir,
  modelsDir,
  headed: !values.headless,
  pickFolder: async () => {
    if (!terminal) return null
    const answer = (await terminal.question('Folder to add (its full path; empty to cancel): ')).trim()
    return answer ? path.resolve(answer) : null
  },
}).catch((err: unknown) => {
  process.stderr.write(`ui:browser: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})

let closing = false
const stop = async (code = 0): Promise<never> => {
  if (!closing) {
    closing = true
    terminal?.close()
    await h.close()
  }
  process.exit(code)
}

process.stdout.write(
  `Docent's UI is open in Chromium (${h.url}), on the library in ${dataDir} with the models in ${modelsDir}.\n` +
    'Close the window or press Ctrl+C to stop.\n',
)
if (values.check) {
  // A new library welcomes; one with collections lists them.
  const welcome = h.page.getByRole('heading', { name: 'Welcome to Docent' })
  await welcome
    .or(h.page.getByRole('heading', { name: 'Library' }))
    .first()
    .waitFor({ timeout: 60_000 })
  const errors = h.pageErrors.filter((e) => !/favicon/.test(e))
  process.stdout.write(errors.length ? `page errors: ${errors.join(' | ')}\n` : 'the library is on screen\n')
  await stop(errors.length ? 1 : 0)
}
process.on('SIGINT', () => void stop(0))
h.browser.on('disconnected', () => void stop(0))
