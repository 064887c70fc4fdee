import { randomBytes } from 'node:crypto'
import dns from 'node:dns'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { CatalogEntry } from './catalog'
import { ChecksumError } from './download'
import { FakeHub, randomRevision, sha256, type FakeFile } from './fake-hub.testutil'
import { ModelManager, ModelManagerError, PinMismatchError, type ModelDownloadProgress } from './manager'

const MB = 1024 * 1024

function entry(over: Partial<CatalogEntry> & Pick<CatalogEntry, 'id' | 'role' | 'repo' | 'files' | 'installName'>): CatalogEntry {
  return {
    displayName: over.id,
    revision: null,
    pin: 'trust-on-first-use',
    parameters: '1M',
    licence: 'MIT',
    approxRamBytes: 1,
    isDefault: true,
    ...over,
  }
}

const f = (p: string, extra: { optional?: boolean } = {}) => ({ path: p, size: null, sha256: null, approxBytes: 1000, ...extra })

function onnxFiles(arch: string, modelBytes: Buffer): FakeFile[] {
  return [
    { path: 'config.json', bytes: Buffer.from(JSON.stringify({ architectures: [arch], hidden_size: 8 })) },
    { path: 'tokenizer.json', bytes: Buffer.from(JSON.stringify({ version: '1.0', pad: randomBytes(2000).toString('hex') })) },
    { path: 'tokenizer_config.json', bytes: Buffer.from('{"model_max_length":512}') },
    { path: 'onnx/model.onnx', bytes: modelBytes },
  ]
}

async function listFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
  }
  return out.sort()
}

