import { describe, expect, it } from 'vitest'
import type { PromptPassage } from './prompt'
import {
  answerNumbers,
  answerQuotes,
  answerTerms,
  appendMarkers,
  inlineMarkers,
  repeatsQuestion,
  verifyCitations,
} from './verify'

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
    text: 'Implementations SHOULD set timeouts, for example 30 seconds, and send `notifications/cancelled`.',
  },
  {
    n: 3,
    chunk_id: 'c3',
    path: 'docs/guide.md',
    heading: 'Guide',
    kind: 'Docs',
    version: '2025-06-18',
    page: null,
    text: 'A friendly overview of the "ping" request.',
  },
]

const ok = (answer: string, citations: number[], answerable = true) => ({ answerable, answer, citations, unanswered_parts: [] })
const codes = (v: ReturnType<typeof verifyCitations>) => v.problems.map((p) => p.code)

describe('verifyCitations', () => {
  it('accepts a well-formed, fully cited answer', () => {
    const v = verifyCitations(ok('Error -32602 means invalid params [1]. Set timeouts [2].', [1, 2]), passages)
    expect(v.ok).toBe(true)
    expect(v.problems).toEqual([])
    expect(v.warnings).toEqual([])
    expect(v.markers).toEqual([1, 2])
  })

  it('rejects a reply that is not the expected JSON object, accepts one that is', () => {
    expect(codes(verifyCitations(null, passages))).toEqual(['invalid_reply'])
    expect(codes(verifyCitations({ answer: 'x [1]' }, passages))).toEqual(['invalid_reply'])
    expect(codes(verifyCitations({ answerable: true, answer: 'x [1]', citations: ['1'] }, passages))).toEqual(['invalid_reply'])
    expect(verifyCitations({ answerable: true, answer: 'x [1]', citations: [1] }, passages).ok).toBe(true)
  })

  it('rejects a citation number outside the passages given (the grammar does not enforce ranges)', () => {
    const bad = verifyCitations(ok('Invalid params [1][7].', [1, 7]), passages)
    expect(codes(bad)).toEqual(['citation_out_of_range'])
    expect(bad.problems[0]!.message).toContain('[7]')
    expect(bad.problems[0]!.message).toContain('1 to 3')
    expect(codes(verifyCitations(ok('Invalid params [0].', [0]), passages))).toContain('citation_out_of_range')
    expect(verifyCitations(ok('A friendly overview [3].', [3]), passages).ok).toBe(true)
  })

  it('adds an inline marker missing from citations (the markers are what the person sees)', () => {
    const v = verifyCitations(ok('Invalid params [1]. Timeouts [2].', [1]), passages)
    expect(v.ok).toBe(true)
    expect(v.reply!.citations).toEqual([1, 2])
    expect(v.repairs).toEqual([])
  })

  it('drops a listed citation that no marker uses, and says so in the repairs', () => {
    const v = verifyCitations(ok('Invalid params [1].', [1, 2]), passages)
    expect(v.ok).toBe(true)
    expect(v.reply!.citations).toEqual([1])
    expect(v.repairs.map((r) => r.code)).toEqual(['citation_dropped'])
    expect(v.repairs[0]!.message).toContain('2')
  })

  it('places listed citations at the end of an answer that has no markers, then checks them', () => {
    const v = verifyCitations(ok('Unknown tools return error -32602.', [1]), passages)
    expect(v.ok).toBe(true)
    expect(v.reply!.answer).toBe('Unknown tools return error -32602 [1].')
    expect(v.reply!.citations).toEqual([1])
    expect(v.markers).toEqual([1])
    expect(v.repairs.map((r) => r.code)).toEqual(['markers_added'])
    // The claim check runs on the placed citations: a number passage 2 lacks is reported.
    const wrong = verifyCitations(ok('Unknown tools return error -32602.', [2]), passages)
    expect(wrong.ok).toBe(true)
    expect(wrong.unsupported_numbers).toEqual(['-32602'])
    // Out-of-range numbers are never placed: the reply is rejected.
    const bad = verifyCitations(ok('Unknown tools return error -32602.', [1, 9]), passages)
    expect(codes(bad)).toEqual(['citation_out_of_range'])
    expect(bad.repairs).toEqual([])
  })

  it('rejects an answerable reply that cites nothing', () => {
    const bad = verifyCitations(ok('Error -32602 means invalid params.', []), passages)
    expect(codes(bad)).toEqual(['no_citations'])
    expect(verifyCitations(ok('Error -32602 means invalid params [1].', [1]), passages).ok).toBe(true)
  })

  it('rejects an empty answer', () => {
    expect(codes(verifyCitations(ok('   ', [1]), passages))).toContain('empty_answer')
    expect(verifyCitations(ok('Yes [1].', [1]), passages).ok).toBe(true)
  })

  it('warns (without blocking) about a number the cited passages do not contain', () => {
    const bad = verifyCitations(ok('Set timeouts of 45 seconds [2].', [2]), passages)
    expect(bad.ok).toBe(true)
    expect(bad.unsupported_numbers).toEqual(['45'])
    expect(bad.warnings.map((w) => w.code)).toEqual(['unsupported_number'])
    // -32602 is in passage 1, but passage 1 is not cited here: the number must come from a cited passage.
    expect(verifyCitations(ok('Error -32602 [2].', [2]), passages).unsupported_numbers).toEqual(['-32602'])
    const good = verifyCitations(ok('Set timeouts of 30 seconds [2]; error -32602 [1].', [1, 2]), passages)
    expect(good.warnings).toEqual([])
  })

  it('warns about a quoted string the cited passages do not contain', () => {
    const bad = verifyCitations(ok('Send "notifications/abort" [2].', [2]), passages)
    expect(bad.ok).toBe(true)
    expect(bad.unsupported_quotes).toEqual(['notifications/abort'])
    expect(verifyCitations(ok('Send `notifications/cancelled` [2].', [2]), passages).warnings).toEqual([])
  })

  describe('claims the cited passages do not back, without false alarms', () => {
    const doc = (text: string, over: Partial<PromptPassage> = {}): PromptPassage[] => [
      {
        n: 1,
        chunk_id: 'd1',
        path: 'docs/limits.md',
        heading: 'Limits',
        kind: 'Docs',
        version: 'v2.4.1',
        page: null,
        text,
        ...over,
      },
    ]
    const claims = (answer: string, text: string, over: Partial<PromptPassage> = {}) => {
      const v = verifyCitations(ok(answer, [1]), doc(text, over))
      expect(v.ok).toBe(true)
      return [...v.unsupported_numbers, ...v.unsupported_quotes]
    }

    it('flags a number or quote that is not there, as the answer writes it', () => {
      expect(claims('The limit is 1,500 requests [1].', 'The limit is 1,000 requests.')).toEqual(['1,500'])
      expect(claims('Run "docent purge" [1].', 'Run `docent sync` to update.')).toEqual(['docent purge'])
      expect(claims('Version 2.4.2 added it [1].', 'Added in 2.4.1.')).toEqual(['2.4.2'])
      expect(claims('It waits 300 ms [1].', 'It waits 30 ms.')).toEqual(['300'])
    })

    it('does not flag digit groups written differently (1,000 / 1000 / 1 000)', () => {
      expect(claims('The limit is 1000 requests [1].', 'The limit is 1,000 requests.')).toEqual([])
      expect(claims('The limit is 1,000 requests [1].', 'The limit is 1000 requests.')).toEqual([])
      expect(claims('Up to 1,000,000 rows [1].', 'Up to 1\u202F000\u202F000 rows.')).toEqual([])
      expect(claims('The port is 8080 [1].', 'The port is 8080.')).toEqual([])
    })

    it('does not flag list markers, citation markers or single digits', () => {
      expect(claims('Steps:\n1. Open it [1].\n2. Close it [1].\n10. Done [1].', 'Open it, then close it. Done.')).toEqual([])
      expect(claims('It retries 3 times [1].', 'It retries three times.')).toEqual([])
    })

    it('finds version strings and dates in the passage label, path or text', () => {
      expect(claims('Since v2.4.1 [1].', 'Since this release.')).toEqual([])
      expect(claims('In 2025-06-18 it changed [1].', 'It changed.', { path: 'spec/2025-06-18/x.md' })).toEqual([])
    })

    it('finds numbers the passage writes as words, and ranges written with "to"', () => {
      expect(claims('Timeouts of 30 seconds [1].', 'Set a timeout of thirty seconds.')).toEqual([])
      expect(claims('Between 25 and 12 items [1].', 'Between twenty-five and twelve items.')).toEqual([])
      expect(claims('It keeps 10-20 entries [1].', 'It keeps 10 to 20 entries.')).toEqual([])
      expect(claims('It keeps 10-25 entries [1].', 'It keeps 10 to 20 entries.')).toEqual(['10-25'])
    })

    it('matches quotes across Markdown emphasis, code marks, curly quotes, dashes and elisions', () => {
      expect(claims('It says "must not block" [1].', 'The call **must not** block.')).toEqual([])
      expect(claims('Call `tools/list` [1].', 'Call `tools/list` first.')).toEqual([])
      expect(claims('It says “don’t retry” [1].', "It says don't retry.")).toEqual([])
      expect(claims('The "read-only" mode [1].', 'The read–only mode.')).toEqual([])
      expect(claims('It says "servers must ... respond" [1].', 'Servers must always respond.')).toEqual([])
      expect(claims('It says "servers must ... reply" [1].', 'Servers must always respond.')).toEqual(['servers must ... reply'])
    })
  })

  it('counts version labels and paths of cited passages as support for numbers', () => {
    expect(verifyCitations(ok('In 2025-06-18, set timeouts [2].', [2]), passages).warnings).toEqual([])
  })

  it('lets a model abstention through without checking citations (the pipeline abstains)', () => {
    const v = verifyCitations(ok('', [], false), passages)
    expect(v.ok).toBe(true)
    expect(v.reply?.answerable).toBe(false)
  })

  it('reports every problem at once, for the corrective retry', () => {
    const v = verifyCitations(ok('Invalid params [9]. Timeouts [12].', [9, 12]), passages)
    expect(codes(v)).toEqual(['citation_out_of_range'])
    expect(v.problems[0]!.message).toContain('[9], [12]')
    expect(codes(verifyCitations(ok('', [1]), passages))).toEqual(['empty_answer'])
  })
})

