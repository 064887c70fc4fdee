import { createHash, type Hash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import type { DownloadFetch } from './network'

/**
 * Resumable single-file HTTP(S) downloader.
 *
 * - Writes to `<target>.partial`; renames to `<target>` only after the size and hashes check out.
 * - A cut connection is retried with `Range: bytes=<n>-` and exponential backoff; `maxAttempts` bounds the number of
 *   consecutive attempts that add no bytes. A server that ignores Range (answers 200) restarts the file from byte 0.
 * - SHA-256 (and, for small non-LFS hub files, the git blob SHA-1) is computed while writing; on resume the bytes
 *   already in the partial are hashed first. A mismatch deletes the partial and throws ChecksumError.
 * - Cancelling through the AbortSignal rejects with an error named 'AbortError' and KEEPS the partial, so a later call
 *   resumes where this one stopped.
 * - Uses `fetch` (injectable, see network.ts): Electron's `net.fetch` in the app, a proxy-aware fetch in plain Node.
 */

export interface DownloadProgress {
  /** Label of the file (its path inside the model by default). */
  file: string
  /** Bytes of this file on disk so far, including bytes from an earlier, resumed attempt. */
  bytesDone: number
  /** Size of the file, or null while unknown. */
  bytesTotal: number | null
  /** Transfer rate over the last few seconds (0 until measurable). */
  bytesPerSecond: number
  /** Seconds left at the current rate, or null when the rate or total is unknown. */
  etaSeconds: number | null
}

export class ChecksumError extends Error {
  override readonly name = 'ChecksumError'
  constructor(
    readonly file: string,
    readonly expected: string,
    readonly actual: string,
    what = 'SHA-256',
  ) {
    super(`${file}: the downloaded bytes do not match the published ${what} (expected ${expected}, got ${actual}).`)
  }
}

export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError'
  readonly retryable: boolean
  constructor(
    readonly status: number,
    readonly url: string,
  ) {
    super(`The server answered HTTP ${status} for ${url}.`)
    this.retryable = status === 408 || status === 425 || status === 429 || status >= 500
  }
}

/** Thrown when a download is cancelled. Named 'AbortError' like the DOM's, so `err.name === 'AbortError'` works. */
export class DownloadAbortedError extends Error {
  override readonly name = 'AbortError'
  readonly code = 'ABORT_ERR'
  constructor(message = 'The download was cancelled.') {
    super(message)
  }
}

export class DownloadFailedError extends Error {
  override readonly name = 'DownloadFailedError'
}

export interface DownloadFileOptions {
  url: string
  /** Final path. The partial lives at `<target>.partial`. */
  target: string
  /** Name used in progress events and errors; defaults to the target's base name. */
  label?: string
  /** Expected SHA-256 (hex). null/undefined: not checked here (the caller gets the computed hash back). */
  expectedSha256?: string | null
  expectedSize?: number | null
  /** Git blob id (SHA-1 of "blob <size>\0" + bytes) the hub lists for non-LFS files. Needs `expectedSize`. */
  expectedGitBlobSha1?: string | null
  onProgress?: (p: DownloadProgress) => void
  signal?: AbortSignal
  /** Default: the global fetch (callers pass network.ts's choice). */
  fetchImpl?: DownloadFetch
  headers?: Record<string, string>
  /** Consecutive attempts that make no progress before giving up (default 5). */
  maxAttempts?: number
  /** Delay before the first retry, doubled each time, capped at 30 s (default 1000 ms). */
  backoffMs?: number
  /** Minimum time between progress events (default 250 ms, ~4/s). */
  progressIntervalMs?: number
}

export interface DownloadResult {
  path: string
  size: number
  sha256: string
}

