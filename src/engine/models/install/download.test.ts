import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChecksumError, downloadFile, HttpStatusError, parseContentRange, type DownloadProgress } from './download'
import { FakeHub, gitBlobSha1, randomRevision, sha256 } from './fake-hub.testutil'
import { resolveUrl } from './hub'

const MB = 1024 * 1024

describe('downloadFile', () => {
  let hub: FakeHub
  let dir: string
  const revision = randomRevision()
  const bytes = randomBytes(3 * MB)
  const url = (): string => resolveUrl(hub.endpoint, 'test/model', revision, 'onnx/model.onnx')

  beforeEach(async () => {
    hub = new FakeHub()
    hub.addRepo({ repo: 'test/model', revision, files: [{ path: 'onnx/model.onnx', bytes }] })
    await hub.start()
    dir = await mkdtemp(path.join(os.tmpdir(), 'docent-dl-'))
  })
  afterEach(async () => {
    await hub.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('downloads, verifies and reports throttled progress with increasing bytes and an ETA', async () => {
    hub.chunkSize = 32 * 1024
    hub.chunkDelayMs = 8
    const events: DownloadProgress[] = []
    const target = path.join(dir, 'model.onnx')
    const started = Date.now()
    const result = await downloadFile({
      url: url(),
      target,
      label: 'onnx/model.onnx',
      expectedSha256: sha256(bytes),
      expectedSize: bytes.length,
      onProgress: (p) => events.push(p),
    })
    const elapsed = Date.now() - started
    expect(result.sha256).toBe(sha256(bytes))
    expect(result.size).toBe(bytes.length)
    expect((await readFile(target)).equals(bytes)).toBe(true)
    expect(existsSync(`${target}.partial`)).toBe(false)

    expect(events.length).toBeGreaterThanOrEqual(3)
    for (let i = 1; i < events.length; i++) expect(events[i]!.bytesDone).toBeGreaterThan(events[i - 1]!.bytesDone)
    expect(events.at(-1)!.bytesDone).toBe(bytes.length)
    expect(events.every((e) => e.file === 'onnx/model.onnx' && e.bytesTotal === bytes.length)).toBe(true)
    const mid = events.filter((e) => e.bytesDone > 0 && e.bytesDone < bytes.length)
    expect(mid.some((e) => e.etaSeconds !== null && e.etaSeconds > 0 && e.bytesPerSecond > 0)).toBe(true)
    // Throttled to about 4 events a second (plus the first and the last).
    expect(events.length).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 3)
  })

  it('resumes with a Range request after the connection is cut, and the hash matches', async () => {
    hub.cutAfterBytes = 1 * MB
    hub.cutTimes = 1
    const target = path.join(dir, 'model.onnx')
    const result = await downloadFile({
      url: url(),
      target,
      expectedSha256: sha256(bytes),
      expectedSize: bytes.length,
      backoffMs: 10,
    })
    expect(result.sha256).toBe(sha256(bytes))
    expect((await readFile(target)).equals(bytes)).toBe(true)
    const seen = hub.fileRequests()
    expect(seen).toHaveLength(2)
    expect(seen[0]!.range).toBeNull()
    const m = /^bytes=(\d+)-$/.exec(seen[1]!.range ?? '')
    expect(m).not.toBeNull()
    const resumedAt = Number(m![1])
    expect(resumedAt).toBeGreaterThan(0)
    expect(resumedAt).toBeLessThanOrEqual(1 * MB)
  })

  it('counts only attempts that add no bytes: a connection cut again and again after progress still finishes', async () => {
    hub.cutAfterBytes = 512 * 1024
    hub.cutTimes = 4
    const target = path.join(dir, 'model.onnx')
    const result = await downloadFile({ url: url(), target, expectedSha256: sha256(bytes), maxAttempts: 2, backoffMs: 1 })
    expect(result.sha256).toBe(sha256(bytes))
    // Four cuts, more than maxAttempts: each attempt added bytes, so none counted against the limit.
    expect(hub.fileRequests()).toHaveLength(5)
    expect(
      hub
        .fileRequests()
        .slice(1)
        .every((r) => /^bytes=\d+-$/.test(r.range ?? '')),
    ).toBe(true)
  })

  it('starts over from byte 0 when the server ignores Range', async () => {
    hub.rangeSupport = false
    hub.cutAfterBytes = 1 * MB
    hub.cutTimes = 1
    const target = path.join(dir, 'model.onnx')
    const result = await downloadFile({ url: url(), target, expectedSha256: sha256(bytes), backoffMs: 10 })
    expect(result.sha256).toBe(sha256(bytes))
    expect((await readFile(target)).equals(bytes)).toBe(true)
    const seen = hub.fileRequests()
    expect(seen).toHaveLength(2)
    expect(seen[1]!.range).toMatch(/^bytes=\d+-$/)
  })

  it('rejects bytes that do not match the expected SHA-256 and deletes the partial', async () => {
    const target = path.join(dir, 'model.onnx')
    const err = await downloadFile({ url: url(), target, expectedSha256: sha256(randomBytes(16)) }).catch((e) => e)
    expect(err).toBeInstanceOf(ChecksumError)
    expect(existsSync(target)).toBe(false)
    expect(existsSync(`${target}.partial`)).toBe(false)
  })

  it('rejects a size other than the expected one before downloading it all', async () => {
    const target = path.join(dir, 'model.onnx')
    const err = await downloadFile({ url: url(), target, expectedSize: 10 }).catch((e) => e)
    expect(err).toBeInstanceOf(ChecksumError)
    expect(existsSync(`${target}.partial`)).toBe(false)
  })

  it('cancels through an AbortSignal, keeps the partial, and a later call resumes from it', async () => {
    hub.chunkSize = 64 * 1024
    hub.chunkDelayMs = 15
    const target = path.join(dir, 'model.onnx')
    const controller = new AbortController()
    const err = await downloadFile({
      url: url(),
      target,
      expectedSha256: sha256(bytes),
      signal: controller.signal,
      progressIntervalMs: 0,
      onProgress: (p) => {
        if (p.bytesDone >= 512 * 1024) controller.abort()
      },
    }).catch((e) => e)
    expect((err as Error).name).toBe('AbortError')
    expect(existsSync(target)).toBe(false)
    const kept = (await stat(`${target}.partial`)).size
    expect(kept).toBeGreaterThan(0)
    expect(kept).toBeLessThan(bytes.length)

    hub.chunkDelayMs = 0
    const result = await downloadFile({ url: url(), target, expectedSha256: sha256(bytes) })
    expect(result.sha256).toBe(sha256(bytes))
    expect(hub.fileRequests().at(-1)!.range).toBe(`bytes=${kept}-`)
  })

  it('fails at once on a 404 (not retried)', async () => {
    const target = path.join(dir, 'x.bin')
    const err = await downloadFile({
      url: resolveUrl(hub.endpoint, 'test/model', revision, 'missing.bin'),
      target,
      backoffMs: 10,
    }).catch((e) => e)
    expect(err).toBeInstanceOf(HttpStatusError)
    expect((err as HttpStatusError).status).toBe(404)
    expect(hub.fileRequests()).toHaveLength(1)
  })

  it('gives up after a bounded number of attempts without progress', async () => {
    await hub.close()
    const target = path.join(dir, 'x.bin')
    const err = await downloadFile({ url: url(), target, maxAttempts: 3, backoffMs: 5 }).catch((e) => e)
    expect((err as Error).name).toBe('DownloadFailedError')
    expect((err as Error).message).toMatch(/3 attempts/)
  })

  it('checks small non-LFS files against the git blob id', async () => {
    const small = Buffer.from('{"architectures":["BertModel"]}')
    hub.addRepo({ repo: 'test/small', revision, files: [{ path: 'config.json', bytes: small }] })
    const u = resolveUrl(hub.endpoint, 'test/small', revision, 'config.json')
    const ok = await downloadFile({
      url: u,
      target: path.join(dir, 'config.json'),
      expectedSize: small.length,
      expectedGitBlobSha1: gitBlobSha1(small),
    })
    expect(ok.sha256).toBe(sha256(small))
    const err = await downloadFile({
      url: u,
      target: path.join(dir, 'config2.json'),
      expectedSize: small.length,
      expectedGitBlobSha1: gitBlobSha1(Buffer.from('something else')),
    }).catch((e) => e)
    expect(err).toBeInstanceOf(ChecksumError)
    expect(existsSync(path.join(dir, 'config2.json'))).toBe(false)
  })
})

describe('parseContentRange', () => {
  it('reads ranges and unsatisfied ranges', () => {
    expect(parseContentRange('bytes 10-19/100')).toEqual({ start: 10, end: 19, total: 100 })
    expect(parseContentRange('bytes 0-9/*')).toEqual({ start: 0, end: 9, total: null })
    expect(parseContentRange('bytes */100')).toEqual({ start: null, end: null, total: 100 })
    expect(parseContentRange('nonsense')).toBeNull()
    expect(parseContentRange(null)).toBeNull()
  })
})