describe('appendMarkers', () => {
  it('puts the markers before a closing full stop, after code fences and lists on their own line', () => {
    expect(appendMarkers('It works.', [2])).toBe('It works [2].')
    expect(appendMarkers('It works', [1, 3])).toBe('It works [1][3]')
    expect(appendMarkers('Is it "done."', [1])).toBe('Is it "done [1]."')
    expect(appendMarkers('Run:\n```sh\nnpm ci\n```', [1])).toBe('Run:\n```sh\nnpm ci\n```\n\n[1]')
    expect(appendMarkers('Steps:\n- one\n- two', [1])).toBe('Steps:\n- one\n- two\n\n[1]')
    expect(appendMarkers('Wait...', [1])).toBe('Wait... [1]')
  })
})

describe('answer text parsing', () => {
  it('finds inline markers in their usual forms, not links or indexes', () => {
    expect(inlineMarkers('a [1] b [2, 3] c [4][5] d [6-8]')).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(inlineMarkers('see [the docs](http://x) and items[0] and `arr[1]`')).toEqual([])
  })

  it('keeps numbers whole and skips single digits, list markers and citation markers', () => {
    expect(answerNumbers('1. Use 2025-03-26 and -32602 [3], 404 and 1.5, 3 retries')).toEqual([
      '2025-03-26',
      '-32602',
      '404',
      '1.5',
    ])
  })

  it('finds quoted strings', () => {
    expect(answerQuotes('Use "accept" or `tools/call` or “cancel”')).toEqual(['accept', 'tools/call', 'cancel'])
  })
})

