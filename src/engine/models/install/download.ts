import { createHash, type Hash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pRetry, { AbortError } from 'p-retry'
import type { DownloadFetch } from './network'
import { ProgressMeter, type DownloadProgress } from './progress-meter'

export type { DownloadProgress }

/**
 * Resumable single-file HTTP(S) downloader.
 *
 * - Writes to `<target>.partial`; renames to `<target>` only after the size and hashes check out.
 * - A cut connection is retried with `Range: bytes=<n>-` and exponential backoff (p-retry); `maxAttempts` bounds the
 *   number of consecutive attempts that add no bytes. A server that ignores Range (answers 200) restarts the file from byte 0.
 * - SHA-256 (and, for small non-LFS hub files, the git blob SHA-1) is computed while writing; on resume the bytes
 *   already in the partial are hashed first. A mismatch deletes the partial and throws ChecksumError.
 * - Cancelling through the AbortSignal rejects with an error named 'AbortError' and KEEPS the partial, so a later call
 *   resumes where this one stopped.
 * - Uses `fetch` (injectable, see network.ts): Electron's `net.fetch` in the app, a proxy-aware fetch in plain Node.
 */

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
  const { target, signal, expectedSize = null, expectedGitBlobSha1 = null } = opts
  const label = opts.label ?? path.basename(target)
  if (expectedGitBlobSha1 !== null && expectedSize === null) {
    throw new Error('expectedGitBlobSha1 needs expectedSize')
  }
  throwIfAborted(signal)
  await mkdir(path.dirname(target), { recursive: true })
  const file = await PartialFile.open(`${target}.partial`, expectedSize, expectedGitBlobSha1 !== null)
  const transfer: Transfer = {
    url: opts.url,
    label,
    file,
    expectedSize,
    signal,
    fetchImpl: opts.fetchImpl ?? ((u, init) => globalThis.fetch(u, init)),
    headers: opts.headers ?? {},
    meter: new ProgressMeter(label, opts.progressIntervalMs ?? 250, opts.onProgress),
  }
  try {
    if (expectedSize !== null && file.done > expectedSize) await file.restart()
    if (file.done > 0) await file.hashExisting(signal)
    transfer.meter.start(file.done, file.total)
    await fetchRemaining(transfer, { maxAttempts: opts.maxAttempts ?? 5, backoffMs: opts.backoffMs ?? 1000 })
    transfer.meter.finish(file.done)
  } finally {
    await file.fh.close().catch(() => undefined)
  }
  return verifyAndPlace(file, target, label, opts)
}

/** One download under way: where from, into which partial file, and what to report. */
interface Transfer {
  url: string
  label: string
  file: PartialFile
  expectedSize: number | null
  signal: AbortSignal | undefined
  fetchImpl: DownloadFetch
  headers: Record<string, string>
  meter: ProgressMeter
}

/** An attempt that failed after adding bytes: the count of attempts without progress starts again. */
class Progressed extends Error {}

/**
 * Fetches until the partial file is whole. A cut connection is retried with a Range request: p-retry
 * spaces the attempts of a streak that adds no bytes (backoffMs, doubled each time, at most 30 s)
 * and ends it after `maxAttempts`; an attempt that added bytes before failing starts a new streak,
 * in which it counts as the first failure.
 */
async function fetchRemaining(t: Transfer, retry: { maxAttempts: number; backoffMs: number }): Promise<void> {
  let counted = 0
  for (;;) {
    let failures = counted
    try {
      await pRetry(() => requestUntilDone(t), {
        retries: retry.maxAttempts - 1 - counted,
        factor: 2,
        minTimeout: retry.backoffMs * 2 ** counted,
        maxTimeout: 30_000,
        ...(t.signal ? { signal: t.signal } : {}),
        onFailedAttempt: () => void failures++,
      })
      return
    } catch (err) {
      if (t.signal?.aborted) throw abortError(t.signal)
      if (err instanceof Progressed) {
        counted = 1
        if (counted >= retry.maxAttempts) throw gaveUp(t.label, counted, err.cause)
        await sleep(retry.backoffMs, undefined, t.signal ? { signal: t.signal } : {}).catch(() => {
          throw abortError(t.signal!)
        })
        continue
      }
      if (err instanceof ChecksumError || (err instanceof HttpStatusError && !err.retryable)) throw err
      throw gaveUp(t.label, failures, err)
    }
  }
}

