import { spawn } from 'node:child_process'
import { stat } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-support/paths'
import { readLock } from '../store/lock'
import { EngineClient } from './client'
import { librarySpawner, type LibraryProcess } from './library'
import { encodeFrame, readFrames, SOCKET_FILE } from './socket'

/**
 * The owner's socket as an attacker or a careless client meets it: only the same user can reach
 * it (0600 in a 0700 folder), nothing is answered before the token from the lock file, and every
 * request is validated as over the app's IPC. The owner is this test process (a real engine on a
 * real folder); the clients are raw connections.
 */

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
      spawn: librarySpawner({ dataDir: data, modelsDir: path.join(t.dir, 'none'), role: 'cli', log: () => {} }, (p) => (proc = p)),
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
    readFrames(
      socket,
      (m) => {
        received.push(m)
        for (const w of waiters.splice(0)) w()
      },
      () => {},
    )
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
    return { socket, received, closed, next, ready, send: (m: unknown) => socket.write(encodeFrame(m)) }
  }

  const hello = () => ({ type: 'hello', token: readLock(data)!.token, role: 'cli', pid: process.pid })
  const responseTo = (id: number) => (m: unknown) => (m as { type?: string; id?: number }).type === 'response' && (m as { id: number }).id === id

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
    c.send({ type: 'hello', token: 'f'.repeat(64), role: 'cli', pid: 1 })
    c.send({ type: 'request', id: 1, method: 'collections.list', input: {} })
    await c.closed
    expect(c.received).toEqual([])
  })

  it('closes a connection that sends an oversized frame', async () => {
    const c = connect()
    await c.ready
    c.send(hello())
    await c.next((m) => (m as { type: string }).type === 'ready')
    const head = Buffer.alloc(4)
    head.writeUInt32BE(0xffffffff)
    c.socket.write(head)
    await c.closed
  })

  it('validates every request as over IPC: unknown methods, bad input and malformed messages get errors or are dropped', async () => {
    const c = connect()
    await c.ready
    c.send(hello())
    expect(await c.next((m) => (m as { type: string }).type === 'ready')).toMatchObject({ pid: process.pid })
    c.send({ type: 'request', id: 1, method: 'shell.exec', input: { cmd: 'id' } })
    c.send({ type: 'request', id: 2, method: 'search', input: { query: '', scope: {} } })
    c.send({ type: 'request', id: -3, method: 'collections.list', input: {} })
    c.send({ type: 'request', id: 4, method: 'passage.get', input: { chunkId: 'x'.repeat(500) } })
    c.send({ type: 'request', id: 5, method: 'collections.list', input: {} })
    expect(await c.next(responseTo(1))).toMatchObject({ result: { ok: false, error: { code: 'unknown_method' } } })
    expect(await c.next(responseTo(2))).toMatchObject({ result: { ok: false, error: { code: 'invalid_input' } } })
    expect(await c.next(responseTo(4))).toMatchObject({ result: { ok: false, error: { code: 'invalid_input' } } })
    // The malformed message was dropped, and the connection still answers.
    expect(await c.next(responseTo(5))).toMatchObject({ result: { ok: true, value: [] } })
    expect(c.received.some((m) => (m as { id?: number }).id === -3)).toBe(false)
    c.socket.end()
  })

  it('survives a client that disappears mid-request, and a client shutdown only ends that connection', async () => {
    const c = connect()
    await c.ready
    c.send(hello())
    await c.next((m) => (m as { type: string }).type === 'ready')
    c.send({ type: 'request', id: 1, method: 'search', input: { query: 'anything', scope: {}, mode: 'keyword', rerank: false } })
    c.socket.destroy()
    const d = connect()
    await d.ready
    d.send(hello())
    await d.next((m) => (m as { type: string }).type === 'ready')
    d.send({ type: 'shutdown' })
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