describe('ModelManager downloads', () => {
  let hub: FakeHub
  let modelsDir: string
  let catalog: CatalogEntry[]
  let embedRev: string
  let llmRev: string
  const onnxBytes = randomBytes(3 * MB)
  const ggufBytes = Buffer.concat([Buffer.from('GGUF'), randomBytes(3 * MB)])
  const newManager = (): ModelManager =>
    new ModelManager(modelsDir, { endpoint: hub.endpoint, catalog, progressIntervalMs: 50, retry: { backoffMs: 10 } })

  beforeEach(async () => {
    hub = new FakeHub()
    embedRev = randomRevision()
    llmRev = randomRevision()
    hub.addRepo({ repo: 'test/embed', revision: embedRev, files: onnxFiles('BertModel', onnxBytes) })
    hub.addRepo({ repo: 'test/llm', revision: llmRev, files: [{ path: 'tiny-Q4_K_M.gguf', bytes: ggufBytes }] })
    await hub.start()
    modelsDir = await mkdtemp(path.join(os.tmpdir(), 'docent-models-'))
    catalog = [
      entry({
        id: 'test-embed',
        role: 'embedding',
        repo: 'test/embed',
        files: [
          f('config.json'),
          f('tokenizer.json'),
          f('tokenizer_config.json'),
          f('special_tokens_map.json', { optional: true }),
          f('onnx/model.onnx'),
        ],
        installName: 'test-embed',
        docent: { pooling: 'cls', queryPrefix: 'Represent this: ' },
      }),
      entry({
        id: 'test-llm',
        role: 'llm',
        repo: 'test/llm',
        revision: llmRev,
        files: [f('tiny-Q4_K_M.gguf')],
        installName: 'tiny-Q4_K_M.gguf',
      }),
      entry({ id: 'test-rerank', role: 'reranker', repo: 'test/rerank', files: [f('config.json')], installName: 'test-rerank' }),
    ]
  })
  afterEach(async () => {
    await hub.close()
    await rm(modelsDir, { recursive: true, force: true })
  })

  it('downloads, verifies every file and installs atomically, recording hashes and pins', async () => {
    hub.chunkSize = 32 * 1024
    hub.chunkDelayMs = 5
    const mm = newManager()
    const events: ModelDownloadProgress[] = []
    const installedDir = path.join(modelsDir, 'embedding', 'test-embed')
    let visibleEarly = false
    const model = await mm.download('embedding', {
      onProgress: (p) => {
        events.push(p)
        if (existsSync(installedDir)) visibleEarly = true
      },
    })
    expect(visibleEarly).toBe(false)
    expect(model.path).toBe(installedDir)
    expect(model.source).toBe('download')
    expect(model.revision).toBe(embedRev)
    expect(await listFiles(installedDir)).toEqual([
      'config.json',
      'docent.json',
      'onnx/model.onnx',
      'tokenizer.json',
      'tokenizer_config.json',
    ])
    expect((await readFile(path.join(installedDir, 'onnx/model.onnx'))).equals(onnxBytes)).toBe(true)
    expect(JSON.parse(await readFile(path.join(installedDir, 'docent.json'), 'utf8'))).toEqual({
      pooling: 'cls',
      queryPrefix: 'Represent this: ',
    })
    expect(await listFiles(path.join(modelsDir, '.staging', 'test-embed'))).toEqual([])

    // Progress: per file strictly increasing, overall never going back, an ETA while the big file runs.
    const big = events.filter((e) => e.file === 'onnx/model.onnx')
    expect(big.length).toBeGreaterThanOrEqual(3)
    for (let i = 1; i < big.length; i++) expect(big[i]!.bytesDone).toBeGreaterThan(big[i - 1]!.bytesDone)
    expect(big.at(-1)!.bytesDone).toBe(onnxBytes.length)
    expect(big.some((e) => e.etaSeconds !== null && e.etaSeconds > 0)).toBe(true)
    for (let i = 1; i < events.length; i++)
      expect(events[i]!.overallBytesDone).toBeGreaterThanOrEqual(events[i - 1]!.overallBytesDone)
    expect(events.at(-1)!.overallBytesDone).toBe(events.at(-1)!.overallBytesTotal)

    const installed = JSON.parse(await readFile(path.join(modelsDir, 'installed.json'), 'utf8'))
    const rec = installed.models.find((m: { name: string }) => m.name === 'test-embed')
    expect(rec.files.find((x: { path: string }) => x.path === 'onnx/model.onnx').sha256).toBe(sha256(onnxBytes))
    const lock = JSON.parse(await readFile(path.join(modelsDir, 'pins.lock.json'), 'utf8'))
    expect(lock.revisions['test-embed'].revision).toBe(embedRev)
    const pins = lock.pins[`test/embed@${embedRev}`]
    expect(pins['onnx/model.onnx']).toEqual({ sha256: sha256(onnxBytes), size: onnxBytes.length })
    expect(pins['config.json'].sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(pins['special_tokens_map.json']).toBeNull()
    expect(JSON.parse(await readFile(path.join(modelsDir, 'settings.json'), 'utf8')).embedding).toBe('test-embed')

    const status = await mm.status()
    const emb = status.find((s) => s.role === 'embedding')!
    expect(emb.installed).toBe(true)
    expect(emb.active).toBe('test-embed')
    expect(emb.activeModel?.source).toBe('download')
    expect(emb.activeModel?.totalBytes).toBeGreaterThan(onnxBytes.length)
  })

  it('does nothing on a second download of an installed, verified pin (zero requests)', async () => {
    await newManager().download('test-embed')
    await newManager().download('llm')
    hub.requests.length = 0
    const again = newManager()
    const model = await again.download('embedding')
    const llm = await again.download('test-llm')
    expect(model.name).toBe('test-embed')
    expect(llm.name).toBe('tiny-Q4_K_M.gguf')
    expect(hub.requests).toHaveLength(0)
  })

  it('resumes a cut GGUF download with a Range request and installs the right bytes', async () => {
    hub.cutAfterBytes = 1 * MB
    hub.cutTimes = 1
    const model = await newManager().download('llm')
    const file = path.join(modelsDir, 'llm', 'tiny-Q4_K_M.gguf')
    expect(model.path).toBe(file)
    expect(model.files).toEqual([{ path: 'tiny-Q4_K_M.gguf', size: ggufBytes.length, sha256: sha256(ggufBytes) }])
    expect(sha256(await readFile(file))).toBe(sha256(ggufBytes))
    const seen = hub.fileRequests()
    expect(seen).toHaveLength(2)
    const m = /^bytes=(\d+)-$/.exec(seen[1]!.range ?? '')
    expect(Number(m?.[1])).toBeGreaterThan(0)
    expect(await listFiles(path.join(modelsDir, '.staging'))).toEqual([])
    // The catalog pinned the revision, so `main` was never asked for.
    expect(hub.requests.some((r) => r.path.includes('/revision/'))).toBe(false)
  })

  it('rejects bytes that differ from the published hash: ChecksumError, nothing installed, no partial kept', async () => {
    const repo = hub.repos.get('test/embed')!
    const model = repo.files.find((x) => x.path === 'onnx/model.onnx')!
    model.servedBytes = randomBytes(model.bytes.length)
    const mm = newManager()
    const err = await mm.download('embedding').catch((e) => e)
    expect(err).toBeInstanceOf(ChecksumError)
    expect(existsSync(path.join(modelsDir, 'embedding', 'test-embed'))).toBe(false)
    expect((await listFiles(path.join(modelsDir, '.staging'))).filter((p) => p.endsWith('.partial'))).toEqual([])
    const status = await mm.status()
    const emb = status.find((s) => s.role === 'embedding')!
    expect(emb.installed).toBe(false)
    expect(emb.models).toEqual([])
    expect(existsSync(path.join(modelsDir, 'installed.json'))).toBe(false)
    // Nothing about the bad file was pinned.
    const lock = JSON.parse(await readFile(path.join(modelsDir, 'pins.lock.json'), 'utf8'))
    expect(lock.pins[`test/embed@${embedRev}`]).toBeUndefined()
  })

  it('cancels through an AbortSignal: AbortError, nothing installed, and a later download resumes', async () => {
    hub.chunkSize = 64 * 1024
    hub.chunkDelayMs = 15
    const mm = newManager()
    const controller = new AbortController()
    const err = await mm
      .download('embedding', {
        signal: controller.signal,
        onProgress: (p) => {
          if (p.file === 'onnx/model.onnx' && p.bytesDone >= 512 * 1024) controller.abort()
        },
      })
      .catch((e) => e)
    expect((err as Error).name).toBe('AbortError')
    expect(existsSync(path.join(modelsDir, 'embedding', 'test-embed'))).toBe(false)
    expect((await mm.status()).find((s) => s.role === 'embedding')!.downloading).toBe(false)
    const staged = await listFiles(path.join(modelsDir, '.staging', 'test-embed'))
    expect(staged).toContain('onnx/model.onnx.partial')

    hub.chunkDelayMs = 0
    hub.requests.length = 0
    const model = await mm.download('embedding')
    expect(sha256(await readFile(path.join(model.path, 'onnx/model.onnx')))).toBe(sha256(onnxBytes))
    const modelReq = hub.fileRequests().filter((r) => r.path.endsWith('onnx/model.onnx'))
    expect(modelReq).toHaveLength(1)
    expect(Number(/^bytes=(\d+)-$/.exec(modelReq[0]!.range ?? '')?.[1])).toBeGreaterThan(0)
    // Files finished before the cancel were reused, not fetched again.
    expect(hub.fileRequests().some((r) => r.path.endsWith('/config.json'))).toBe(false)
  })

  it('cancel() stops a running download of a role', async () => {
    hub.chunkDelayMs = 15
    const mm = newManager()
    let cancelled = 0
    const err = await mm
      .download('llm', {
        onProgress: (p) => {
          if (p.bytesDone > 256 * 1024 && cancelled === 0) cancelled = mm.cancel('llm')
        },
      })
      .catch((e) => e)
    expect(cancelled).toBe(1)
    expect((err as Error).name).toBe('AbortError')
    expect(existsSync(path.join(modelsDir, 'llm', 'tiny-Q4_K_M.gguf'))).toBe(false)
  })

  it('refuses a file whose hub hash changed after it was first trusted', async () => {
    const mm = newManager()
    await mm.download('embedding')
    await mm.delete('embedding', 'test-embed')
    const repo = hub.repos.get('test/embed')!
    const model = repo.files.find((x) => x.path === 'onnx/model.onnx')!
    model.bytes = randomBytes(model.bytes.length) // same revision, different content published
    hub.requests.length = 0
    const err = await newManager()
      .download('embedding')
      .catch((e) => e)
    expect(err).toBeInstanceOf(PinMismatchError)
    expect(hub.fileRequests()).toHaveLength(0)
    expect(existsSync(path.join(modelsDir, 'embedding', 'test-embed'))).toBe(false)
  })

  it('reports a file missing from the hub in words', async () => {
    const err = await newManager()
      .download('reranker')
      .catch((e) => e)
    expect((err as Error).message).toMatch(/test\/rerank|not found|404/)
    expect(await listFiles(path.join(modelsDir, 'reranker'))).toEqual([])
  })
})

describe('ModelManager import, status, delete, setActive', () => {
  let modelsDir: string
  let srcDir: string

  beforeEach(async () => {
    modelsDir = await mkdtemp(path.join(os.tmpdir(), 'docent-models-'))
    srcDir = await mkdtemp(path.join(os.tmpdir(), 'docent-src-'))
  })
  afterEach(async () => {
    await rm(modelsDir, { recursive: true, force: true })
    await rm(srcDir, { recursive: true, force: true })
  })

  async function makeOnnxFolder(name: string, arch: string): Promise<string> {
    const dir = path.join(srcDir, name)
    await mkdir(path.join(dir, 'onnx'), { recursive: true })
    await writeFile(path.join(dir, 'config.json'), JSON.stringify({ architectures: [arch] }))
    await writeFile(path.join(dir, 'tokenizer.json'), '{"version":"1.0"}')
    await writeFile(path.join(dir, 'tokenizer_config.json'), '{}')
    await writeFile(path.join(dir, 'onnx', 'model.onnx'), randomBytes(200_000))
    await writeFile(path.join(dir, '.DS_Store'), 'junk')
    return dir
  }

  it('imports a .gguf file by copying it into llm/ and recording its hash', async () => {
    const bytes = Buffer.concat([Buffer.from('GGUF'), randomBytes(300_000)])
    const src = path.join(srcDir, 'my-model-Q4_K_M.gguf')
    await writeFile(src, bytes)
    const mm = new ModelManager(modelsDir)
    const model = await mm.importFromDisk(src)
    expect(model.role).toBe('llm')
    expect(model.source).toBe('import')
    expect(model.path).toBe(path.join(modelsDir, 'llm', 'my-model-Q4_K_M.gguf'))
    expect(model.files).toEqual([{ path: 'my-model-Q4_K_M.gguf', size: bytes.length, sha256: sha256(bytes) }])
    expect(existsSync(src)).toBe(true) // copied, not moved
    expect(sha256(await readFile(model.path))).toBe(sha256(bytes))
    const installed = JSON.parse(await readFile(path.join(modelsDir, 'installed.json'), 'utf8'))
    expect(installed.models[0]).toMatchObject({ role: 'llm', name: 'my-model-Q4_K_M.gguf', source: 'import', importedFrom: src })
    expect(JSON.parse(await readFile(path.join(modelsDir, 'settings.json'), 'utf8')).llm).toBe('my-model-Q4_K_M.gguf')
    expect(await readdir(path.join(modelsDir, '.staging'))).toEqual([])

    await expect(mm.importFromDisk(src)).rejects.toBeInstanceOf(ModelManagerError) // already installed
    const fake = path.join(srcDir, 'fake.gguf')
    await writeFile(fake, 'not a gguf at all')
    await expect(mm.importFromDisk(fake)).rejects.toThrow(/GGUF/)
    const txt = path.join(srcDir, 'notes.txt')
    await writeFile(txt, 'hello')
    await expect(mm.importFromDisk(txt)).rejects.toBeInstanceOf(ModelManagerError)
  })

  it('imports ONNX folders, deciding embedding or reranker from config.json (or an explicit role)', async () => {
    const mm = new ModelManager(modelsDir)
    const embSrc = await makeOnnxFolder('my-embedder', 'BertModel')
    const rerSrc = await makeOnnxFolder('my-reranker', 'BertForSequenceClassification')
    const forced = await makeOnnxFolder('forced-reranker', 'BertModel')

    const emb = await mm.importFromDisk(embSrc)
    expect(emb.role).toBe('embedding')
    expect(emb.path).toBe(path.join(modelsDir, 'embedding', 'my-embedder'))
    expect(emb.files.map((x) => x.path)).toEqual(['config.json', 'onnx/model.onnx', 'tokenizer.json', 'tokenizer_config.json'])
    const onnx = await readFile(path.join(embSrc, 'onnx', 'model.onnx'))
    expect(emb.files.find((x) => x.path === 'onnx/model.onnx')!.sha256).toBe(sha256(onnx))
    expect(existsSync(path.join(emb.path, '.DS_Store'))).toBe(false)
    expect(existsSync(path.join(embSrc, 'onnx', 'model.onnx'))).toBe(true)

    const rer = await mm.importFromDisk(rerSrc)
    expect(rer.role).toBe('reranker')
    expect(existsSync(path.join(modelsDir, 'reranker', 'my-reranker', 'onnx', 'model.onnx'))).toBe(true)

    const f2 = await mm.importFromDisk(forced, 'reranker')
    expect(f2.role).toBe('reranker')

    const status = await mm.status()
    expect(status.find((s) => s.role === 'embedding')!.active).toBe('my-embedder')
    expect(status.find((s) => s.role === 'reranker')!.active).toBe('my-reranker')
    expect(status.find((s) => s.role === 'reranker')!.models.map((m) => m.name)).toEqual(['forced-reranker', 'my-reranker'])

    const broken = path.join(srcDir, 'broken')
    await mkdir(path.join(broken, 'onnx'), { recursive: true })
    await writeFile(path.join(broken, 'config.json'), '{}')
    await writeFile(path.join(broken, 'onnx', 'model.onnx'), 'x')
    await expect(mm.importFromDisk(broken)).rejects.toThrow(/tokenizer\.json/)
    await expect(mm.importFromDisk(embSrc, 'llm')).rejects.toBeInstanceOf(ModelManagerError)
    expect(existsSync(path.join(modelsDir, 'embedding', 'broken'))).toBe(false)
  })

  it('labels a model that npm run models:dev put in the folder as such, from its manifest.json', async () => {
    const dir = path.join(modelsDir, 'embedding', 'dev-model')
    await mkdir(path.join(dir, 'onnx'), { recursive: true })
    await writeFile(path.join(dir, 'onnx', 'model.onnx'), 'abc')
    const other = path.join(modelsDir, 'embedding', 'by-hand')
    await mkdir(other, { recursive: true })
    await writeFile(path.join(other, 'config.json'), '{}')
    await writeFile(
      path.join(modelsDir, 'manifest.json'),
      JSON.stringify({ format: 1, generator: 'npm run models:dev (scripts/models-dev)', models: { 'embedding/dev-model': {} } }),
    )
    const models = (await new ModelManager(modelsDir).status()).find((s) => s.role === 'embedding')!.models
    expect(models.find((m) => m.name === 'dev-model')?.source).toBe('models-dev')
    expect(models.find((m) => m.name === 'by-hand')?.source).toBe('folder')
    await rm(path.join(modelsDir, 'manifest.json'))
    await rm(dir, { recursive: true })
    await rm(other, { recursive: true })
  })

  it('lists unrecorded models as found in the folder, switches the active model and deletes atomically', async () => {
    const fixtureDir = path.join(modelsDir, 'embedding', 'fixture-model')
    await mkdir(path.join(fixtureDir, 'onnx'), { recursive: true })
    await writeFile(path.join(fixtureDir, 'config.json'), '{}')
    await writeFile(path.join(fixtureDir, 'onnx', 'model.onnx'), 'abc')
    const mm = new ModelManager(modelsDir)
    let emb = (await mm.status()).find((s) => s.role === 'embedding')!
    expect(emb.active).toBeNull()
    expect(emb.installed).toBe(false)
    expect(emb.models).toHaveLength(1)
    expect(emb.models[0]).toMatchObject({ name: 'fixture-model', source: 'folder', totalBytes: 5 })
    expect(emb.models[0]!.files.every((x) => x.sha256 === null)).toBe(true)

    await mm.setActive('embedding', 'fixture-model')
    emb = (await mm.status()).find((s) => s.role === 'embedding')!
    expect(emb.active).toBe('fixture-model')
    expect(emb.installed).toBe(true)
    await expect(mm.setActive('embedding', 'nope')).rejects.toBeInstanceOf(ModelManagerError)
    await expect(mm.setActive('embedding', '../llm')).rejects.toBeInstanceOf(ModelManagerError)

    // Other keys of settings.json survive.
    const settingsPath = path.join(modelsDir, 'settings.json')
    await writeFile(settingsPath, JSON.stringify({ ...JSON.parse(await readFile(settingsPath, 'utf8')), theme: 'dark' }))
    await mm.delete('embedding', 'fixture-model')
    expect(existsSync(fixtureDir)).toBe(false)
    const settings = JSON.parse(await readFile(settingsPath, 'utf8'))
    expect(settings.embedding).toBeNull()
    expect(settings.theme).toBe('dark')
    await expect(mm.delete('embedding', 'fixture-model')).rejects.toBeInstanceOf(ModelManagerError)
    await expect(mm.delete('embedding', '..')).rejects.toBeInstanceOf(ModelManagerError)
  })

  it('makes no network call while constructing, reading status, importing, deleting or switching models', async () => {
    const calls: string[] = []
    const trap =
      (name: string) =>
      (..._args: unknown[]): never => {
        calls.push(name)
        throw new Error(`network call: ${name}`)
      }
    const spies = [
      vi.spyOn(globalThis, 'fetch').mockImplementation(trap('fetch')),
      vi.spyOn(http, 'request').mockImplementation(trap('http.request')),
      vi.spyOn(http, 'get').mockImplementation(trap('http.get')),
      vi.spyOn(https, 'request').mockImplementation(trap('https.request')),
      vi.spyOn(https, 'get').mockImplementation(trap('https.get')),
      vi.spyOn(net, 'connect').mockImplementation(trap('net.connect')),
      vi.spyOn(net, 'createConnection').mockImplementation(trap('net.createConnection')),
      vi.spyOn(tls, 'connect').mockImplementation(trap('tls.connect')),
      vi.spyOn(dns, 'lookup').mockImplementation(trap('dns.lookup')),
    ]
    try {
      const gguf = path.join(srcDir, 'a.gguf')
      await writeFile(gguf, Buffer.concat([Buffer.from('GGUF'), randomBytes(1000)]))
      const folder = await makeOnnxFolder('emb', 'BertModel')

      const mm = new ModelManager(modelsDir, { endpoint: 'https://hub.invalid' })
      await mm.status()
      await mm.importFromDisk(gguf)
      await mm.importFromDisk(folder)
      await mm.setActive('llm', 'a.gguf')
      await mm.setActive('embedding', 'emb')
      await mm.status()
      await mm.delete('llm', 'a.gguf')
      await mm.delete('embedding', 'emb')
      await mm.status()
      expect(calls).toEqual([])

      // Control: a download is the one operation that does reach for the network, and the trap sees it.
      await expect(mm.download('llm')).rejects.toThrow(/network call: fetch/)
      expect(calls).toEqual(['fetch'])
    } finally {
      for (const s of spies) s.mockRestore()
    }
  })
})
