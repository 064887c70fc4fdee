import { describe, expect, it } from 'vitest'
import type { PromptPassage } from './prompt'
import { parseAnswerReply, repeatsQuestion, verifyReply, type Verification } from './verify'
import { removalNotice } from './stages/verdict'

const passages: PromptPassage[] = [
  {
    n: 1,
    chunk_id: 'c1',
    path: 'spec/2025-06-18/tools.md',
    heading: 'Tools > Error Handling',
    kind: 'Specification',
    version: '2025-06-18',
    page: null,
    text: 'Unknown tools return JSON-RPC error -32602 (Invalid params).',
  },
  {
    n: 2,
    chunk_id: 'c2',
    path: 'spec/2025-06-18/lifecycle.md',
    heading: 'Lifecycle > Timeouts',
    kind: 'Specification',
    version: '2025-06-18',
    page: null,
    text: 'Implementations SHOULD set timeouts for requests, for example 30 seconds, and send `notifications/cancelled` when a request times out.',
  },
  {
    n: 3,
    chunk_id: 'c3',
    path: 'docs/guide.md',
    heading: 'Guide',
    kind: 'Docs',
    version: '2025-06-18',
    page: null,
    text: 'A friendly overview of the "ping" request, which checks that the other side still answers.',
  },
]

const reply = (sentences: [string, number[]][], answerable = true) => ({
  answerable,
  sentences: sentences.map(([text, cites]) => ({ text, cites })),
  unanswered_parts: [],
})
const codes = (v: Verification) => v.problems.map((p) => p.code)
const removedCodes = (v: Verification) => v.removed.map((r) => r.code)

