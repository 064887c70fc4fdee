import { createReadStream } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { CONTENT_SECURITY_POLICY } from '../../src/main/security'

/**
 * A tiny static server for the built renderer, on 127.0.0.1 only. It sends the same
 * Content-Security-Policy header the Electron main process sets on every response, so the
 * browser e2e runs the renderer under the app's real policy.
 */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
}

export interface StaticServer {
  url: string
  close(): Promise<void>
}

export async function serveStatic(rootDir: string): Promise<StaticServer> {
  const root = await realpath(rootDir)
  const server = http.createServer((req, res) => {
    void (async () => {
      const reply = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-security-policy': CONTENT_SECURITY_POLICY })
        res.end(body)
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed')
      let rel: string
      try {
        rel = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname)
      } catch {
        return reply(400, 'bad request')
      }
      if (rel.endsWith('/')) rel += 'index.html'
      let file: string
      try {
        file = await realpath(path.join(root, rel))
      } catch {
        return reply(404, 'not found')
      }
      if (file !== root && !file.startsWith(root + path.sep)) return reply(403, 'forbidden')
      const st = await stat(file).catch(() => null)
      if (!st?.isFile()) return reply(404, 'not found')
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'content-length': st.size,
        'content-security-policy': CONTENT_SECURITY_POLICY,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      })
      if (req.method === 'HEAD') return res.end()
      createReadStream(file).pipe(res)
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
