import { spawn } from 'node:child_process'
import { stat } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { SocketMessageReader } from 'vscode-jsonrpc/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-support/paths'
import { readLock } from '../store/lock'
import { EngineClient } from './client'
import { folderSpawner, type LibraryProcess } from './open-folder'
import { SOCKET_FILE } from './socket'

/**
 * The owner's socket as an attacker or a careless client meets it: only the same user can reach
 * it (0600 in a 0700 folder), nothing is answered before the token from the lock file, and every
 * request is validated as over the app's IPC. The owner is this test process (a real engine on a
 * real folder); the clients are raw connections that write JSON-RPC frames by hand.
 */

/** One message in the socket's framing (LSP's base protocol). */
const frame = (m: unknown): string => {
  const body = JSON.stringify(m)
  return `Content-Length: ${Buffer.byteLength(body, 'utf8')}\r\n\r\n${body}`
}
const request = (id: number, method: string, params: unknown) => ({ jsonrpc: '2.0', id, method, params })
const isReady = (m: unknown) => (m as { method?: string }).method === 'ready'

describe("the owner's socket", () => {
  let data: string
  let owner: EngineClient
  let proc: LibraryProcess | null = null
  let sock: string
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const t = await tempDir('docent-socket-')
    cleanups.push(t.cleanup)
    data = path.join(t.dir, 'index')
    owner = new EngineClient({
      spawn: folderSpawner({ dataDir: data, modelsDir: path.join(t.dir, 'none'), role: 'cli', log: () => {} }, (p) => (proc = p)),
      onEvent: () => {},
      log: () => {},
    })
    expect((await owner.invoke('collections.list', {})).ok).toBe(true)
    expect(proc!.state.kind).toBe('owner')
    sock = path.join(data, SOCKET_FILE)
  })
  afterAll(async () => {
    await owner?.dispose(10_000)
    for (const c of cleanups) await c()
  })

  /** A raw connection: what it receives, and when it closes. */
  function connect() {
    const socket = net.connect(sock)
    const received: unknown[] = []
    const waiters: (() => void)[] = []
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => undefined)
    new SocketMessageReader(socket).listen((m) => {
      received.push(m)
      for (const w of waiters.splice(0)) w()
    })
    const next = (test: (m: unknown) => boolean) =>
      new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no such message; got ${JSON.stringify(received)}`)), 30_000)
        const check = () => {
          const hit = received.find(test)
          if (hit) {
            clearTimeout(timer)
            resolve(hit)
          } else waiters.push(check)
        }
        check()
      })
    const ready = new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    return { socket, received, closed, next, ready, send: (m: unknown) => socket.write(frame(m)) }
  }

  const hello = () => ({
    jsonrpc: '2.0',
    method: 'hello',
    params: { token: readLock(data)!.token, role: 'cli', pid: process.pid },
  })
  const responseTo = (id: number) => (m: unknown) =>
    (m as { method?: string; id?: number }).method === undefined && (m as { id: number }).id === id

  it('lives in the data folder, 0600 inside a 0700 folder', async () => {
    expect((await stat(data)).mode & 0o777).toBe(0o700)
    const st = await stat(sock)
    expect(st.isSocket()).toBe(true)
    expect(st.mode & 0o777).toBe(0o600)
    expect(readLock(data)).toMatchObject({ pid: process.pid, socket: sock })
  })

  it('closes a connection without the token before sending it anything', async () => {
    const c = connect()
    await c.ready
    c.send({ jsonrpc: '2.0', method: 'hello', params: { token: 'f'.repeat(64), role: 'cli', pid: 1 } })
    c.send(request(1, 'collections.list', {}))
    await c.closed
    expect(c.received).toEqual([])
  })

  it('closes a connection that sends an oversized frame', async () => {
    const c = connect()
    await c.ready
    c.send(hello())
    await c.next(isReady)
    c.socket.write('Content-Length: 4294967295\r\n\r\n{')
    await c.closed
  })

  it('validates every request as over IPC: unknown methods, bad input and malformed messages get errors or are dropped', async () => {
    const c = connect()
    await c.ready
    c.send(hello())
    expect(await c.next(isReady)).toMatchObject({ params: { pid: process.pid } })
    c.send(request(1, 'shell.exec', { cmd: 'id' }))
    c.send(request(2, 'search', { query: '', scope: {} }))
    c.send({ jsonrpc: '1.0', id: 3, method: 'collections.list', params: {} })
    c.send(request(4, 'passage.get', { chunkId: 'x'.repeat(500) }))
    c.send(request(5, 'collections.list', {}))
    expect(await c.next(responseTo(1))).toMatchObject({ error: { code: -32601, data: { code: 'unknown_method' } } })
    expect(await c.next(responseTo(2))).toMatchObject({ error: { code: -32602, data: { code: 'invalid_input' } } })
    expect(await c.next(responseTo(4))).toMatchObject({ error: { code: -32602, data: { code: 'invalid_input' } } })
    // The malformed message was dropped, and the connection still answers.
    expect(await c.next(responseTo(5))).toMatchObject({ result: [] })
    expect(c.received.some((m) => (m as { id?: number }).id === 3)).toBe(false)
    c.socket.end()
  })

  it('survives a client that disappears mid-request, and a client shutdown only ends that connection', async () => {
    const c = connect()
    await c.ready
    c.send(hello())
    await c.next(isReady)
    c.send(request(1, 'search', { query: 'anything', scope: {}, mode: 'keyword', rerank: false }))
    c.socket.destroy()
    const d = connect()
    await d.ready
    d.send(hello())
    await d.next(isReady)
    d.send({ jsonrpc: '2.0', method: 'shutdown' })
    await d.closed
    expect((await owner.invoke('collections.list', {})).ok).toBe(true)
    expect(proc!.state.kind).toBe('owner')
  })

  it('refuses another user (the socket and its folder are the same user’s only)', async () => {
    // The fault needs a second user; root can start a process as nobody (CI runs as root).
    expect(process.getuid?.(), 'not root: cannot start a process as another user here').toBe(0)
    const probe = `
      const net = require('net')
      const s = net.connect(${JSON.stringify(sock)})
      s.on('connect', () => { console.log(JSON.stringify({ uid: process.getuid(), result: 'connected' })); s.destroy() })
      s.on('error', (e) => console.log(JSON.stringify({ uid: process.getuid(), result: e.code })))`
    const child = spawn(process.execPath, ['-e', probe], { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    await new Promise((r) => child.once('exit', r))
    const seen = JSON.parse(out) as { uid: number; result: string }
    expect(seen.uid).toBe(65534)
    expect(seen.result).toBe('EACCES')
  })
})
