import { createHash, timingSafeEqual } from 'node:crypto'
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { SocketMessageReader, SocketMessageWriter, type Message } from 'vscode-jsonrpc/node'
import { z } from 'zod'
import { Notify } from './protocol'

/**
 * The local socket an owner serves the host protocol on (protocol.ts), for the CLI, the MCP server
 * and the app's engine process when another process owns the folder: `<data>/docent.sock` (a Unix
 * domain socket, mode 0600 in the 0700 data folder) or a named pipe on Windows.
 *
 * Messages are JSON-RPC in vscode-jsonrpc's framing (a `Content-Length` header, then that many bytes
 * of UTF-8 JSON: the Language Server Protocol's base protocol). The first message a client sends is
 * the `hello` notification with the token from the folder's lock file (store/lock.ts), which only the
 * same user can read; a connection without it is closed before it sees anything. Then the client
 * and the owner speak the host protocol exactly as over the utility process's port.
 */

export const SOCKET_FILE = 'docent.sock'
/** A source.open answer carries a whole PDF (base64); anything bigger is not ours. */
const MAX_MESSAGE = 512 * 2 ** 20
const MAX_HEADER = 1024
const HELLO_TIMEOUT_MS = 5_000

export const Hello = z.object({
  token: z.string().min(1).max(200),
  role: z.enum(['app', 'watch', 'mcp', 'cli', 'engine']),
  pid: z.number().int(),
})
export type Hello = z.infer<typeof Hello>

const HelloMessage = z.object({ jsonrpc: z.literal('2.0'), method: z.literal(Notify.hello), params: Hello })

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

/**
 * A connection on the socket, in vscode-jsonrpc's framing: its reader and writer, a bound on what a
 * message may announce, and an end that comes after the messages already sent.
 */
export class SocketChannel {
  private readonly reader: SocketMessageReader
  private readonly writer: SocketMessageWriter
  private lastWrite: Promise<void> = Promise.resolve()

  constructor(
    readonly socket: net.Socket,
    private readonly onBad: (why: string) => void,
  ) {
    this.reader = new SocketMessageReader(socket)
    // Nothing waits on a half-sent message: no timer that would keep a closing process alive.
    this.reader.partialMessageTimeout = 0
    this.writer = new SocketMessageWriter(socket)
    socket.on('error', () => undefined)
  }

  /**
   * Reads messages off the socket: each whole message goes to `onMessage`; one that announces more
   * than MAX_MESSAGE bytes, or is not JSON, destroys the socket (after `onBad` hears why).
   */
  listen(onMessage: (message: unknown) => void): void {
    limitMessageSize(this.socket, MAX_MESSAGE, (why) => this.bad(why))
    this.reader.onError((err) => {
      // A socket error (the peer went away) is not the peer's fault, and the socket is gone already.
      if (!this.socket.destroyed) this.bad(`a message that is not JSON-RPC (${err.message})`)
    })
    this.reader.listen(onMessage)
  }

  /** Sends one message unless the socket is gone (a client killed mid-request must not take the owner down). */
  send(message: Message): Promise<void> {
    if (this.socket.destroyed || !this.socket.writable) return Promise.resolve()
    this.lastWrite = this.writer.write(message).catch(() => undefined)
    return this.lastWrite
  }

  /** Ends the connection once what was sent has been written. */
  async end(): Promise<void> {
    await this.lastWrite
    this.socket.end()
  }

  private bad(why: string): void {
    if (this.socket.destroyed) return
    this.onBad(why)
    this.socket.destroy()
  }
}

/**
 * vscode-jsonrpc's reader buffers a message whole, whatever size its header announces: this reads
 * the same headers alongside it and calls `onTooBig` for a message that announces more than `max`.
 */
function limitMessageSize(socket: net.Socket, max: number, onTooBig: (why: string) => void): void {
  let header = ''
  let body = 0
  socket.on('data', (chunk: Buffer) => {
    let i = 0
    while (i < chunk.length && !socket.destroyed) {
      if (body > 0) {
        const n = Math.min(body, chunk.length - i)
        body -= n
        i += n
        continue
      }
      header += String.fromCharCode(chunk[i++]!)
      if (header.length > MAX_HEADER) return onTooBig(`a header of more than ${MAX_HEADER} bytes`)
      if (!header.endsWith('\r\n\r\n')) continue
      // A header without a length is the reader's to refuse.
      const length = Number(/content-length:[ \t]*(\d+)/i.exec(header)?.[1] ?? 0)
      header = ''
      if (length > max) return onTooBig(`a message of ${length} bytes`)
      body = length
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
  handlers: {
    onHello: (hello: Hello, channel: SocketChannel) => void
    onMessage: (message: unknown) => void
    onBad: (why: string) => void
  },
): void {
  let hello: Hello | null = null
  const expected = Buffer.from(token, 'utf8')
  const channel = new SocketChannel(socket, handlers.onBad)
  const timer = setTimeout(() => {
    handlers.onBad('no hello in time')
    socket.destroy()
  }, HELLO_TIMEOUT_MS)
  timer.unref()
  socket.on('close', () => clearTimeout(timer))
  channel.listen((message) => {
    if (hello) return handlers.onMessage(message)
    if (socket.destroyed) return
    const parsed = HelloMessage.safeParse(message)
    const given = parsed.success ? Buffer.from(parsed.data.params.token, 'utf8') : Buffer.alloc(0)
    if (!parsed.success || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      handlers.onBad('a connection without the token')
      socket.destroy()
      return
    }
    clearTimeout(timer)
    hello = parsed.data.params
    handlers.onHello(hello, channel)
  })
}

/** Connects to an owner and says hello; rejects when nobody listens there (ENOENT, ECONNREFUSED). */
export function connectSocket(socketPath: string, hello: Hello, onBad: (why: string) => void): Promise<SocketChannel> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath)
    const fail = (err: Error): void => {
      socket.destroy()
      reject(err)
    }
    socket.once('error', fail)
    socket.once('connect', () => {
      socket.off('error', fail)
      const channel = new SocketChannel(socket, onBad)
      void channel.send({ jsonrpc: '2.0', method: Notify.hello, params: hello } as Message)
      resolve(channel)
    })
  })
}