export async function downloadFile(opts: DownloadFileOptions): Promise<DownloadResult> {
  const {
    url,
    target,
    signal,
    expectedSha256 = null,
    expectedSize = null,
    expectedGitBlobSha1 = null,
    maxAttempts = 5,
    backoffMs = 1000,
  } = opts
  const label = opts.label ?? path.basename(target)
  const fetchImpl: DownloadFetch = opts.fetchImpl ?? ((u, init) => globalThis.fetch(u, init))
  const partial = `${target}.partial`
  if (expectedGitBlobSha1 !== null && expectedSize === null) {
    throw new Error('expectedGitBlobSha1 needs expectedSize')
  }
  throwIfAborted(signal)
  await mkdir(path.dirname(target), { recursive: true })

  const fh = await openPartial(partial)
  let done = (await fh.stat()).size
  let total: number | null = expectedSize
  const newHashes = (): Hashes => {
    const sha1 = expectedGitBlobSha1 !== null ? createHash('sha1').update(`blob ${expectedSize}\0`) : null
    return { sha256: createHash('sha256'), sha1 }
  }
  let hashes = newHashes()
  const restart = async (): Promise<void> => {
    await fh.truncate(0)
    done = 0
    hashes = newHashes()
  }
  const meter = new ProgressMeter(label, opts.progressIntervalMs ?? 250, opts.onProgress)

  try {
    if (expectedSize !== null && done > expectedSize) await restart()
    if (done > 0) await hashExisting(partial, done, hashes, signal)
    meter.start(done, total)

    let failures = 0
    for (;;) {
      throwIfAborted(signal)
      if (total !== null && done === total) break
      const before = done
      try {
        const headers: Record<string, string> = { ...opts.headers }
        if (done > 0) headers['Range'] = `bytes=${done}-`
        const res = await fetchImpl(url, { headers, signal, redirect: 'follow' })

        if (res.status === 416 && done > 0) {
          // Range starts at or past the end: either the partial is complete or it belongs to another file.
          const range = parseContentRange(res.headers.get('content-range'))
          await discardBody(res)
          if (range?.total === done) {
            total = done
            break
          }
          await restart()
          continue
        }
        if (!res.ok) {
          await discardBody(res)
          throw new HttpStatusError(res.status, url)
        }

        let serverTotal: number | null = null
        if (res.status === 206) {
          const range = parseContentRange(res.headers.get('content-range'))
          if (range === null || range.start !== done) {
            // A range we did not ask for: start over without Range.
            await discardBody(res)
            await restart()
            throw new DownloadFailedError(`${label}: the server answered a different byte range than requested.`)
          }
          serverTotal = range.total
        } else {
          // 200: the server sends the whole file (it ignored our Range, or we sent none).
          if (done > 0) await restart()
          const len = Number(res.headers.get('content-length'))
          if (res.headers.get('content-length') !== null && Number.isSafeInteger(len)) serverTotal = len
        }
        if (serverTotal !== null) {
          if (expectedSize !== null && serverTotal !== expectedSize) {
            await discardBody(res)
            await fh.close().catch(() => undefined)
            await unlink(partial).catch(() => undefined)
            throw new ChecksumError(label, `${expectedSize} bytes`, `${serverTotal} bytes`, 'size')
          }
          total = serverTotal
        }
        meter.setTotal(total)
        if (res.body === null) throw new DownloadFailedError(`${label}: the server sent no body.`)

        const reader = res.body.getReader()
        try {
          for (;;) {
            const { value, done: eof } = await reader.read()
            if (eof) break
            await writeAll(fh, value, done)
            hashes.sha256.update(value)
            hashes.sha1?.update(value)
            done += value.byteLength
            if (total !== null && done > total) {
              throw new ChecksumError(label, `${total} bytes`, `more than ${total} bytes`, 'size')
            }
            meter.update(done)
          }
        } catch (err) {
          await reader.cancel().catch(() => undefined)
          throw err
        } finally {
          reader.releaseLock()
        }
        if (total !== null && done < total) {
          throw new DownloadFailedError(`${label}: the connection closed after ${done} of ${total} bytes.`)
        }
        total = done
        break
      } catch (err) {
        if (signal?.aborted) throw abortError(signal)
        if (err instanceof ChecksumError) {
          await fh.close().catch(() => undefined)
          await unlink(partial).catch(() => undefined)
          throw err
        }
        if (err instanceof HttpStatusError && !err.retryable) throw err
        if (done > before) failures = 0
        failures++
        if (failures >= maxAttempts) {
          const why = err instanceof Error ? err.message : String(err)
          throw new DownloadFailedError(`${label}: the download failed after ${failures} attempts (${why}).`, {
            cause: err,
          })
        }
        await sleep(Math.min(backoffMs * 2 ** (failures - 1), 30_000), signal)
      }
    }
    meter.finish(done)
  } finally {
    await fh.close().catch(() => undefined)
  }

  const sha256 = hashes.sha256.digest('hex')
  const problem =
    expectedSize !== null && done !== expectedSize
      ? new ChecksumError(label, `${expectedSize} bytes`, `${done} bytes`, 'size')
      : expectedSha256 !== null && sha256 !== expectedSha256.toLowerCase()
        ? new ChecksumError(label, expectedSha256.toLowerCase(), sha256)
        : null
  const sha1 = hashes.sha1?.digest('hex') ?? null
  const gitProblem =
    expectedGitBlobSha1 !== null && sha1 !== expectedGitBlobSha1.toLowerCase()
      ? new ChecksumError(label, expectedGitBlobSha1.toLowerCase(), sha1 ?? '', 'git blob id')
      : null
  if (problem ?? gitProblem) {
    await unlink(partial).catch(() => undefined)
    throw (problem ?? gitProblem) as ChecksumError
  }
  await rename(partial, target)
  return { path: target, size: done, sha256 }
}