describe('an answer that restates the question', () => {
  const q = 'What must an MCP client put in the resource parameter during the OAuth flow, and on which requests?'
  it('is refused, with a message for the corrective retry', () => {
    const v = verifyCitations(
      ok('An MCP client MUST put in the resource parameter during the OAuth flow, and on which requests? [1][2]', [1, 2]),
      passages,
      q,
    )
    expect(codes(v)).toEqual(['answer_repeats_question'])
    expect(repeatsQuestion('What must a client put in the resource parameter? [1]', q)).toBe(true)
  })
  it('lets a real answer that shares the question words through', () => {
    const answer =
      'The client MUST include the resource parameter, set to the canonical URI of the MCP server, in both authorization requests and token requests [1].'
    expect(repeatsQuestion(answer, q)).toBe(false)
    expect(verifyCitations(ok(answer, [1]), passages, q).problems).toEqual([])
    expect(repeatsQuestion('Yes [1].', 'Is it?')).toBe(false)
  })
})

describe('names in the answer', () => {
  it('finds headers, method paths and identifiers, not plain words', () => {
    expect(
      answerTerms(
        'Send Last-Event-ID and Mcp-Session-Id on tools/call with progressToken or max_tokens, as a well-known, real-time JSON-RPC and/or e.g. Streamable HTTP call [1].',
      ),
    ).toEqual(['Last-Event-ID', 'Mcp-Session-Id', 'tools/call', 'progressToken', 'max_tokens', 'JSON-RPC'])
  })
  it('reports a name the cited passages lack as an unverified claim, and accepts one they hold', () => {
    const v = verifyCitations(ok('Send notifications/cancelled with a Last-Event-ID header [2].', [2]), passages)
    expect(v.ok).toBe(true)
    expect(v.unsupported_terms).toEqual(['Last-Event-ID'])
    expect(v.warnings.map((w) => w.code)).toEqual(['unsupported_term'])
  })
})

describe('a question about a name no passage mentions', () => {
  it('turns an answer about it into "the documents don\'t say"', () => {
    const q = 'How do I resume a dropped stream with Last-Event-ID?'
    const v = verifyCitations(ok('Send the Last-Event-ID header with the last id [2].', [2]), passages, q)
    expect(v.ok).toBe(true)
    expect(v.reply).toMatchObject({ answerable: false, answer: '', citations: [] })
    expect(v.repairs.map((r) => r.code)).toEqual(['subject_not_in_passages'])
    expect(v.repairs[0]!.message).toContain('Last-Event-ID')
  })
  it('leaves an answer alone when a passage given holds the name, cited or not', () => {
    const q = 'What does notifications/cancelled do?'
    const v = verifyCitations(ok('It cancels a request; send notifications/cancelled [1].', [1]), passages, q)
    expect(v.reply!.answerable).toBe(true)
    expect(v.repairs).toEqual([])
    expect(v.unsupported_terms).toEqual(['notifications/cancelled'])
  })
})
