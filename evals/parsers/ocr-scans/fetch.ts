#!/usr/bin/env tsx
/**
 * The scans of evals/parsers/ocr-scans.test.ts that may not be committed here (CC-BY-SA / GFDL):
 * linn.pdf (a 1985 LinnSequencer leaflet, a clean 300 dpi bilevel scan) and typewriter.png (a
 * typewritten Dutch recipe), taken from OCRmyPDF's test resources in its sdist on PyPI, pinned by
 * exact version and SHA-256. Their licences are in the sdist's REUSE.toml. c03-29.pdf (public
 * domain) is committed beside this script.
 *
 *   npx tsx evals/parsers/ocr-scans/fetch.ts [DIR]      # default .ocr-scans
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

const exec = promisify(execFile)

const OCRMYPDF = {
  version: '17.13.0',
  archive: 'ocrmypdf-17.13.0.tar.gz',
  sha256: '151c35d810eb628fbc5cb9bbe80b834ecf094737efa0e7a2e9e1fac3c730ed49',
}
const FETCHED = ['linn.pdf', 'typewriter.png']

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? '.ocr-scans')
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'docent-ocr-scans-'))
  try {
    // pip's own client; --no-binary keeps it to the sdist, which holds the tests.
    await exec('python3', [
      '-m',
      'pip',
      'download',
      '--no-deps',
      '--no-binary',
      ':all:',
      `ocrmypdf==${OCRMYPDF.version}`,
      '-d',
      tmp,
    ])
    const archive = path.join(tmp, OCRMYPDF.archive)
    const sha = createHash('sha256')
      .update(await readFile(archive))
      .digest('hex')
    if (sha !== OCRMYPDF.sha256) throw new Error(`${OCRMYPDF.archive}: SHA-256 ${sha}, expected ${OCRMYPDF.sha256}`)
    const top = `ocrmypdf-${OCRMYPDF.version}`
    const members = [...FETCHED.map((f) => `${top}/tests/resources/${f}`), `${top}/REUSE.toml`]
    await exec('tar', ['xzf', archive, '-C', tmp, ...members])
    await mkdir(out, { recursive: true })
    for (const f of FETCHED) await copyFile(path.join(tmp, top, 'tests', 'resources', f), path.join(out, f))
    await copyFile(path.join(tmp, top, 'REUSE.toml'), path.join(out, 'REUSE.toml'))
    console.log(`${FETCHED.join(', ')} (and their licences, REUSE.toml) in ${out}`)
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
