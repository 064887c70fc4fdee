import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../../test-support/paths'

const exec = promisify(execFile)
const here = path.dirname(fileURLToPath(import.meta.url))

/**
 * Text recognition never goes to the network: a child process whose every thread (a --require
 * preload runs in worker threads too, tesseract's included) logs and refuses fetch() and TCP
 * connections recognises an image with the Recogniser; nothing is logged. The control shows the
 * guard sees it when tesseract.js is left to its defaults (the language data from a CDN).
 */
const DENY = `
const fs = require('node:fs'); const net = require('node:net'); const { threadId } = require('node:worker_threads')
const log = (what) => fs.appendFileSync(process.env.DENY_LOG, threadId + ' ' + what + '\\n')
log('loaded')
globalThis.fetch = async (u) => { log('fetch ' + u); throw new Error('network denied') }
const connect = net.Socket.prototype.connect
// A local pipe (tsx talks to esbuild over one) is not the network; a host and port are.
net.Socket.prototype.connect = function (...a) {
  // Node's own calls pass their arguments normalised, as one array.
  const o = Array.isArray(a[0]) ? a[0][0] : a[0]
  if ((o && typeof o === 'object' && o.path) || typeof o === 'string') return connect.apply(this, a)
  log('connect ' + JSON.stringify(a[0])); throw new Error('network denied')
}
`
const CHILD = (mode: 'docent' | 'defaults') => `
import { createRequire } from 'node:module'
import { scanImage } from ${JSON.stringify(path.join(here, '__fixtures__/scan.ts'))}
import { Recogniser } from ${JSON.stringify(path.join(here, 'ocr.ts'))}
const img = await scanImage(['Offline only, please'], 700, 150)
if (${JSON.stringify(mode)} === 'docent') {
  const rec = new Recogniser()
  const r = await rec.recognise(img.png, img.width, img.height)
  await rec.close()
  console.log(r.paragraphs.map((p) => p.text).join(' '))
} else {
  const T = createRequire(import.meta.url)('tesseract.js')
  const w = await T.createWorker('eng', 1, { cacheMethod: 'none', errorHandler: () => undefined })
  await w.terminate()
}
`

describe('text recognition offline', () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeAll(async () => {
    ;({ dir, cleanup } = await tempDir('docent-ocr-offline-'))
    await writeFile(path.join(dir, 'deny.cjs'), DENY)
  })
  afterAll(async () => cleanup?.())

  const run = async (mode: 'docent' | 'defaults') => {
    const script = path.join(here, `ocr-offline-child-${mode}.tmp.ts`)
    const log = path.join(dir, `${mode}.log`)
    await writeFile(script, CHILD(mode))
    try {
      const r = await exec(process.execPath, ['--import', 'tsx', '--require', path.join(dir, 'deny.cjs'), script], {
        env: { ...process.env, DENY_LOG: log },
        // The control's tesseract.js waits on its failed download: it is stopped.
        timeout: mode === 'defaults' ? 8000 : 60_000,
      }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }))
      return { stdout: r.stdout.trim(), log: (await readFile(log, 'utf8')).trim().split('\n') }
    } finally {
      await import('node:fs/promises').then((fs) => fs.rm(script, { force: true }))
    }
  }

  it('recognises without a fetch or a connection from any thread', async () => {
    const r = await run('docent')
    expect(r.stdout).toBe('Offline only, please')
    // The guard was loaded in the process and in tesseract's worker thread, and saw nothing else.
    expect(r.log.filter((l) => l.endsWith(' loaded')).length).toBeGreaterThanOrEqual(2)
    expect(r.log.filter((l) => !l.endsWith(' loaded'))).toEqual([])
  }, 90_000)

  it('control: the guard catches tesseract.js fetching its language data when left to its defaults', async () => {
    const r = await run('defaults')
    expect(r.log.some((l) => /fetch https:\/\/cdn\.jsdelivr\.net\/.*eng\.traineddata/.test(l))).toBe(true)
  }, 90_000)
})
