import type { z } from 'zod'
import { EventMap, type EventName, type EventPayload, type InvokeMap, type InvokeName, type InvokeOutput } from '../../shared/api'

/** The host's own vocabulary: handler signatures typed by the contract, events, and errors people can act on. */

export type HandlerInput<K extends InvokeName> = z.output<(typeof InvokeMap)[K]['input']>
export type Emit = <E extends EventName>(event: E, payload: EventPayload<E>) => void

export interface HandlerContext {
  emit: Emit
}

export type Handler<K extends InvokeName> = (input: HandlerInput<K>, ctx: HandlerContext) => Promise<InvokeOutput<K>>
/** The handlers of some of the contract's methods, each typed by its own schemas. */
export type HandlerMap<K extends InvokeName> = { [N in K]: Handler<N> }

/** A failure a person can act on, with a Result error code. */
export class HostError extends Error {
  override readonly name = 'HostError'
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

/** An emit that drops (and logs) payloads outside the contract rather than sending them. */
export function validatedEmit(send: Emit): Emit {
  return (event, payload) => {
    const parsed = EventMap[event].safeParse(payload)
    if (!parsed.success) {
      console.error(`[engine-host] dropped malformed ${event} event: ${parsed.error.message}`)
      return
    }
    send(event, parsed.data as EventPayload<typeof event>)
  }
}
