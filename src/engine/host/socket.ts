import { createHash, timingSafeEqual } from 'node:crypto'
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'

/**
 * The local socket an owner serves the host protocol on (protocol.ts), for the CLI, the MCP server
 * and the app's engine process when another process owns the folder: `<data>/docent.sock` (a Unix
 * domain socket, mode 0600 in the 0700 data folder) or a named pipe on Windows.
 *
 * Frames: a 4-byte big-endian length, then that many bytes of UTF-8 JSON. The first frame a client
 * sends is a hello with the token from the folder's lock file (store/lock.ts), which only the same
 * user can read; a connection without it is closed before it sees anything. Then the client sends
 * ToHost messages and receives FromHost messages, exactly as over the utility process's port.
 */

export const SOCKET_FILE = 'docent.sock'
/** A source.open answer carries a whole PDF (base64); anything bigger is not ours. */
const MAX_FRAME = 512 * 2 ** 20
const HELLO_TIMEOUT_MS = 5_000

export const Hello = z.object({
  type: z.literal('hello'),
  token: z.string().min(1).max(200),
  role: z.enum(['app', 'watch', 'mcp', 'cli', 'engine']),
  pid: z.number().int(),
})
export type Hello = z.infer<typeof Hello>

const hash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16)

/** Where a data folder's owner listens. */
export function socketPathFor(dataDir: string): string {
  const abs = path.resolve(dataDir)
  if (process.platform === 'win32') return `\\\\.\\pipe\\docent-${hash(abs.toLowerCase())}`
  const p = path.join(abs, SOCKET_FILE)
  // sun_path holds 104 bytes on macOS, 108 on Linux: a deep data folder gets a private folder of the user's instead.
  if (Buffer.byteLength(p) < 100) return p
  const base = process.env['XDG_RUNTIME_DIR'] || os.tmpdir()
  return path.join(base, `docent-${process.getuid?.() ?? 'user'}`, `${hash(abs)}.sock`)
}

export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8')
  const head = Buffer.alloc(4)
  head.writeUInt32BE(body.length)
  return Buffer.concat([head, body])
}

/** Writes one frame unless the socket is gone (a client killed mid-request must not take the owner down). */
export function sendFrame(socket: net.Socket, message: unknown): void {
  if (socket.destroyed || !socket.writable) return
  socket.write(encodeFrame(message))
}

/**
 * Reads frames off a socket: each whole frame's JSON goes to `onMessage`; an oversized or
 * unparseable frame destroys the socket (after `onBad` hears why).
 */
export function readFrames(socket: net.Socket, onMessage: (message: unknown) => void, onBad: (why: string) => void): void {
  let buffer: Buffer = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => {
    buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk
    while (buffer.length >= 4) {
      const size = buffer.readUInt32BE(0)
      if (size > MAX_FRAME) {
        onBad(`a frame of ${size} bytes`)
        socket.destroy()
        return
      }
      if (buffer.length < 4 + size) return
      const body = buffer.subarray(4, 4 + size).toString('utf8')
      buffer = buffer.subarray(4 + size)
      let message: unknown
      try {
        message = JSON.parse(body)
      } catch {
        onBad('a frame that is not JSON')
        socket.destroy()
        return
      }
      onMessage(message)
      if (socket.destroyed) return
    }
  })
}

/** A private folder for a socket outside the data folder: created 0700, and refused if someone else owns it. */
function privateSocketFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const st = lstatSync(dir)
  if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0)
    throw new Error(`${dir} is not a private folder of this user; the socket cannot be put there`)
}

/**
 * Listens on `socketPath`. The caller holds the folder's lock, so a socket file already there is a
 * dead owner's and is removed first. The socket is created under umask 0177 (so it is 0600 from the
 * start: no moment when another user could connect) and chmod-ed to 0600 again.
 */
export async function listenSocket(socketPath: string, onConnection: (socket: net.Socket) => void): Promise<net.Server> {
  const posix = process.platform !== 'win32'
  if (posix) {
    const dir = path.dirname(socketPath)
    if (path.basename(socketPath) !== SOCKET_FILE) privateSocketFolder(dir)
    try {
      unlinkSync(socketPath)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
  }
  const server = net.createServer(onConnection)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.once('listening', () => {
      server.off('error', reject)
      resolve()
    })
    // Node binds a path synchronously inside listen(), so the umask covers exactly the bind.
    const previous = posix ? process.umask(0o177) : null
    try {
      server.listen(socketPath)
    } finally {
      if (previous !== null) process.umask(previous)
    }
  })
  if (posix) chmodSync(socketPath, 0o600)
  return server
}

/**
 * Accepts a connection once its hello carries `token`; until then nothing is sent to it, and it is
 * closed after HELLO_TIMEOUT_MS without one. Messages after the hello go to `onMessage`.
 */
export function acceptClient(
  socket: net.Socket,
  token: string,
  handlers: { onHello: (hello: Hello) => void; onMessage: (message: unknown) => void; onBad: (why: string) => void },
): void {
  let hello: Hello | null = null
  const expected = Buffer.from(token, 'utf8')
  const timer = setTimeout(() => {
    handlers.onBad('no hello in time')
    socket.destroy()
  }, HELLO_TIMEOUT_MS)
  timer.unref()
  socket.on('error', () => undefined)
  socket.on('close', () => clearTimeout(timer))
  readFrames(
    socket,
    (message) => {
      if (hello) return handlers.onMessage(message)
      const parsed = Hello.safeParse(message)
      const given = parsed.success ? Buffer.from(parsed.data.token, 'utf8') : Buffer.alloc(0)
      if (!parsed.success || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        handlers.onBad('a connection without the token')
        socket.destroy()
        return
      }
      clearTimeout(timer)
      hello = parsed.data
      handlers.onHello(hello)
    },
    handlers.onBad,
  )
}

/** Connects to an owner and says hello; rejects when nobody listens there (ENOENT, ECONNREFUSED). */
export function connectSocket(socketPath: string, hello: Omit<Hello, 'type'>): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath)
    const fail = (err: Error): void => {
      socket.destroy()
      reject(err)
    }
    socket.once('error', fail)
    socket.once('connect', () => {
      socket.off('error', fail)
      socket.on('error', () => undefined)
      sendFrame(socket, { type: 'hello', ...hello })
      resolve(socket)
    })
  })
}
