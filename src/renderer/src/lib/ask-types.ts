/** The shapes of the ask stream, for components; the engine host validates them against the contract. */
export type {
  AbstainReason,
  AnswerSentence,
  AskEvent,
  AskResult,
  Citation,
  ClosestSection,
  PassagePreview,
  RemovedSentence,
} from '../../../shared/answer'

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