describe('verifyReply: every sentence against the passages it cites', () => {
  it('keeps well-cited sentences, with their citations in order of first use', async () => {
    const v = await verifyReply(
      reply([
        ['Set timeouts for requests, for example 30 seconds.', [2]],
        ['Unknown tools return error -32602 (Invalid params).', [1]],
      ]),
      passages,
    )
    expect(v.ok).toBe(true)
    expect(v.kept.map((s) => s.cites)).toEqual([[2], [1]])
    expect(v.markers).toEqual([2, 1])
    expect(v.removed).toEqual([])
    expect(v.claims.every((c) => c.ok)).toBe(true)
  })

  it('rejects a reply that is not the expected JSON object, accepts one that is', async () => {
    expect(codes(await verifyReply(null, passages))).toEqual(['invalid_reply'])
    expect(codes(await verifyReply({ sentences: [] }, passages))).toEqual(['invalid_reply'])
    expect(codes(await verifyReply({ answerable: true, sentences: [{ text: 'x', cites: ['1'] }] }, passages))).toEqual([
      'invalid_reply',
    ])
    expect(
      parseAnswerReply({ answerable: true, sentences: [{ text: 'Unknown tools [1] fail.', cites: [] }] })!.sentences,
    ).toEqual([{ text: 'Unknown tools fail.', cites: [1] }])
  })

  it('reads the one-string answers of older replies, sentence by sentence', async () => {
    const legacy = {
      answerable: true,
      answer: 'Unknown tools return -32602 [1]. Set timeouts for requests [2].',
      citations: [1, 2],
    }
    expect(parseAnswerReply(legacy)!.sentences).toEqual([
      { text: 'Unknown tools return -32602.', cites: [1] },
      { text: 'Set timeouts for requests.', cites: [2] },
    ])
    const unmarked = { answerable: true, answer: 'Unknown tools return -32602.', citations: [1] }
    expect(parseAnswerReply(unmarked)!.sentences).toEqual([{ text: 'Unknown tools return -32602.', cites: [1] }])
    expect((await verifyReply(unmarked, passages)).ok).toBe(true)
  })

  it('drops a cited number outside the passages given (the grammar does not enforce ranges), and checks the rest', async () => {
    const v = await verifyReply(reply([['Unknown tools return error -32602.', [1, 7]]]), passages)
    expect(v.ok).toBe(true)
    expect(v.kept[0]!.cites).toEqual([1])
    expect(v.repairs.map((r) => r.code)).toEqual(['citation_dropped'])
    expect(v.repairs[0]!.message).toContain('1 to 3')
  })

  it('gives a sentence that cites nothing the one passage that says it, or removes it', async () => {
    const filled = await verifyReply(reply([['Unknown tools return error -32602.', []]]), passages)
    expect(filled.kept).toEqual([{ text: 'Unknown tools return error -32602.', cites: [1] }])
    expect(filled.repairs.map((r) => r.code)).toEqual(['citation_filled'])
    const orphan = await verifyReply(
      reply([
        ['Unknown tools return error -32602.', [1]],
        ['Servers must restart every night.', []],
      ]),
      passages,
    )
    expect(orphan.kept).toHaveLength(1)
    expect(removedCodes(orphan)).toEqual(['no_citation'])
  })

  it('removes a sentence whose number, quote or name the cited passages lack, and says why', async () => {
    const v = await verifyReply(
      reply([
        ['Unknown tools return error -32602.', [1]],
        ['Set timeouts for requests of 45 seconds.', [2]],
        ['Send "notifications/abort" when a request times out.', [2]],
        ['Send a Last-Event-ID header when a request times out.', [2]],
      ]),
      passages,
    )
    expect(v.ok).toBe(true)
    expect(v.kept.map((s) => s.text)).toEqual(['Unknown tools return error -32602.'])
    expect(removedCodes(v)).toEqual(['unsupported_number', 'unsupported_quote', 'unsupported_name'])
    expect(v.removed[0]!.reason).toBe('the cited passages do not contain the number 45')
    expect(v.unsupported_numbers).toEqual(['45'])
    // -32602 is in passage 1, but only passage 2 is cited: the number must come from a cited
    // passage, so the sentence is cited to passage 1, which says it (and checked against it).
    const moved = await verifyReply(reply([['Error -32602 means invalid params.', [2]]]), passages)
    expect(moved.kept).toEqual([{ text: 'Error -32602 means invalid params.', cites: [1] }])
    expect(moved.repairs.map((r) => r.code)).toEqual(['citation_moved'])
    expect(moved.claims[0]!.repaired).toBe('cited [1] instead of [2], the passage that says it')
  })

  it('cites a sentence its passage supports only in part to the passage that says it word for word', async () => {
    // The shape of the MCP 2025-03-26 transports page: a POST's SSE stream and a GET's SSE stream
    // have rules in the same words, and opposite ones (seen with the real 1.5B model, 2026-12-07).
    const streams: PromptPassage[] = [
      {
        ...passages[0]!,
        n: 1,
        chunk_id: 's1',
        heading: 'Transports > Sending Messages to the Server',
        text: 'If the server initiates an SSE stream, the server MAY send JSON-RPC requests before sending a JSON-RPC response. These messages SHOULD relate to the originating client request.',
      },
      {
        ...passages[0]!,
        n: 2,
        chunk_id: 's2',
        heading: 'Transports > Listening for Messages from the Server',
        text: 'These messages SHOULD be unrelated to any concurrently-running JSON-RPC request from the client.',
      },
    ]
    const sentence = 'These messages SHOULD be unrelated to any concurrently-running JSON-RPC request from the client.'
    const v = await verifyReply(reply([[sentence, [1]]]), streams)
    expect(v.kept).toEqual([{ text: sentence, cites: [2] }])
    expect(v.repairs).toEqual([
      {
        code: 'citation_moved',
        message: `"${sentence}" cited [1], which says only part of it; [2] says it word for word and was cited.`,
      },
    ])
    // Cited to the passage that says it, or said by none word for word, it keeps its citation.
    expect((await verifyReply(reply([[sentence, [2]]]), streams)).kept).toEqual([{ text: sentence, cites: [2] }])
    const partly = 'These messages SHOULD relate to the client request.'
    const kept = await verifyReply(reply([[partly, [1]]]), streams)
    expect(kept.kept).toEqual([{ text: partly, cites: [1] }])
    expect(kept.repairs).toEqual([])
  })

  it('removes a sentence most of whose words the cited passages do not hold', async () => {
    const v = await verifyReply(
      reply([
        ['Unknown tools return error -32602.', [1]],
        ['Servers cache every response on disk for a week.', [1]],
      ]),
      passages,
    )
    expect(removedCodes(v)).toEqual(['words_not_covered'])
    expect(v.claims[1]!.coverage).toBeLessThan(0.6)
  })

  it('removes a sentence that only points at a passage', async () => {
    const v = await verifyReply(
      reply([
        ['Unknown tools return error -32602.', [1]],
        ['Follow the instructions in the document.', [3]],
      ]),
      passages,
    )
    expect(removedCodes(v)).toEqual(['points_only'])
    const only = await verifyReply(reply([['See the steps described in the guide.', [3]]]), passages)
    expect(codes(only)).toEqual(['no_supported_sentence'])
  })

  it('fails the reply when no sentence is supported, naming each reason for the corrective retry', async () => {
    const v = await verifyReply(reply([['Set timeouts of 45 seconds.', [2]]]), passages)
    expect(codes(v)).toEqual(['no_supported_sentence'])
    expect(v.problems[0]!.message).toContain('45')
  })

  it('counts version labels and paths of cited passages as support', async () => {
    expect((await verifyReply(reply([['In 2025-06-18, set timeouts for requests.', [2]]]), passages)).removed).toEqual([])
  })

  it('counts a cited passage’s version as naming a release or version', async () => {
    // h07 with the model: the right answer, removed because "release" and "version" were only in
    // the passage's version, not its words.
    const log: PromptPassage = {
      n: 1,
      chunk_id: 'log',
      path: 'specification/2025-03-26/changelog.mdx',
      heading: 'Key Changes > Major changes',
      kind: 'Specification',
      version: '2025-03-26',
      page: null,
      text: '4. Added comprehensive tool annotations for better describing tool behavior, like whether it is read-only or destructive (PR #185)',
    }
    const said =
      'The release that brought in tool annotations, like marking a tool read-only or destructive, was version 2025-03-26.'
    expect((await verifyReply(reply([[said, [1]]]), [log])).removed).toEqual([])
    // Without a version, the same words are not the passage's.
    expect(removedCodes(await verifyReply(reply([[said, [1]]]), [{ ...log, version: null }]))).toEqual(['words_not_covered'])
  })

  it('removes a sentence the embedding model finds far from every sentence of its passages', async () => {
    const far = await verifyReply(reply([['Unknown tools return error -32602.', [1]]]), passages, {
      similarity: async () => 0.1,
      similarityFloor: 0.5,
    })
    expect(codes(far)).toEqual(['no_supported_sentence'])
    expect(far.claims[0]).toMatchObject({ failure: 'not_similar', best_cosine: 0.1 })
    const near = await verifyReply(reply([['Unknown tools return error -32602.', [1]]]), passages, {
      similarity: async () => 0.8,
      similarityFloor: 0.5,
    })
    expect(near.ok).toBe(true)
    expect(near.claims[0]!.best_cosine).toBe(0.8)
  })

  it('lets a model abstention through without checking (the pipeline abstains)', async () => {
    const v = await verifyReply(reply([], false), passages)
    expect(v.ok).toBe(true)
    expect(v.reply?.answerable).toBe(false)
    expect(codes(await verifyReply(reply([]), passages))).toEqual(['empty_answer'])
  })
})

