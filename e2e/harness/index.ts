import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { EventName, EventPayload, Result } from '../../src/shared/api'
import { Engine } from '../../src/engine/engine'
import type { EngineAskOptions } from '../../src/engine/answer/ask'
import { createEngineHost, type EngineHost } from '../../src/engine/host/host'
import { LocationSettingStore, createLocationRelays } from '../../src/main/location-setting'
import type { LibraryLocationInfo } from '../../src/shared/library'
import { testSecretBox } from '../../src/test-support/secret-box'
import { installDocentStandIn } from './page-api'
import { serveStatic, type StaticServer } from './static-server'

/**
 * Browser e2e harness: the BUILT renderer (out/renderer) in Debian's Chromium, talking to a REAL
 * engine (PGlite in a temp folder, fixture models) through the same contract and the same
 * dispatch the Electron app uses — only the transport differs: Playwright bindings stand in for
 * the preload + IPC relay + utility process. Use it where the Electron binary is not available.
 *
 *   const h = await startHarness()
 *   await h.page.getByText('Library').waitFor()
 *   await h.screenshot('library-empty')
 *   await h.close()
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const fixtureModels = path.join(repoRoot, 'test-fixtures/models')

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface HarnessOptions {
  /** Database folder; a fresh temporary one by default (removed on close). */
  dataDir?: string
  /** Models folder; by default a temporary copy of test-fixtures/models (so tests never write into the fixtures). */
  modelsDir?: string
  /** Built renderer to serve; out/renderer by default (run `npm run build` first). */
  rendererDir?: string
  /** What the folder picker answers (File > Add folder…, the library's "Add folder" button). */
  pickFolder?: () => Promise<string | null> | string | null
  /** File name -> path, what pathForFile answers for dropped folders. */
  dropPaths?: Record<string, string>
  viewport?: { width: number; height: number }
  /** A window a person can use (scripts/ui-browser.ts); headless by default. */
  headed?: boolean
  /**
   * Test only: options given to every question the page asks (engine.ask), e.g. a scripted chat
   * model (`chat`) where the real one is too slow and not deterministic for a UI test, or a
   * stand-in reranker. A test that uses it names the mock it passes.
   */
  askWith?: Pick<EngineAskOptions, 'chat' | 'reranker' | 'useCache' | 'mode'>
}

export interface RecordedEvent {
  event: EventName
  payload: unknown
}

export interface Harness {
  page: Page
  browser: Browser
  /** The engine and host the page talks to now (a saved library location replaces them). */
  readonly engine: Engine
  readonly host: EngineHost
  /**
   * Main's library location store (src/main/location-setting.ts) in the harness's temp folder, over
   * an AES stand-in for safeStorage (test-support/secret-box.ts). Saving a location from the page
   * closes the engine and opens it on the new location, as main restarts the engine process.
   */
  locations: LocationSettingStore
  url: string
  dataDir: string
  modelsDir: string
  /** Every event the engine pushed, in order. */
  events: RecordedEvent[]
  /** Paths the renderer asked to open in the system app (after the engine resolved them). */
  openedExternally: string[]
  /** Console errors and uncaught page errors (CSP violations show up here). */
  pageErrors: string[]
  /** Resolves with the first event (already pushed or future) of that name matching `test`. */
  waitForEvent<E extends EventName>(
    event: E,
    test?: (payload: EventPayload<E>) => boolean,
    timeoutMs?: number,
  ): Promise<EventPayload<E>>
  /**
   * Saves e2e/artifacts/<name>.png, and docs/screenshots/<name>.png (committed) when
   * DOCENT_UPDATE_SCREENSHOTS=1 (npm run screenshots:ui) unless `docs` is false: pictures of canned
   * events or of the random fixture models stay out of docs/, which shows only what the real
   * pipeline did.
   */
  screenshot(name: string, opts?: { docs?: boolean }): Promise<string[]>
  close(): Promise<void>
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const rendererDir = opts.rendererDir ?? path.join(repoRoot, 'out/renderer')
  if (!existsSync(path.join(rendererDir, 'index.html'))) {
    throw new Error(`${rendererDir}/index.html is missing: run \`npm run build\` before the browser e2e tests.`)
  }
  const executablePath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'
  if (!existsSync(executablePath)) {
    throw new Error(`Chromium is not at ${executablePath}: install it (apt-get install -y chromium) or set CHROMIUM_PATH.`)
  }

