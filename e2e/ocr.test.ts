import { copyFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../src/test-support/paths'
import { startHarness, type Harness } from './harness/index'

/**
 * Text recognition as a person meets it, in a real Chromium over a real engine with no models: a
 * real scan (page 29 of a 1884 printing of Huckleberry Finn, a 150 dpi JPEG inside a PDF with no
 * text layer, evals/parsers/ocr-scans/c03-29.pdf) is imported, recognised by tesseract.js, found by
 * a keyword search for words that are only on that page, and opened in the viewer on that page
 * with the passage's recognised words marked over the page image.
 */

interface DocentPage {
  docentApp: { importFolders(paths: string[]): Promise<void> }
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

describe('a scanned page in the app (browser e2e)', () => {
  let h: Harness
  let folder: string
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const t = await tempDir('docent-e2e-ocr-')
    cleanups.push(t.cleanup)
    folder = path.join(t.dir, 'scans')
    await mkdir(folder)
    await copyFile(path.join(repoRoot, 'evals/parsers/ocr-scans/c03-29.pdf'), path.join(folder, 'huckleberry-p29.pdf'))
    const models = path.join(t.dir, 'models-none')
    await mkdir(models)
    h = await startHarness({ modelsDir: models, pickFolder: () => folder, viewport: { width: 1280, height: 860 } })
  })

  afterAll(async () => {
    await h?.close()
    for (const c of cleanups) await c()
  })

  it('recognises the scan, finds a word on it, and opens the page with the passage marked', async () => {
    const { page } = h
    await page.getByRole('heading', { name: 'Welcome to Docent' }).waitFor()
    await page.evaluate((f) => (globalThis as unknown as DocentPage).docentApp.importFolders([f]), folder)
    const done = await h.waitForEvent('import.done', () => true, 300_000)
    expect(done.error).toBeNull()
    expect(done.report?.imported).toBe(1)
    // The progress the person watched named the recognition, page by page.
    const progress = h.events.filter((e) => e.event === 'import.progress').map((e) => JSON.stringify(e.payload))
    expect(progress.some((p) => p.includes('"ocr"'))).toBe(true)

    const box = page.getByRole('textbox', { name: 'Ask a question about your documents' })
    await box.fill('Deacon Winn snuff box')
    await box.press('Enter')
    const hit = page.locator('.turn').first().locator('.hit-item', { hasText: 'huckleberry-p29.pdf' }).first()
    await hit.waitFor({ timeout: 180_000 })
    await hit.click()

    const viewer = page.getByRole('complementary', { name: 'Source viewer' })
    await viewer.waitFor()
    // The page image, with the passage's recognised words drawn over it.
    const boxes = viewer.locator('.ocr-box')
    await boxes.first().waitFor({ state: 'visible', timeout: 60_000 })
    expect(await boxes.count()).toBeGreaterThan(5)
    const pageBox = await viewer.locator('.pdf-page').first().boundingBox()
    const first = await boxes.first().boundingBox()
    expect(pageBox && first).toBeTruthy()
    // Each mark sits on the page, not beside it.
    expect(first!.x).toBeGreaterThanOrEqual(pageBox!.x - 1)
    expect(first!.x + first!.width).toBeLessThanOrEqual(pageBox!.x + pageBox!.width + 1)
    expect(first!.y).toBeGreaterThanOrEqual(pageBox!.y - 1)
    const chip = await viewer.locator('.source-tags .chip', { hasText: /^page/ }).first().innerText()
    expect(chip).toMatch(/page 1\b/)
    await h.screenshot('ocr-source')
  })
})
