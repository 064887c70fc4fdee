import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { _electron, type ElectronApplication } from 'playwright-core'
import type { DocentApi } from '../src/shared/api'
import { repoRoot, tempDir } from '../src/test-support/paths'

/** The page's globals, for callbacks that run inside the page (this file compiles without the DOM lib). */
type InPage = { docent: DocentApi; require?: unknown; process?: unknown }

/**
 * The app itself, in Electron, driven by Playwright. Needs the Electron binary, which CI here does
 * not download (ELECTRON_SKIP_BINARY_DOWNLOAD): then the test is skipped with that reason. The same
 * renderer and engine run in Chromium through e2e/harness everywhere.
 */

function electronBinary(): string | null {
  try {
    // The electron package exports the binary's path, and throws when the binary was not downloaded.
    const p: unknown = createRequire(import.meta.url)('electron')
    return typeof p === 'string' && existsSync(p) ? p : null
  } catch {
    return null
  }
}

const binary = electronBinary()
const built = existsSync(path.join(repoRoot, 'out/main/index.js')) && existsSync(path.join(repoRoot, 'out/renderer/index.html'))
const skipReason = !binary
  ? 'Electron binary not installed (ELECTRON_SKIP_BINARY_DOWNLOAD): skipped'
  : !built
    ? 'App not built (run `npm run build`): skipped'
    : null
if (skipReason) console.warn(`e2e/electron.test.ts: ${skipReason}`)

describe('Electron app', () => {
  let app: ElectronApplication | null = null
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    await app?.close()
    for (const c of cleanups) await c()
  })

  it.skipIf(skipReason !== null)('starts and shows the library, with the preload api and a sandboxed renderer', async () => {
    const home = await tempDir('docent-electron-')
    cleanups.push(home.cleanup)
    app = await _electron.launch({
      executablePath: binary!,
      args: [path.join(repoRoot, 'out/main/index.js')],
      // Its own data folder per test (engine/paths.ts reads DOCENT_HOME).
      env: { ...process.env, DOCENT_HOME: home.dir, ELECTRON_RENDERER_URL: '' },
    })
    const window = await app.firstWindow()
    await window.waitForLoadState('domcontentloaded')
    expect(await window.title()).toBe('Docent')
    await window
      .getByText(/library/i)
      .first()
      .waitFor({ timeout: 30_000 })
    const surface = await window.evaluate(() => ({
      api: Object.keys((globalThis as unknown as InPage).docent).sort(),
      node: typeof (globalThis as unknown as InPage).require,
      process: typeof (globalThis as unknown as InPage).process,
    }))
    expect(surface).toEqual({
      api: ['invoke', 'libraryLocation', 'on', 'openExternal', 'pathForFile', 'pickFolder', 'setLibraryLocation'],
      node: 'undefined',
      process: 'undefined',
    })
    expect(await window.evaluate(() => (globalThis as unknown as InPage).docent.invoke('collections.list', {}))).toEqual({
      ok: true,
      value: [],
    })
  })
})
