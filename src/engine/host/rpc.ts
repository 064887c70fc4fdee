import {
  AbstractMessageReader,
  AbstractMessageWriter,
  createMessageConnection,
  Disposable,
  Message,
  ResponseError,
  type DataCallback,
  type MessageConnection,
  type MessageWriter,
  type NotificationMessage,
} from 'vscode-jsonrpc/node'
import type { Result } from '../../shared/api'
import { errorMessage } from '../../shared/errors'
import { ErrorCode, ErrorData, errorResult, inputOf, jsonRpcErrorCode, Notify, parseMessage } from './protocol'

/**
 * The host protocol's JSON-RPC connections (vscode-jsonrpc; protocol.ts says what goes over them).
 * Ids, matching answers to requests and the order of handling are the library's; what is ours is the
 * channel under it (a process's message events, an in-process owner, a socket after its hello:
 * socket.ts), the zod check of every arriving message, and turning Results into responses and back.
 */

/**
 * Feeds a connection from a channel whose messages arrive as events: each is checked, a malformed
 * one dropped. A notification that finds nothing queued before it can go to `direct` at once: the
 * connection handles each message a turn of the event loop later, and an in-process owner (which
 * does not yield while its database works) would otherwise hold its events back until it is done.
 */
export class ChannelReader extends AbstractMessageReader {
  private callback: DataCallback | null = null
  private readonly early: Message[] = []
  private readonly afterwards = new Map<Message, () => void>()
  /** Messages given to the connection and not handled yet. */
  private queued = 0

  constructor(
    private readonly log: (message: string) => void,
    private readonly direct?: (method: string, params: unknown) => void,
  ) {
    super()
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback
    for (const m of this.early.splice(0)) callback(m)
    return Disposable.create(() => (this.callback = null))
  }

  deliver(raw: unknown): void {
    const message = parseMessage(raw)
    if (!message) return this.log('dropped a malformed message')
    if (this.direct && this.queued === 0 && Message.isNotification(message)) this.direct(message.method, message.params)
    else this.pass(message)
  }

  /**
   * Runs `fn` once every message delivered before this call has been handled: a process that sent
   * its last events and answers just before it exited has them handled before its exit is.
   */
  afterDelivered(fn: () => void): void {
    if (this.queued === 0) return fn()
    // A marker of this process's own: nothing that arrives over a channel is this object.
    const marker: Message = { jsonrpc: '2.0' }
    this.afterwards.set(marker, fn)
    this.pass(marker)
  }

  /** Called by the connection for each message it handles: true (and its function run) for a marker of afterDelivered. */
  handled(message: Message): boolean {
    this.queued--
    const fn = this.afterwards.get(message)
    if (!fn) return false
    this.afterwards.delete(message)
    fn()
    return true
  }

  private pass(message: Message): void {
    this.queued++
    if (this.callback) this.callback(message)
    else this.early.push(message)
  }
}

/** Writes through `send`; a failed send is logged, never thrown, so a request stays pending until its time-out or its process's end. */
export class ChannelWriter extends AbstractMessageWriter {
  constructor(
    private readonly send: (message: Message) => void | Promise<void>,
    private readonly log: (message: string) => void,
  ) {
    super()
  }

  async write(message: Message): Promise<void> {
    try {
      await this.send(message)
    } catch (err) {
      this.log(`send failed: ${errorMessage(err)}`)
    }
  }

  end(): void {}
}

export function openConnection(reader: ChannelReader, writer: MessageWriter): MessageConnection {
  const connection = createMessageConnection(reader, writer, undefined, {
    messageStrategy: { handleMessage: (message, next) => (reader.handled(message) ? undefined : next(message)) },
  })
  connection.listen()
  return connection
}

/** Sends a notification unless the connection is already gone (a client killed mid-request must not take the owner down). */
export function notify(connection: MessageConnection, method: string, params: object): void {
  try {
    connection.sendNotification(method, params).catch(() => undefined)
  } catch {
    // closed or disposed: nobody is listening any more
  }
}

/**
 * The host's side of a connection: every request goes to `serve` (host.dispatch behind the owner's
 * gate), whose Result becomes the response; `shutdown` calls `onShutdown`.
 */
export function serveRequests(
  connection: MessageConnection,
  serve: (method: string, input: unknown) => Promise<Result<unknown>>,
  onShutdown: () => void,
): void {
  connection.onRequest(async (method, params) => responseOf(await serve(method, inputOf(params))))
  connection.onNotification((method) => {
    if (method === Notify.shutdown) onShutdown()
  })
}

function responseOf(result: Result<unknown>): unknown {
  if (result.ok) return result.value
  const { message, code } = result.error
  return new ResponseError(jsonRpcErrorCode(code), message, code === undefined ? undefined : { code })
}

/** A failed request as the Result the host answered (its `data.code` checked), or as `failed` when the failure was not the host's. */
export function resultOfError(err: unknown): Result<never> {
  if (!(err instanceof ResponseError)) return errorResult(errorMessage(err), ErrorCode.failed)
  const data = ErrorData.safeParse(err.data)
  return errorResult(err.message, data.success ? (data.data?.code ?? undefined) : ErrorCode.failed)
}

/** A notification as a raw message, for a process that hands messages on without a connection of its own. */
export function notificationMessage(method: string, params: object): NotificationMessage {
  return { jsonrpc: '2.0', method, params }
}

export function isNotification(message: unknown, method: string): boolean {
  return Message.isNotification(message as Message) && (message as { method: string }).method === method
}
