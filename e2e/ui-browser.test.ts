import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot, tempDir } from '../src/test-support/paths'

/**
 * `npm run ui:browser` (scripts/ui-browser/main.ts): the UI without Electron, against the real
 * engine on the given folders. Headless here (no display); a person gets a window.
 */
const chromium = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'
const built = existsSync(path.join(repoRoot, 'out/renderer/index.html'))

describe.skipIf(!existsSync(chromium) || !built)('npm run ui:browser', () => {
  it('opens the built UI on the real engine and shows a new library', async () => {
    const t = await tempDir('docent-ui-browser-')
    try {
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          'scripts/ui-browser/main.ts',
          '--headless',
          '--check',
          '--data',
          path.join(t.dir, 'index'),
          '--models',
          path.join(t.dir, 'models'),
        ],
        { cwd: repoRoot, encoding: 'utf8', timeout: 180_000 },
      )
      expect(r.stderr).toBe('')
      expect(r.stdout).toContain(`on the library in ${path.join(t.dir, 'index')}`)
      expect(r.stdout).toContain('the library is on screen')
      expect(r.status).toBe(0)
      // The engine really opened there: a library was made in the folder given.
      expect(existsSync(path.join(t.dir, 'index', 'PG_VERSION'))).toBe(true)
    } finally {
      await t.cleanup()
    }
  }, 240_000)
})
