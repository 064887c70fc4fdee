import { execFileSync } from 'node:child_process'
import { cp, mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mcpCorpus, tempDir } from '../src/test-support/paths'
import { startHarness, type Harness } from './harness/index'

/**
 * The app with no model installed at all, in a real Chromium over a real engine, in a small window
 * (1100 x 560): what a person sees after importing a folder and asking, and what happens to the
 * app's top bars when a source opens deep in a long document.
 *
 * The folder is one release of the MCP specification plus a 21-page PDF manual printed by this
 * Chromium from evals/corpora/make-manual.mjs (the same manual as the PDF text tests).
 */

interface DocentPage {
  docentApp: { importFolders(paths: string[]): Promise<void> }
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** What the engine says in each reply when a model is missing (the notices the app must not stack). */
const ENGINE_NOTICES = [
  'Vector search is unavailable',
  'Reranking is unavailable',
  'No reranker was available',
  'No language model is available',
]

describe('Docent with no models installed (browser e2e)', () => {
  let h: Harness
  let folder: string
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const t = await tempDir('docent-e2e-nomodels-')
    cleanups.push(t.cleanup)
    folder = path.join(t.dir, 'printer-and-mcp')
    await mkdir(path.join(folder, 'specification'), { recursive: true })
    await cp(path.join(mcpCorpus, 'specification/2025-06-18'), path.join(folder, 'specification/2025-06-18'), {
      recursive: true,
    })
    const md = path.join(t.dir, 'manual.md')
    const html = path.join(t.dir, 'manual.html')
    execFileSync('bash', ['-c', `node evals/corpora/make-manual.mjs > "${md}"`], { cwd: repoRoot })
    execFileSync('node', ['evals/corpora/md-to-html.mjs', md, html, 'Tern Firmware Manual'], { cwd: repoRoot })

    const models = path.join(t.dir, 'models-none')
    await mkdir(models)
    h = await startHarness({ modelsDir: models, pickFolder: () => folder, viewport: { width: 1100, height: 560 } })
    // Print the manual with the same browser, in a context of its own (the app's blocks other origins).
    const printer = await h.browser.newPage()
    await printer.setContent(await readFile(html, 'utf8'))
    await printer.pdf({ path: path.join(folder, 'tern-manual.pdf'), format: 'A4' })
    await printer.close()
  })

  afterAll(async () => {
    await h?.close()
    for (const c of cleanups) await c()
  })

  async function ask(question: string): Promise<void> {
    const { page } = h
    const before = await page.locator('.turn').count()
    const box = page.getByRole('textbox', { name: 'Ask a question about your documents' })
    await box.fill(question)
    await box.press('Enter')
    await page
      .locator('.turn')
      .nth(before)
      .locator('.search-only, [aria-label="No answer"]')
      .first()
      .waitFor({ timeout: 180_000 })
  }

  it('says once what works and what to install, instead of a stack of warnings under each reply', async () => {
    const { page } = h
    await page.getByRole('heading', { name: 'Welcome to Docent' }).waitFor()
    await page.evaluate((f) => (globalThis as unknown as DocentPage).docentApp.importFolders([f]), folder)
    const done = await h.waitForEvent('import.done', () => true, 300_000)
    expect(done.error).toBeNull()
    expect(done.report?.imported).toBe(22)

    await ask('tachometer_pin fan speed pullup')
    // The engine did send its four model notices with the reply...
    const finals = h.events
      .filter((e) => e.event === 'ask.event')
      .map((e) => (e.payload as { event: { type: string; result?: { notices: string[] } } }).event)
      .filter((e) => e.type === 'final')
    expect(finals).toHaveLength(1)
    for (const n of ENGINE_NOTICES)
      expect(
        finals[0]!.result!.notices.some((x) => x.startsWith(n)),
        n,
      ).toBe(true)
    // ...and the app shows one calm notice in their place.
    const notice = page.getByRole('status', { name: 'Models' })
    expect(await notice.count()).toBe(1)
    const text = await notice.innerText()
    expect(text).toContain('keyword search')
    expect(text).toContain('opening every source at its passage')
    expect(text).toMatch(/install the chat model .*, the embedding model .* and the reranker/)
    for (const n of ENGINE_NOTICES) expect(await page.getByText(n).count(), n).toBe(0)
    expect(await page.locator('.result .notice-warn').count()).toBe(0)

    await ask('openWorldHint open world of external entities memory tool')
    expect(await page.getByRole('status', { name: 'Models' }).count()).toBe(1)
    expect(await page.locator('.result .notice-warn').count()).toBe(0)
    await h.screenshot('no-models', { docs: false })
  })

  /** The top bars and the page's own scroll position, after a source opened. */
  async function bars() {
    const { page } = h
    const top = async (sel: string) => (await page.locator(sel).first().boundingBox())?.y ?? null
    return {
      paneHeader: await top('.pane-header'),
      panelBar: await top('.panel-bar'),
      sidebar: await top('.sidebar'),
      pageScroll: await page.evaluate(
        () =>
          (globalThis as unknown as { document: { scrollingElement: { scrollTop: number } } }).document.scrollingElement
            .scrollTop,
      ),
    }
  }

