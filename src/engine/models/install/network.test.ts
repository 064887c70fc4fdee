import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { CatalogEntry } from './catalog'
import { FakeHub, randomRevision, sha256 } from './fake-hub.testutil'
import { ModelManager } from './manager'
import { chooseDownloadFetch, envProxyFetch, proxySettingsFromEnv, type DownloadFetch } from './network'

/**
 * Downloads through a proxy, on loopback only: a small HTTP proxy (CONNECT tunnels, and absolute-URI
 * requests, which a proxy receives for plain-HTTP targets when the client does not tunnel) in front
 * of the fake hub. Electron's net.fetch cannot run here (no Electron binary): its selection is tested
 * with a fake `net`.
 */

interface ProxySeen {
  method: string
  target: string
}

class TestProxy {
  readonly seen: ProxySeen[] = []
  private readonly sockets = new Set<net.Socket>()
  private readonly server = http.createServer((req, res) => this.forward(req, res))
  private port = 0

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  async start(): Promise<void> {
    this.server.on('connection', (s) => this.track(s))
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      this.seen.push({ method: 'CONNECT', target: req.url ?? '' })
      const m = /^(127\.0\.0\.1):(\d+)$/.exec(req.url ?? '')
      if (!m) {
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n')
        return
      }
      const upstream = this.track(
        net.connect(Number(m[2]), m[1]!, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
          if (head.length > 0) upstream.write(head)
          upstream.pipe(client)
          client.pipe(upstream)
        }),
      )
      upstream.on('error', () => client.destroy())
      client.on('error', () => upstream.destroy())
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    const address: AddressInfo | string | null = this.server.address()
    if (address === null || typeof address === 'string') throw new Error('the test proxy has no TCP address')
    this.port = address.port
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private track(s: net.Socket): net.Socket {
    this.sockets.add(s)
    s.on('close', () => this.sockets.delete(s))
    return s
  }