interface Hashes {
  sha256: Hash
  sha1: Hash | null
}

async function openPartial(p: string): Promise<FileHandle> {
  try {
    return await open(p, 'r+')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return open(p, 'w+')
    throw err
  }
}

async function hashExisting(p: string, length: number, hashes: Hashes, signal?: AbortSignal): Promise<void> {
  const stream = createReadStream(p, { start: 0, end: length - 1, highWaterMark: 1 << 20 })
  for await (const chunk of stream) {
    if (signal?.aborted) {
      stream.destroy()
      throw abortError(signal)
    }
    hashes.sha256.update(chunk as Buffer)
    hashes.sha1?.update(chunk as Buffer)
  }
}

async function writeAll(fh: FileHandle, data: Uint8Array, position: number): Promise<void> {
  let offset = 0
  while (offset < data.byteLength) {
    const { bytesWritten } = await fh.write(data, offset, data.byteLength - offset, position + offset)
    offset += bytesWritten
  }
}

async function discardBody(res: Response): Promise<void> {
  try {
    await res.body?.cancel()
  } catch {
    // nothing to do: the connection is going away anyway
  }
}

export function parseContentRange(
  value: string | null,
): { start: number; end: number; total: number | null } | { start: null; end: null; total: number } | null {
  if (value === null) return null
  const m = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i.exec(value.trim())
  if (!m) return null
  const total = m[3] === '*' || m[3] === undefined ? null : Number(m[3])
  if (m[1] === undefined || m[2] === undefined) return total === null ? null : { start: null, end: null, total }
  return { start: Number(m[1]), end: Number(m[2]), total }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  if (reason instanceof DownloadAbortedError) return reason
  return new DownloadAbortedError()
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError(signal)
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal))
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(abortError(signal as AbortSignal))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Rate over a sliding window, throttled emission, and a listener that cannot break the download. */
class ProgressMeter {
  private samples: { t: number; bytes: number }[] = []
  private lastEmit = 0
  private lastEmittedBytes = -1
  private total: number | null = null
  private current = 0

  constructor(
    private readonly file: string,
    private readonly intervalMs: number,
    private readonly listener?: (p: DownloadProgress) => void,
  ) {}

  start(bytes: number, total: number | null): void {
    this.total = total
    this.current = bytes
    this.samples = [{ t: performance.now(), bytes }]
    this.emit()
  }

  setTotal(total: number | null): void {
    this.total = total
  }

  update(bytes: number): void {
    const t = performance.now()
    if (bytes < this.current) this.samples = [] // restarted from 0
    this.current = bytes
    this.samples.push({ t, bytes })
    while (this.samples.length > 2 && t - (this.samples[0]?.t ?? t) > 5000) this.samples.shift()
    if (t - this.lastEmit >= this.intervalMs) this.emit()
  }

  finish(bytes: number): void {
    this.current = bytes
    if (this.total === null) this.total = bytes
    this.emit()
  }

  private rate(): number {
    const first = this.samples[0]
    const last = this.samples[this.samples.length - 1]
    if (!first || !last || last.t - first.t < 50) return 0
    return ((last.bytes - first.bytes) * 1000) / (last.t - first.t)
  }

  /** Emits unless nothing changed since the last event (so bytesDone strictly increases between events). */
  private emit(): void {
    if (!this.listener) return
    if (this.current === this.lastEmittedBytes) return
    this.lastEmit = performance.now()
    this.lastEmittedBytes = this.current
    const bytesPerSecond = this.rate()
    const etaSeconds =
      this.total !== null && bytesPerSecond > 0 ? Math.max(0, (this.total - this.current) / bytesPerSecond) : null
    try {
      this.listener({
        file: this.file,
        bytesDone: this.current,
        bytesTotal: this.total,
        bytesPerSecond,
        etaSeconds: this.current === this.total ? 0 : etaSeconds,
      })
    } catch {
      // A failing progress listener must not fail the download.
    }
  }
}
