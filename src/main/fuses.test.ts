import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { repoRoot } from '../test-support/paths'

/**
 * The Electron fuses electron-builder flips in the packaged binary (docs/security.md). The binary
 * itself cannot be read back here (no Electron download on this machine), so this pins the
 * configuration that produces it, and the one assumption RunAsNode=off rests on.
 */

function builderConfig(): Record<string, unknown> {
  const parsed: unknown = parse(readFileSync(path.join(repoRoot, 'electron-builder.yml'), 'utf8'))
  if (parsed === null || typeof parsed !== 'object') throw new Error('electron-builder.yml is not a mapping')
  return { ...parsed }
}

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(p))
    else if (/\.tsx?$/.test(entry.name) && !/\.(test|faults\.test|real\.test|testutil)\.tsx?$/.test(entry.name)) out.push(p)
  }
  return out
}

describe('electron fuses (electron-builder.yml)', () => {
  const config = builderConfig()

  it('turns off running as Node, NODE_OPTIONS and the inspector, and loads only a validated app.asar', () => {
    expect(config['electronFuses']).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      // Off on purpose: no cookies to protect, and it can raise an OS keychain prompt.
      enableCookieEncryption: false,
    })
  })

  it('keeps the app in an asar archive (integrity validation and OnlyLoadAppFromAsar need one)', () => {
    expect(config['asar']).not.toBe(false)
  })

  it('never starts the app binary as Node (RunAsNode is off): no ELECTRON_RUN_AS_NODE, no child_process in main', () => {
    const offenders: string[] = []
    for (const layer of ['main', 'preload', 'apps', 'engine']) {
      for (const file of sourceFiles(path.join(repoRoot, 'src', layer))) {
        const text = readFileSync(file, 'utf8')
        if (text.includes('ELECTRON_RUN_AS_NODE')) offenders.push(`${file}: ELECTRON_RUN_AS_NODE`)
        // In Electron's main process child_process.fork runs the app binary with ELECTRON_RUN_AS_NODE.
        if (layer === 'main' && /from 'node:child_process'|from 'child_process'/.test(text)) {
          offenders.push(`${file}: child_process in the main process`)
        }
      }
    }
    expect(offenders).toEqual([])
  })
})