  const temp = await mkdtemp(path.join(os.tmpdir(), 'docent-e2e-'))
  const dataDir = opts.dataDir ?? path.join(temp, 'index')
  let modelsDir = opts.modelsDir
  if (!modelsDir) {
    modelsDir = path.join(temp, 'models')
    await mkdir(modelsDir, { recursive: true })
    if (existsSync(fixtureModels)) await cp(fixtureModels, modelsDir, { recursive: true, filter: (src) => !src.endsWith('.py') })
  }

  const events: RecordedEvent[] = []
  const openedExternally: string[] = []
  const pageErrors: string[] = []
  const waiters = new Set<{ event: EventName; test: (p: unknown) => boolean; resolve: (p: unknown) => void }>()

  let engine: Engine | null = null
  let server: StaticServer | null = null
  let browser: Browser | null = null
  let host: EngineHost | null = null
  let page: Page | null = null
  let push: Promise<unknown> = Promise.resolve()
  const locations = new LocationSettingStore(path.join(temp, 'library.json'), testSecretBox(), {})

  const close = async (): Promise<void> => {
    await browser?.close().catch(() => {})
    await server?.close().catch(() => {})
    await host?.shutdown().catch(() => {})
    await engine?.close().catch(() => {})
    await rm(temp, { recursive: true, force: true })
  }