function gaveUp(label: string, attempts: number, cause: unknown): DownloadFailedError {
  const why = cause instanceof Error ? cause.message : String(cause)
  return new DownloadFailedError(`${label}: the download failed after ${attempts} attempts (${why}).`, { cause })
}

/**
 * One attempt: requests until the file is whole (a 416 that says the partial belongs to another
 * file starts it over at once). A failure is sorted for p-retry: final (a checksum, a refused
 * request, a cancel), after progress, or worth another attempt.
 */
async function requestUntilDone(t: Transfer): Promise<void> {
  for (;;) {
    const before = t.file.done
    try {
      if ((await requestOnce(t)) === 'done') return
    } catch (err) {
      if (t.signal?.aborted) throw new AbortError(abortError(t.signal))
      if (err instanceof ChecksumError) {
        await t.file.discard()
        throw new AbortError(err)
      }
      if (err instanceof HttpStatusError && !err.retryable) throw new AbortError(err)
      if (t.file.done > before) throw new AbortError(new Progressed('progressed', { cause: err }))
      // p-retry gives up on a TypeError at once (a bug, it assumes); fetch reports a cut connection as one.
      throw err instanceof TypeError ? new DownloadFailedError(err.message, { cause: err }) : err
    }
  }
}

/** One request from where the partial file ends; 'again' when it had to start over from byte 0. */
async function requestOnce(t: Transfer): Promise<'done' | 'again'> {
  const { file } = t
  if (file.total !== null && file.done === file.total) return 'done'
  const headers: Record<string, string> = { ...t.headers }
  if (file.done > 0) headers['Range'] = `bytes=${file.done}-`
  const res = await t.fetchImpl(t.url, { headers, signal: t.signal, redirect: 'follow' })
  if (res.status === 416 && file.done > 0) {
    // Range starts at or past the end: either the partial is complete or it belongs to another file.
    const range = parseContentRange(res.headers.get('content-range'))
    await discardBody(res)
    if (range?.total === file.done) {
      file.total = file.done
      return 'done'
    }
    await file.restart()
    return 'again'
  }
  if (!res.ok) {
    await discardBody(res)
    throw new HttpStatusError(res.status, t.url)
  }
  await acceptBody(t, res)
  await streamBody(t, res)
  return 'done'
}

/** Checks where the server's bytes start and how many there are, before any is written. */
async function acceptBody(t: Transfer, res: Response): Promise<void> {
  const { file } = t
  let serverTotal: number | null = null
  if (res.status === 206) {
    const range = parseContentRange(res.headers.get('content-range'))
    if (range === null || range.start !== file.done) {
      // A range we did not ask for: start over without Range.
      await discardBody(res)
      await file.restart()
      throw new DownloadFailedError(`${t.label}: the server answered a different byte range than requested.`)
    }
    serverTotal = range.total
  } else {
    // 200: the server sends the whole file (it ignored our Range, or we sent none).
    if (file.done > 0) await file.restart()
    const len = Number(res.headers.get('content-length'))
    if (res.headers.get('content-length') !== null && Number.isSafeInteger(len)) serverTotal = len
  }
  if (serverTotal !== null) {
    if (t.expectedSize !== null && serverTotal !== t.expectedSize) {
      await discardBody(res)
      throw new ChecksumError(t.label, `${t.expectedSize} bytes`, `${serverTotal} bytes`, 'size')
    }
    file.total = serverTotal
  }
  t.meter.setTotal(file.total)
  if (res.body === null) throw new DownloadFailedError(`${t.label}: the server sent no body.`)
}

