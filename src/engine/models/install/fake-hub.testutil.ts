import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A tiny stand-in for the Hugging Face hub on 127.0.0.1 (random port), for tests only:
 *   GET /api/models/{repo}/revision/{ref}   -> { sha }
 *   GET /api/models/{repo}/tree/{revision}  -> tree entries (lfs.oid = SHA-256 for LFS files, oid = git blob id)
 *   GET /{repo}/resolve/{revision}/{path}   -> the bytes, honouring Range unless `rangeSupport` is false
 * Files can be served slowly, cut off after N bytes, or served with other bytes than published.
 */

export interface FakeFile {
  path: string
  bytes: Buffer
  /** Stored in LFS (tree lists lfs.oid = SHA-256); default: true for files over 1 KB. */
  lfs?: boolean
  /** Serve these bytes instead of `bytes` (the tree still publishes the hash of `bytes`). */
  servedBytes?: Buffer
  /** Publish this SHA-256 instead of the real one. */
  publishedSha256?: string
}

export interface FakeRepo {
  repo: string
  revision: string
  files: FakeFile[]
}

export interface SeenRequest {
  method: string
  path: string
  range: string | null
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export function gitBlobSha1(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
}

export function randomRevision(): string {
  return randomBytes(20).toString('hex')
}

export class FakeHub {
  readonly repos = new Map<string, FakeRepo>()
  readonly requests: SeenRequest[] = []
  /** Bytes per write and delay between writes (slow serving, so progress and cancel can be observed). */
  chunkSize = 64 * 1024
  chunkDelayMs = 0
  rangeSupport = true
  /** Destroy the socket after this many body bytes, for the next `cutTimes` file requests. */
  cutAfterBytes: number | null = null
  cutTimes = 0
  private server: http.Server | null = null
  private port = 0
  private sockets = new Set<import('node:net').Socket>()

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`
  }

  addRepo(repo: FakeRepo): void {
    this.repos.set(repo.repo, repo)
  }

  fileRequests(): SeenRequest[] {
    return this.requests.filter((r) => r.path.includes('/resolve/'))
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch(() => res.destroy())
    })
    this.server.on('connection', (s) => {
      this.sockets.add(s)
      s.on('close', () => this.sockets.delete(s))
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x')
    const p = decodeURIComponent(url.pathname)
    this.requests.push({ method: req.method ?? 'GET', path: p, range: req.headers.range ?? null })

    let m = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(p)
    if (m) {
      const repo = this.repos.get(m[1]!)
      if (!repo) return json(res, 404, { error: 'Repository not found' })
      return json(res, 200, { id: repo.repo, sha: repo.revision })
    }
    m = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/([^/]+)$/.exec(p)
    if (m) {
      const repo = this.repos.get(m[1]!)
      if (!repo || repo.revision !== m[2]) return json(res, 404, { error: 'Revision not found' })
      const entries: unknown[] = []
      const dirs = new Set<string>()
      for (const f of repo.files) {
        const parts = f.path.split('/')
        for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'))
        const lfs = f.lfs ?? f.bytes.length > 1024
        entries.push({
          type: 'file',
          path: f.path,
          size: f.bytes.length,
          oid: lfs ? randomBytes(20).toString('hex') : gitBlobSha1(f.bytes),
          // JSON leaves out an undefined lfs, as the hub does for files stored in git.
          lfs: lfs ? { oid: f.publishedSha256 ?? sha256(f.bytes), size: f.bytes.length, pointerSize: 134 } : undefined,
        })
      }
      for (const d of dirs) entries.push({ type: 'directory', path: d, oid: randomBytes(20).toString('hex'), size: 0 })
      return json(res, 200, entries)
    }
    m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(p)
    if (m) {
      const repo = this.repos.get(m[1]!)
      const file = repo && repo.revision === m[2] ? repo.files.find((f) => f.path === m![3]) : undefined
      if (!file) return json(res, 404, { error: 'Entry not found' })
      return this.serveFile(req, res, file.servedBytes ?? file.bytes)
    }
    return json(res, 404, { error: 'not found' })
  }

  private async serveFile(req: http.IncomingMessage, res: http.ServerResponse, bytes: Buffer): Promise<void> {
    let start = 0
    const range = req.headers.range
    if (this.rangeSupport && range) {
      const rm = /^bytes=(\d+)-$/.exec(range)
      if (rm) start = Number(rm[1])
      if (start >= bytes.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` })
        return void res.end()
      }
      res.writeHead(206, {
        'Content-Length': bytes.length - start,
        'Content-Range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
        'Accept-Ranges': 'bytes',
        'Content-Type': 'application/octet-stream',
      })
    } else {
      res.writeHead(200, {
        'Content-Length': bytes.length,
        'Content-Type': 'application/octet-stream',
        ...(this.rangeSupport ? { 'Accept-Ranges': 'bytes' } : {}),
      })
    }
    const cut = this.cutAfterBytes !== null && this.cutTimes > 0 ? this.cutAfterBytes : null
    if (cut !== null) this.cutTimes--
    let sent = 0
    let offset = start
    let closed = false
    res.on('close', () => (closed = true))
    while (offset < bytes.length && !closed) {
      const end = Math.min(offset + this.chunkSize, bytes.length, cut !== null ? start + cut : Infinity)
      const chunk = bytes.subarray(offset, end)
      if (chunk.length > 0) {
        const ok = res.write(chunk)
        sent += chunk.length
        offset = end
        if (!ok) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              res.off('drain', done).off('close', done)
              resolve()
            }
            res.on('drain', done).on('close', done)
          })
        }
      }
      if (cut !== null && sent >= cut) {
        // Cut the connection mid-body: flush what was written, close (FIN), then make sure the socket is gone.
        // (A bare destroy() could reset the connection and discard bytes the client had not read yet.)
        req.socket.end()
        setTimeout(() => req.socket.destroy(), 500).unref()
        return
      }
      if (this.chunkDelayMs > 0) await delay(this.chunkDelayMs)
    }
    if (!closed) res.end()
  }
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
  res.end(text)
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