describe('a number the passage attaches to something else', () => {
  const manual: PromptPassage[] = [
    {
      n: 1,
      chunk_id: 'pa',
      path: 'Pressure_Advance.md',
      heading: 'Tuning pressure advance',
      kind: null,
      version: null,
      page: null,
      text:
        'Print the tuning tower with TUNING_TOWER COMMAND=SET_PRESSURE_ADVANCE PARAMETER=ADVANCE START=0 FACTOR=.020 for long bowden extruders. ' +
        'For direct drive extruders use FACTOR=.005 instead. Then measure the height of the best corner.',
    },
  ]
  const q = 'and what about for direct drive extruders?'

  it('removes ".020 for direct drive" where the passage gives .020 for long bowden extruders', async () => {
    const v = await verifyReply(reply([['For direct drive extruders, run the tuning tower with FACTOR=.020.', [1]]]), manual, {
      question: q,
    })
    expect(codes(v)).toEqual(['no_supported_sentence'])
    expect(v.removed[0]!.code).toBe('misattached')
    expect(v.removed[0]!.reason).toContain('.005')
  })

  it('removes it when only the question names direct drive, and keeps the right number', async () => {
    const bare = await verifyReply(reply([['Run the tuning tower with FACTOR=.020.', [1]]]), manual, { question: q })
    expect(bare.removed.map((r) => r.code)).toEqual(['misattached'])
    const right = await verifyReply(reply([['For direct drive extruders use FACTOR=.005 instead.', [1]]]), manual, {
      question: q,
    })
    expect(right.ok).toBe(true)
    expect(right.removed).toEqual([])
  })

  it('keeps a sentence whose own words place its value, though a question of several parts pairs its words with other values', async () => {
    // Seen on a held-out question: both sentences are the passage's own, and both were removed,
    // because "request" and "accept" of the question sit next to other names in the passage.
    const transport: PromptPassage[] = [
      {
        ...manual[0]!,
        text:
          'Every JSON-RPC message sent from the client MUST be a new HTTP POST request to the MCP endpoint. ' +
          'The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types. ' +
          'If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream or Content-Type: application/json.',
      },
    ]
    const question =
      'When I POST a JSON-RPC request to a Streamable HTTP endpoint, what Accept header do I need and what kinds of responses can the server send back?'
    const v = await verifyReply(
      reply([
        ['Every JSON-RPC message sent from the client MUST be a new HTTP POST request to the MCP endpoint.', [1]],
        ['The client MUST include an Accept header listing application/json and text/event-stream.', [1]],
      ]),
      transport,
      { question },
    )
    expect(v.removed).toEqual([])
    expect(v.kept).toHaveLength(2)
  })

  it('leaves a number alone when the passage gives no other value to pair its words with', async () => {
    const origin: PromptPassage[] = [
      { ...manual[0]!, text: 'If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.' },
    ]
    const v = await verifyReply(reply([['Servers must answer 403 Forbidden for an invalid Origin header.', [1]]]), origin)
    expect(v.ok).toBe(true)
  })
})