  try {
    const emit = (event: EventName, payload: unknown): void => {
      events.push({ event, payload })
      for (const w of [...waiters]) {
        if (w.event === event && w.test(payload)) {
          waiters.delete(w)
          w.resolve(payload)
        }
      }
      // In order, one at a time; a closed page just stops listening.
      push = push
        .then(() =>
          page?.evaluate(
            ([n, p]) => (globalThis as unknown as { __docentEmit(n: string, p: unknown): number }).__docentEmit(n, p),
            [event, payload] as const,
          ),
        )
        .catch(() => {})
    }
    const theModels = modelsDir
    /** Opens the engine where the saved location says, as the engine process does with main's launch arguments. */
    const openLibrary = async (): Promise<void> => {
      const launch = locations.engineLaunch()
      const database = launch.args[0] === '--database' ? launch.args[1] : undefined
      let shown = dataDir
      if (database) {
        const u = new URL(database)
        // The engine process reads PGPASSWORD; here, in the test's own process, the URL carries it.
        if (launch.env['PGPASSWORD']) u.password = launch.env['PGPASSWORD']
        engine = await Engine.open({ database: u.toString(), modelsDir: theModels })
        shown = database
      } else engine = await Engine.open({ dataDir, modelsDir: theModels })
      if (opts.askWith) {
        const own = engine.ask.bind(engine)
        const extra = opts.askWith
        engine.ask = (request, askOpts = {}) => own(request, { ...askOpts, ...extra })
      }
      host = createEngineHost(engine, { dataDir: shown, modelsDir: theModels, appVersion: 'e2e', emit })
    }
    await openLibrary()
    server = await serveStatic(rendererDir)
    browser = await chromium.launch({
      executablePath,
      headless: !opts.headed,
      args: opts.headed ? CHROMIUM_ARGS.filter((a) => a !== '--headless') : CHROMIUM_ARGS,
    })
    const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 820 } })
    page = await context.newPage()
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text())
    })
    page.on('pageerror', (e) => pageErrors.push(e.message))
    // Like the app's session: nothing outside the renderer's own origin is fetched.
    await context.route(/.*/, (route) =>
      route.request().url().startsWith(server!.url) ? route.continue() : route.abort('blockedbyclient'),
    )

    await page.exposeBinding('__docentInvoke', (_source, name: unknown, input: unknown) => host!.dispatch(name, input))
    await page.exposeBinding('__docentPickFolder', async () => (opts.pickFolder ? await opts.pickFolder() : null))
    await page.exposeBinding('__docentOpenExternal', async (_source, chunkId: unknown): Promise<Result<null>> => {
      const res = await host!.dispatch('source.path', { chunkId })
      if (!res.ok) return res
      openedExternally.push((res.value as { path: string }).path)
      return { ok: true, value: null }
    })
    await page.exposeBinding('__docentLibraryLocation', async (): Promise<Result<LibraryLocationInfo>> => ({
      ok: true,
      value: locations.info(),
    }))
    // main's handler (validation, save) with the harness's restart: close this engine, open the saved location.
    const locationRelay = createLocationRelays({
      store: locations,
      isTrustedSender: () => true,
      restartEngine: async () => {
        await host?.shutdown()
        await engine?.close()
        host = null
        engine = null
        await openLibrary()
      },
    })
    await page.exposeBinding('__docentSetLibraryLocation', (_source, input: unknown) => locationRelay.set(null, input))
    // Run through tsx (as evals/screenshots/real-answer.ts is), functions are compiled with esbuild's
    // keepNames, which wraps them in a `__name(fn, "name")` helper that does not exist in the page:
    // the stand-in would throw before the app starts, leaving a blank page. vitest does not do that.
    await page.addInitScript('globalThis.__name = globalThis.__name || ((fn) => fn)')
    await page.addInitScript(installDocentStandIn, { dropPaths: opts.dropPaths ?? {} })
    await page.goto(server.url)

    const thePage = page
    const theBrowser = browser
    return {
      page: thePage,
      browser: theBrowser,
      get engine() {
        if (!engine) throw new Error('the harness has no engine open (a saved location failed to open)')
        return engine
      },
      get host() {
        if (!host) throw new Error('the harness has no engine open (a saved location failed to open)')
        return host
      },
      locations,
      url: server.url,
      dataDir,
      modelsDir,
      events,
      openedExternally,
      pageErrors,
      waitForEvent<E extends EventName>(event: E, test: (p: EventPayload<E>) => boolean = () => true, timeoutMs = 60_000) {
        const seen = events.find((e) => e.event === event && test(e.payload as EventPayload<E>))
        if (seen) return Promise.resolve(seen.payload as EventPayload<E>)
        return new Promise<EventPayload<E>>((resolve, reject) => {
          const w = {
            event,
            test: (p: unknown) => test(p as EventPayload<E>),
            resolve: (p: unknown) => {
              clearTimeout(timer)
              resolve(p as EventPayload<E>)
            },
          }
          const timer = setTimeout(() => {
            waiters.delete(w)
            reject(new Error(`no ${event} event within ${timeoutMs} ms`))
          }, timeoutMs)
          waiters.add(w)
        })
      },
      async screenshot(name: string, shotOpts: { docs?: boolean } = {}) {
        const file = `${name.replace(/[^a-z0-9._-]+/gi, '-')}.png`
        const targets = [path.join(repoRoot, 'e2e/artifacts', file)]
        // docs/screenshots/ is committed: it changes only when asked (npm run screenshots:ui), so
        // npm test leaves the work tree as it found it.
        if (shotOpts.docs !== false && process.env['DOCENT_UPDATE_SCREENSHOTS'] === '1')
          targets.unshift(path.join(repoRoot, 'docs/screenshots', file))
        const png = await thePage.screenshot({ fullPage: false })
        for (const t of targets) {
          await mkdir(path.dirname(t), { recursive: true })
          await writeFile(t, png)
        }
        return targets
      },
      close,
    }
  } catch (err) {
    await close()
    throw err
  }
}