/** Writes and hashes the body into the partial file; a body that ends early or runs long fails. */
async function streamBody(t: Transfer, res: Response): Promise<void> {
  const { file } = t
  const reader = res.body!.getReader()
  try {
    for (;;) {
      const { value, done: eof } = await reader.read()
      if (eof) break
      await file.append(value)
      if (file.total !== null && file.done > file.total) {
        throw new ChecksumError(t.label, `${file.total} bytes`, `more than ${file.total} bytes`, 'size')
      }
      t.meter.update(file.done)
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined)
    throw err
  } finally {
    reader.releaseLock()
  }
  if (file.total !== null && file.done < file.total) {
    throw new DownloadFailedError(`${t.label}: the connection closed after ${file.done} of ${file.total} bytes.`)
  }
  file.total = file.done
}

/** Checks the whole file against what was published, then gives it its name; a mismatch deletes it. */
async function verifyAndPlace(
  file: PartialFile,
  target: string,
  label: string,
  opts: DownloadFileOptions,
): Promise<DownloadResult> {
  const { expectedSha256 = null, expectedSize = null, expectedGitBlobSha1 = null } = opts
  const { done } = file
  const sha256 = file.hashes.sha256.digest('hex')
  const problem =
    expectedSize !== null && done !== expectedSize
      ? new ChecksumError(label, `${expectedSize} bytes`, `${done} bytes`, 'size')
      : expectedSha256 !== null && sha256 !== expectedSha256.toLowerCase()
        ? new ChecksumError(label, expectedSha256.toLowerCase(), sha256)
        : null
  const sha1 = file.hashes.sha1?.digest('hex') ?? null
  const gitProblem =
    expectedGitBlobSha1 !== null && sha1 !== expectedGitBlobSha1.toLowerCase()
      ? new ChecksumError(label, expectedGitBlobSha1.toLowerCase(), sha1 ?? '', 'git blob id')
      : null
  if (problem ?? gitProblem) {
    await unlink(file.path).catch(() => undefined)
    throw (problem ?? gitProblem) as ChecksumError
  }
  await rename(file.path, target)
  return { path: target, size: done, sha256 }
}

interface Hashes {
  sha256: Hash
  sha1: Hash | null
}

/** `<target>.partial`: the bytes so far, their hashes as they are written, and the size the server announced. */
class PartialFile {
  hashes: Hashes

  private constructor(
    readonly path: string,
    readonly fh: FileHandle,
    public done: number,
    public total: number | null,
    /** The size for the git blob id's header, when one is checked. */
    private readonly blobSize: number | null,
  ) {
    this.hashes = this.newHashes()
  }

  static async open(p: string, expectedSize: number | null, gitBlob: boolean): Promise<PartialFile> {
    const fh = await openPartial(p)
    return new PartialFile(p, fh, (await fh.stat()).size, expectedSize, gitBlob ? expectedSize : null)
  }

  async restart(): Promise<void> {
    await this.fh.truncate(0)
    this.done = 0
    this.hashes = this.newHashes()
  }

  async append(chunk: Uint8Array): Promise<void> {
    await writeAll(this.fh, chunk, this.done)
    this.hashes.sha256.update(chunk)
    this.hashes.sha1?.update(chunk)
    this.done += chunk.byteLength
  }

  /** Hashes the bytes an earlier attempt left, before appending to them. */
  async hashExisting(signal?: AbortSignal): Promise<void> {
    const stream = createReadStream(this.path, { start: 0, end: this.done - 1, highWaterMark: 1 << 20 })
    for await (const chunk of stream) {
      if (signal?.aborted) {
        stream.destroy()
        throw abortError(signal)
      }
      this.hashes.sha256.update(chunk as Buffer)
      this.hashes.sha1?.update(chunk as Buffer)
    }
  }

  /** Closes and deletes the partial (bytes that can never check out). */
  async discard(): Promise<void> {
    await this.fh.close().catch(() => undefined)
    await unlink(this.path).catch(() => undefined)
  }

  private newHashes(): Hashes {
    const sha1 = this.blobSize !== null ? createHash('sha1').update(`blob ${this.blobSize}\0`) : null
    return { sha256: createHash('sha256'), sha1 }
  }
}

async function openPartial(p: string): Promise<FileHandle> {
  try {
    return await open(p, 'r+')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return open(p, 'w+')
    throw err
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