describe('an answer that restates the question', () => {
  const q = 'What must an MCP client put in the resource parameter during the OAuth flow, and on which requests?'
  it('is refused, with a message for the corrective retry', async () => {
    const v = await verifyReply(
      reply([['An MCP client MUST put in the resource parameter during the OAuth flow, and on which requests?', [1, 2]]]),
      passages,
      { question: q },
    )
    expect(codes(v)).toEqual(['answer_repeats_question'])
    expect(repeatsQuestion('What must a client put in the resource parameter? [1]', q)).toBe(true)
  })
  it('lets a real answer that shares the question words through', () => {
    const answer =
      'The client MUST include the resource parameter, set to the canonical URI of the MCP server, in both authorization requests and token requests [1].'
    expect(repeatsQuestion(answer, q)).toBe(false)
    expect(repeatsQuestion('Yes [1].', 'Is it?')).toBe(false)
  })
  it('lets "yes" or "no" with the question’s own words answer a yes-or-no question', () => {
    // mcp-docs-people p25 with the real 1.5B model: refused twice as a restatement.
    const polar = 'Since 2025-03-26, has the guidance on what a stdio server may write to stderr changed?'
    expect(repeatsQuestion('Yes, the guidance on what a stdio server may write to stderr has changed [4].', polar)).toBe(false)
    expect(repeatsQuestion('No, a stdio server may still write to stderr [2].', 'Can a stdio server write to stderr?')).toBe(
      false,
    )
    // Not a yes-or-no question, or no yes or no: still a restatement.
    expect(repeatsQuestion('Yes, an MCP client must put in the resource parameter during the OAuth flow [1].', q)).toBe(true)
    expect(repeatsQuestion('The guidance on what a stdio server may write to stderr has changed [4].', polar)).toBe(true)
  })
})

