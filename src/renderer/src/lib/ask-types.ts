import { AskEvent, AskResult, ThreadMessage } from '../../../shared/answer'

/**
 * The ask stream as the renderer reads it. `ask.event` and `threads.get` carry `unknown` in the IPC
 * map, so every payload is checked against the shared schemas (src/shared/answer.ts) before the
 * chat store trusts it: a malformed event is dropped rather than crashing the chat pane.
 */

export type { AbstainReason, AskEvent, AskResult, Citation, ClosestSection, ThreadMessage } from '../../../shared/answer'

export function parseAskEvent(raw: unknown): AskEvent | null {
  const parsed = AskEvent.safeParse(raw)
  if (!parsed.success) {
    console.warn('docent: ignored a malformed ask event', parsed.error.issues[0])
    return null
  }
  return parsed.data
}

export function parseAskResult(raw: unknown): AskResult | null {
  const parsed = AskResult.safeParse(raw)
  return parsed.success ? parsed.data : null
}

export function parseThreadMessage(raw: unknown): ThreadMessage | null {
  const parsed = ThreadMessage.safeParse(raw)
  return parsed.success ? parsed.data : null
}

/** Why an answer abstained, in words a person understands. */
export function describeAbstention(reason: string | null): string {
  switch (reason) {
    case 'no_relevant_sources':
      return 'Nothing in the selected documents was close enough to the question to answer from.'
    case 'not_in_context':
      return 'The closest sections were found, but none of them contains the answer.'
    case 'unverifiable_citations':
      return "An answer was drafted, but its citations didn't check out against the sources, so it isn't shown."
    case 'off_topic':
      return "The question isn't about the documents in your library."
    case 'smalltalk':
      return 'That sounded like conversation rather than a question about your documents.'
    case null:
    case '':
      return 'No answer could be checked against the sources.'
    default:
      return reason.replace(/_/g, ' ')
  }
}