  /** Whether the highlighted passage is inside the visible part of the viewer's scroll area. */
  async function markInView(scroller: string): Promise<boolean> {
    const { page } = h
    const mark = await page.locator('mark.passage-mark').first().boundingBox()
    const box = await page.locator(scroller).first().boundingBox()
    return !!mark && !!box && mark.y >= box.y && mark.y + mark.height <= box.y + box.height
  }

  it('opens a PDF and a Markdown source at a deep passage without scrolling the app out of the window', async () => {
    const { page } = h
    const viewer = page.getByRole('complementary', { name: 'Source viewer' })
    const pageSize = () =>
      page.evaluate(() => {
        const d = (globalThis as unknown as { document: { scrollingElement: { scrollHeight: number } } }).document
        return { height: d.scrollingElement.scrollHeight, window: (globalThis as unknown as { innerHeight: number }).innerHeight }
      })

    // The first reply's passages are in the PDF manual, many pages in.
    await page.locator('.turn').first().locator('.hit-item', { hasText: 'tern-manual.pdf' }).first().click()
    await viewer.waitFor()
    await viewer.locator('mark.passage-mark').first().waitFor({ state: 'visible', timeout: 30_000 })
    const pageChip = await viewer.locator('.source-tags .chip', { hasText: /^page/ }).first().innerText()
    expect(Number(/\d+/.exec(pageChip)?.[0])).toBeGreaterThanOrEqual(10)
    await expect.poll(() => markInView('.pdf-scroll')).toBe(true)
    expect(await bars()).toEqual({ paneHeader: 0, panelBar: 0, sidebar: 0, pageScroll: 0 })
    // pdf.js put its text-measuring canvas into <body>; it must not make the page taller than the window.
    expect(await page.locator('body > canvas.hiddenCanvasElement').count()).toBe(1)
    const size = await pageSize()
    expect(size.height).toBeLessThanOrEqual(size.window)
    await h.screenshot('no-models-pdf-source', { docs: false })

    // Zoom: the buttons step it, + and - on the page too, 0 fits the width again.
    const pdfPage = viewer.locator('.pdf-page')
    const width = async () => (await pdfPage.boundingBox())?.width ?? 0
    const fit = await width()
    const level = viewer.locator('.pdf-zoom-level')
    const fitLevel = await level.innerText()
    await viewer.getByRole('button', { name: 'Zoom in (+)' }).click()
    await expect.poll(width).toBeGreaterThan(fit * 1.1)
    expect(await level.innerText()).not.toBe(fitLevel)
    const zoomed = await width()
    await viewer.locator('.pdf-scroll').focus()
    await page.keyboard.press('+')
    await expect.poll(width).toBeGreaterThan(zoomed * 1.1)
    await page.keyboard.press('-')
    await expect.poll(width).toBeLessThan(zoomed * 1.3)
    await page.keyboard.press('0')
    await expect.poll(width).toBeLessThan(fit + 2)
    expect(await level.innerText()).toBe(fitLevel)
    expect(await viewer.getByRole('button', { name: 'Fit width (0)' }).getAttribute('aria-pressed')).toBe('true')
    // The highlighted passage is drawn again at every zoom.
    await viewer.locator('mark.passage-mark').first().waitFor({ state: 'visible', timeout: 30_000 })

    // Whatever else ever makes the page taller than the window (here a spacer), opening a passage
    // near the end of a long document, which its own scroll area cannot bring to the middle,
    // scrolls that area only.
    await page.evaluate(() => {
      const d = (
        globalThis as unknown as {
          document: { createElement(t: string): { id: string; style: { height: string } }; body: { append(e: unknown): void } }
        }
      ).document
      const spacer = d.createElement('div')
      spacer.id = 'e2e-spacer'
      spacer.style.height = '400px'
      d.body.append(spacer)
    })
    const taller = await pageSize()
    expect(taller.height).toBeGreaterThan(taller.window)
    await page.locator('.turn').nth(1).locator('.hit-item', { hasText: 'ToolAnnotations' }).first().click()
    await viewer.locator('.source-file', { hasText: 'schema.mdx' }).waitFor()
    await viewer.locator('mark.passage-mark').first().waitFor({ state: 'visible', timeout: 30_000 })
    expect(
      await viewer.locator('.document').evaluate((el) => (el as unknown as { scrollTop: number }).scrollTop),
    ).toBeGreaterThan(1000)
    await expect.poll(() => markInView('.document')).toBe(true)
    expect(await bars()).toEqual({ paneHeader: 0, panelBar: 0, sidebar: 0, pageScroll: 0 })
    await page.evaluate(() =>
      (globalThis as unknown as { document: { getElementById(id: string): { remove(): void } } }).document
        .getElementById('e2e-spacer')
        .remove(),
    )
  })

  it('raised no page errors or CSP violations', () => {
    expect(h.pageErrors).toEqual([])
  })
})