describe('a question about a name no passage mentions', () => {
  it('turns an answer about it into "the documents don\'t say"', async () => {
    const q = 'How do I resume a dropped stream with Last-Event-ID?'
    const v = await verifyReply(reply([['Send the Last-Event-ID header with the last id.', [2]]]), passages, { question: q })
    expect(v.ok).toBe(true)
    expect(v.reply).toMatchObject({ answerable: false, sentences: [] })
    expect(v.repairs.map((r) => r.code)).toEqual(['subject_not_in_passages'])
    expect(v.repairs[0]!.message).toContain('Last-Event-ID')
  })
  it('leaves an answer alone when a passage given holds the name', async () => {
    const q = 'What does notifications/cancelled do?'
    const v = await verifyReply(reply([['Send `notifications/cancelled` when a request times out.', [2]]]), passages, {
      question: q,
    })
    expect(v.reply!.answerable).toBe(true)
    expect(v.repairs).toEqual([])
    expect(v.ok).toBe(true)
  })
})

describe('a copied sentence that says the opposite', () => {
  const spec: PromptPassage[] = [
    {
      ...passages[0]!,
      heading: 'Lifecycle > Initialization',
      text:
        'The client SHOULD NOT send requests other than pings before the server has responded to the initialize request. ' +
        'The server MAY send pings and logging before it receives the initialized notification.',
    },
  ]
  const question = 'Can the client send requests before initialization finishes?'

  it('removes a copy with the "not" dropped, naming the passage sentence', async () => {
    const v = await verifyReply(
      reply([
        ['The client SHOULD send requests other than pings before the server has responded to the initialize request.', [1]],
      ]),
      spec,
      { question },
    )
    expect(removedCodes(v)).toEqual(['opposite'])
    expect(v.removed[0]!.reason).toContain('leaves out the "not"')
    expect(v.removed[0]!.reason).toContain('SHOULD NOT send requests')
    expect(removalNotice(v.removed)).toBe('1 sentence was removed: the cited passages say the opposite.')
  })

  it('removes a copy with a "not" added', async () => {
    const v = await verifyReply(
      reply([['The server may not send pings and logging before it receives the initialized notification.', [1]]]),
      spec,
      { question },
    )
    expect(removedCodes(v)).toEqual(['opposite'])
    expect(v.removed[0]!.reason).toContain('says "not" where the passage sentence')
  })

  it('judges the sentence of a list item that it copies, not the other sentences of the item', async () => {
    // Seen on mcp-docs' fit half: the change log's item goes on "… are no longer …" after the copied sentence.
    const item: PromptPassage[] = [
      {
        ...passages[0]!,
        text:
          '1. Remove protocol-level sessions and the Mcp-Session-Id header from the Streamable HTTP transport. ' +
          'List endpoints are no longer paginated by session.\n2. Make MCP stateless.',
      },
    ]
    const v = await verifyReply(
      reply([['Remove protocol-level sessions and the Mcp-Session-Id header from the Streamable HTTP transport.', [1]]]),
      item,
      { question: 'What changed about sessions?' },
    )
    expect(removedCodes(v)).toEqual([])
  })

  it('keeps a faithful copy, with "shouldn\'t" read as "not", and a sentence that rewords its source', async () => {
    const v = await verifyReply(
      reply([
        ["The client shouldn't send requests other than pings before the server has responded to the initialize request.", [1]],
        ['Before initialization completes, a client is limited to pings, which it may send while it waits for the server.', [1]],
      ]),
      spec,
      { question, coverageFloor: 0.5 },
    )
    expect(removedCodes(v)).toEqual([])
  })
})
