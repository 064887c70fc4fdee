import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_LLM, EMBEDDERS, LLMS } from './catalog'
import { install, parseArgs, selectSpecs } from './main'
import { checkInstalled, hashTree, recipeDigest, type ModelRecord } from './manifest'

let tmp: string
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'models-dev-test-'))
})
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true })
})

describe('parseArgs', () => {
  it('defaults to the embedder (fp32, and its int8 twin beside it) and the default chat model', () => {
    const opts = parseArgs(['models'])
    expect(selectSpecs(opts).map((s) => s.key)).toEqual(['all-minilm-l6-v2', 'all-minilm-l6-v2-int8', DEFAULT_LLM])
    // The fp32 folder sorts first, so with no settings.json the engine keeps using it (models/active.ts).
    expect(EMBEDDERS.map((e) => e.dirName).sort()[0]).toBe('all-minilm-l6-v2')
  })
  it('--all-embedders adds the int8 model made before, kept for comparison only', () => {
    expect(selectSpecs(parseArgs(['m', '--only', 'embedding', '--all-embedders'])).map((s) => s.key)).toEqual([
      'all-minilm-l6-v2',
      'all-minilm-l6-v2-int8',
      'all-minilm-l6-v2-int8-unfused',
    ])
  })
  it('the int8 model in use is quantised from the fused graph; the comparison one from the standard-op graph', () => {
    const [fp32, int8, unfused] = EMBEDDERS
    expect([fp32?.graph, fp32?.quantize]).toEqual([undefined, undefined])
    expect(int8).toMatchObject({ graph: 'fused', quantize: 'dynamic-int8-per-channel', quantizeOps: ['MatMul', 'Attention'] })
    expect(unfused).toMatchObject({ quantize: 'dynamic-int8-per-channel', comparisonOnly: true })
    expect(unfused?.graph).toBeUndefined()
    // A new recipe reinstalls the model in folders that hold the old int8 under the same name.
    expect(recipeDigest(int8!, [])).not.toBe(recipeDigest({ ...unfused!, key: int8!.key, dirName: int8!.dirName }, []))
  })
  it('--only embedding selects no chat model; --all-llms selects every candidate', () => {
    expect(selectSpecs(parseArgs(['m', '--only', 'embedding'])).map((s) => s.role)).toEqual(['embedding', 'embedding'])
    expect(selectSpecs(parseArgs(['m', '--only', 'llm', '--all-llms'])).map((s) => s.key)).toEqual(LLMS.map((m) => m.key))
  })
  it('rejects unknown candidates and options', () => {
    expect(() => parseArgs(['m', '--llm', 'nope'])).toThrow(/unknown --llm nope/)
    expect(() => parseArgs(['m', '--frobnicate'])).toThrow(/unknown option/)
  })
})

describe('manifest freshness', () => {
  it('is up to date only while recipe and every file digest match', async () => {
    const dir = path.join(tmp, 'embedding', 'm')
    await mkdir(path.join(dir, 'onnx'), { recursive: true })
    await writeFile(path.join(dir, 'config.json'), '{}')
    await writeFile(path.join(dir, 'onnx', 'model.onnx'), 'bytes')
    const recipe = recipeDigest(EMBEDDERS[0]!, ['converter v1'])
    const record = { path: 'embedding/m', recipe, files: await hashTree(dir) } as ModelRecord
    expect(await checkInstalled(tmp, record, recipe)).toEqual({ upToDate: true })
    expect(await checkInstalled(tmp, record, recipeDigest(EMBEDDERS[0]!, ['converter v2']))).toMatchObject({ upToDate: false })
    await writeFile(path.join(dir, 'onnx', 'model.onnx'), 'other bytes')
    expect(await checkInstalled(tmp, record, recipe)).toMatchObject({ upToDate: false, reason: expect.stringMatching(/sha256/) })
    await rm(path.join(dir, 'config.json'))
    expect(await checkInstalled(tmp, record, recipe)).toMatchObject({ upToDate: false })
  })
})

describe('failures leave the models folder as it was', () => {
  const failing = (modelsDir: string) => ({
    ...parseArgs([modelsDir, '--only', 'embedding', '--venv', path.join(tmp, 'cache')]),
    // No Python at this path: the first step fails without touching the network.
    python: path.join(tmp, 'no-such-python'),
  })

  it('an existing folder keeps exactly its files, and no staging folder is left', async () => {
    const models = path.join(tmp, 'models')
    await mkdir(path.join(models, 'llm'), { recursive: true })
    await writeFile(path.join(models, 'llm', 'keep.gguf'), 'GGUF')
    await writeFile(path.join(models, 'manifest.json'), '{"not":"ours"}')
    const before = await hashTree(models)
    await expect(install(failing(models), () => undefined)).rejects.toThrow()
    expect(await hashTree(models)).toEqual(before)
    expect(await readFile(path.join(models, 'manifest.json'), 'utf8')).toBe('{"not":"ours"}')
  })

  it('a folder that did not exist is not created', async () => {
    const models = path.join(tmp, 'fresh', 'models')
    await expect(install(failing(models), () => undefined)).rejects.toThrow()
    expect(existsSync(models)).toBe(false)
  })
})