  /** A plain-HTTP request in absolute form (`GET http://host:port/path`), forwarded to loopback only. */
  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.seen.push({ method: req.method ?? 'GET', target: req.url ?? '' })
    let target: URL
    try {
      target = new URL(req.url ?? '')
    } catch {
      res.writeHead(400).end()
      return
    }
    if (target.hostname !== '127.0.0.1' || target.protocol !== 'http:') {
      res.writeHead(403).end()
      return
    }
    const upstream = http.request(
      { host: '127.0.0.1', port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  }
}

const KB = 1024

describe('proxy variables', () => {
  it('reads lower-case names first, treats empty as unset, and lets https fall back to the http proxy', () => {
    expect(proxySettingsFromEnv({})).toBeNull()
    expect(proxySettingsFromEnv({ NO_PROXY: 'example.org' })).toBeNull()
    expect(proxySettingsFromEnv({ HTTP_PROXY: 'http://127.0.0.1:1', http_proxy: 'http://127.0.0.1:2' })).toEqual({
      httpProxy: 'http://127.0.0.1:2',
      httpsProxy: 'http://127.0.0.1:2',
      noProxy: '',
    })
    expect(
      proxySettingsFromEnv({
        http_proxy: '',
        HTTP_PROXY: 'http://127.0.0.1:1',
        HTTPS_PROXY: 'http://127.0.0.1:3',
        no_proxy: 'a,b',
      }),
    ).toEqual({ httpProxy: 'http://127.0.0.1:1', httpsProxy: 'http://127.0.0.1:3', noProxy: 'a,b' })
    expect(proxySettingsFromEnv({ https_proxy: 'http://127.0.0.1:3' })).toEqual({
      httpProxy: '',
      httpsProxy: 'http://127.0.0.1:3',
      noProxy: '',
    })
  })
})

describe('choosing the download fetch', () => {
  const fakeNet = (): { fetch: DownloadFetch; calls: string[]; loads: number } => {
    const state = {
      calls: [] as string[],
      loads: 0,
      fetch: (async (url: string) => {
        state.calls.push(url)
        return new Response('from net')
      }) satisfies DownloadFetch,
    }
    return state
  }

  it("uses Electron's net.fetch in an Electron utility process, whatever the proxy variables say", async () => {
    const net = fakeNet()
    const chosen = chooseDownloadFetch(
      {
        electronVersion: '41.7.1',
        processType: 'utility',
        loadElectronNet: () => {
          net.loads++
          return net
        },
      },
      { HTTPS_PROXY: 'http://127.0.0.1:1' },
    )
    expect(chosen.route).toBe('electron-net')
    expect(net.loads).toBe(1)
    const res = await chosen.fetch('https://models.invalid/x', { headers: { Range: 'bytes=5-' } })
    expect(await res.text()).toBe('from net')
    expect(net.calls).toEqual(['https://models.invalid/x'])
  })

  it('never loads Electron outside a utility process, and follows the proxy variables in plain Node', () => {
    const net = fakeNet()
    const load = (): { fetch: DownloadFetch } => {
      net.loads++
      return net
    }
    const node = { electronVersion: undefined, processType: undefined, loadElectronNet: load }
    expect(chooseDownloadFetch(node, {}).route).toBe('direct')
    expect(chooseDownloadFetch(node, { HTTPS_PROXY: 'http://127.0.0.1:1' }).route).toBe('env-proxy')
    // Electron's main process (not where the engine runs) and a Node that merely claims a type.
    expect(chooseDownloadFetch({ ...node, electronVersion: '41.7.1', processType: 'browser' }, {}).route).toBe('direct')
    expect(chooseDownloadFetch({ ...node, processType: 'utility' }, {}).route).toBe('direct')
    expect(net.loads).toBe(0)
  })
})

describe('model downloads through a proxy (loopback)', () => {
  let hub: FakeHub
  let proxy: TestProxy
  let modelsDir: string
  let catalog: CatalogEntry[]
  const gguf = Buffer.concat([Buffer.from('GGUF'), randomBytes(300 * KB)])

  beforeEach(async () => {
    hub = new FakeHub()
    const revision = randomRevision()
    hub.addRepo({ repo: 'test/llm', revision, files: [{ path: 'tiny-Q4_K_M.gguf', bytes: gguf }] })
    await hub.start()
    proxy = new TestProxy()
    await proxy.start()
    modelsDir = await mkdtemp(path.join(os.tmpdir(), 'docent-proxy-'))
    const base = {
      parameters: '1M',
      licence: 'MIT',
      approxRamBytes: 1,
      isDefault: true,
      pin: 'trust-on-first-use',
    } satisfies Partial<CatalogEntry>
    catalog = [
      {
        ...base,
        id: 'test-llm',
        role: 'llm',
        displayName: 'test llm',
        repo: 'test/llm',
        revision: null,
        files: [{ path: 'tiny-Q4_K_M.gguf', size: null, sha256: null, approxBytes: 1000 }],
        installName: 'tiny-Q4_K_M.gguf',
      },
      {
        ...base,
        id: 'test-embed',
        role: 'embedding',
        displayName: 'unused',
        repo: 'test/embed',
        revision: null,
        files: [],
        installName: 'test-embed',
      },
      {
        ...base,
        id: 'test-rerank',
        role: 'reranker',
        displayName: 'unused',
        repo: 'test/rerank',
        revision: null,
        files: [],
        installName: 'test-rerank',
      },
    ]
  })
  afterEach(async () => {
    vi.unstubAllEnvs()
    await Promise.all([hub.close(), proxy.close()])
    await rm(modelsDir, { recursive: true, force: true })
  })

  const hubHostPort = (): string => new URL(hub.endpoint).host

  async function downloadWith(fetchImpl: DownloadFetch | undefined): Promise<void> {
    const retry = { maxAttempts: 2, backoffMs: 10 }
    const manager = new ModelManager(modelsDir, { endpoint: hub.endpoint, catalog, retry, ...(fetchImpl ? { fetchImpl } : {}) })
    const model = await manager.download('llm')
    expect(model.files[0]?.sha256).toBe(sha256(gguf))
    expect((await readFile(model.path)).equals(gguf)).toBe(true)
  }

  it('goes through the proxy named by HTTP_PROXY, and succeeds', async () => {
    await downloadWith(envProxyFetch({ HTTP_PROXY: proxy.url }))
    expect(proxy.seen.length).toBeGreaterThan(0)
    // Every request reached the proxy first: a tunnel to the hub, or an absolute URI on the hub.
    for (const s of proxy.seen) {
      if (s.method === 'CONNECT') expect(s.target).toBe(hubHostPort())
      else expect(new URL(s.target).host).toBe(hubHostPort())
    }
    expect(hub.fileRequests().length).toBeGreaterThan(0)
  })

  it('prefers the lower-case variable (a dead upper-case proxy is never tried)', async () => {
    await downloadWith(envProxyFetch({ http_proxy: proxy.url, HTTP_PROXY: 'http://127.0.0.1:1' }))
    expect(proxy.seen.length).toBeGreaterThan(0)
  })

  it('goes direct when NO_PROXY covers the host', async () => {
    await downloadWith(envProxyFetch({ HTTP_PROXY: proxy.url, NO_PROXY: 'localhost,127.0.0.1' }))
    expect(proxy.seen).toEqual([])
    expect(hub.fileRequests().length).toBeGreaterThan(0)
  })

  it("is the manager's default: the process's proxy variables, read when the download starts", async () => {
    // Set after the manager exists: the variables are read at download time, not at construction.
    const mm = new ModelManager(modelsDir, { endpoint: hub.endpoint, catalog, retry: { maxAttempts: 2, backoffMs: 10 } })
    for (const name of ['http_proxy', 'https_proxy', 'no_proxy', 'HTTPS_PROXY', 'NO_PROXY']) vi.stubEnv(name, '')
    vi.stubEnv('HTTP_PROXY', proxy.url)
    const model = await mm.download('llm')
    expect(model.files[0]?.sha256).toBe(sha256(gguf))
    expect(proxy.seen.length).toBeGreaterThan(0)
  })

  it('goes direct by default when no proxy variable is set', async () => {
    for (const name of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY']) vi.stubEnv(name, '')
    await downloadWith(undefined)
    expect(proxy.seen).toEqual([])
  })
})
