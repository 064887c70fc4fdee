import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AskResult } from '../../shared/answer'
import type { Engine } from '../engine'
import { engineOverFiles } from '../../test-support/engine-over-files'
import { NOT_IN_CONTEXT, OverlapReranker, ScriptedChat, reply } from './scripted.testutil'
import { calledField, keyPattern, namedInParentheses, nearestWithField } from './release-fields'
import { firstAppears } from './release-counts'

/**
 * The shape of the MCP docs around a tool's `title`: release 2.0's specification gives a tool a
 * `title` field (a field list and a type), 1.0's has tools and no such field, and 1.0's guides,
 * near-copies of the newer ones, list the field anyway. "title" is an everyday word, so 1.0's
 * documents do mention it (in the guide and in a card's title).
 */
const FILES: Record<string, string> = {
  'specification/1.0/tools.md':
    '# Tools\n\n## Tool definition\n\nA tool definition includes:\n\n- name: Unique identifier for the tool\n- description: Human-readable description of functionality\n\n## Calling tools\n\nA client calls a tool with tools/call.\n',
  'specification/1.0/index.md':
    '# Overview\n\n## Server features\n\nSee the card with the title Tools for how servers expose tools.\n',
  'guides/1.0/server-concepts.md':
    '# Server concepts\n\n## Tool discovery\n\nEach tool in the list has:\n\n- name: a unique identifier for the tool\n- title: A human-readable display name for the tool that clients can show to users\n',
  'specification/2.0/tools.md':
    '# Tools\n\n## Tool definition\n\nA tool definition includes:\n\n- name: Unique identifier for the tool\n- title: Optional human-readable name of the tool for display purposes.\n- description: Human-readable description of functionality\n\n## Calling tools\n\nA client calls a tool with tools/call.\n',
  'specification/2.0/schema.md':
    '# Schema\n\n## Tool\n\n```ts\ninterface Tool {\n  name: string;\n  title?: string;\n  description?: string;\n}\n```\n\nDefinition for a tool the client can call.\n',
}
for (const v of ['1.0', '2.0'])
  for (const topic of ['Lifecycle', 'Transports', 'Logging', 'Pagination', 'Sampling', 'Completion'])
    FILES[`specification/${v}/${topic.toLowerCase()}.md`] =
      `# ${topic}\n\n## Overview\n\nThe ${topic.toLowerCase()} section of release ${v} describes its messages.\n`

describe('a field of a feature, which only other releases give it', () => {
  let engine: Engine
  let cleanup: () => Promise<void>
  const reranker = new OverlapReranker()

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(FILES, 'docs'))
  })
  afterAll(async () => {
    await cleanup?.()
  })

  const ask = async (question: string, version: string, chat: ScriptedChat) => {
    const result = await engine.ask(
      { question, scope: { collections: ['docs'], version } },
      { chat, reranker, mode: 'keyword', useCache: false, gate: false },
    )
    expect(AskResult.safeParse(result).success).toBe(true)
    return { result, trace: (await engine.answers.trace(result.trace_id))!.data }
  }

  it('answers that the release has no such field, without the model, naming the first release that has one', async () => {
    const chat = new ScriptedChat([])
    const { result, trace } = await ask('What is the title field on a tool for, in the 1.0 spec?', 'auto', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result).toMatchObject({ abstained: true, reason: 'no_relevant_sources', answer: null })
    expect(result.explanation).toBe(
      'The 1.0 specification never gives tool a "title" field; the 2.0 specification is the first that does.',
    )
    // The word is in 1.0's documents: counted alone, it is "mentioned".
    const title = trace.release!.terms.find((t) => t.term === 'title')!
    expect(title.in_scope_authoritative + title.in_scope_other).toBeGreaterThan(0)
    expect(trace.release).toMatchObject({ releases: ['1.0'], verdict: 'absent_field', verdict_term: 'title' })
  })

  it('lets the model answer where the release has the field', async () => {
    const chat = new ScriptedChat([
      (args) => {
        const n = /<passage n="(\d+)" section="Tools &gt; Tool definition"/.exec(args.user)![1]
        return reply(`A tool's title is an optional human-readable name for display purposes [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask('What is the title field on a tool for, in the 2.0 spec?', 'auto', chat)
    expect(chat.calls).toHaveLength(1)
    expect(trace.release?.verdict).toBe('mentioned')
    expect(result.abstained).toBe(false)
  })

  it('reads a feature and a word the question sets apart in parentheses as a field of that feature', async () => {
    const { result, trace } = await ask(
      'How does a tool get a display name (tool title) in the 1.0 spec?',
      'auto',
      new ScriptedChat([]),
    )
    expect(result.explanation).toBe(
      'The 1.0 specification never gives tool a "title" field; the 2.0 specification is the first that does.',
    )
    expect(trace.release).toMatchObject({ verdict: 'absent_field', verdict_term: 'title' })
    // Where the release has the field, the question goes to the model.
    const chat = new ScriptedChat([
      (args) => {
        const n = /<passage n="(\d+)" section="Tools &gt; Tool definition"/.exec(args.user)![1]
        return reply(`A tool's title is an optional human-readable name for display purposes [${n}].`, [Number(n)])
      },
    ])
    const twin = await ask('How does a tool get a display name (tool title) in the 2.0 spec?', 'auto', chat)
    expect(twin.trace.release?.verdict).toBe('mentioned')
    expect(chat.calls).toHaveLength(1)
  })

  it('says nothing of a word the question does not call a field', async () => {
    const chat = new ScriptedChat([
      (args) => {
        const n = /<passage n="(\d+)" section="Tools &gt; Tool definition"/.exec(args.user)![1]
        return reply(`A tool definition includes a name and a description [${n}].`, [Number(n)])
      },
    ])
    const { trace } = await ask('What goes in the title of a tool in the 1.0 spec?', 'auto', chat)
    expect(trace.release?.verdict).not.toBe('absent_field')
  })
})

describe('what the question calls a field, and what a key is', () => {
  it('reads "the title field", "a field called title" and a quoted name, not "form fields"', () => {
    expect(calledField('What is the title field on a tool for?', 'title')).toBe(true)
    expect(calledField('Is there a field called title on tools?', 'title')).toBe(true)
    expect(calledField('what does the "context" parameter of a completion request hold?', 'context')).toBe(true)
    expect(calledField('Can elicitation form fields come with default values?', 'form')).toBe(false)
    expect(calledField('What goes in the title of a tool?', 'title')).toBe(false)
    expect(calledField('What is the subtitle field for?', 'title')).toBe(false)
  })

  it('reads "(completion context)" as a part of completion, and not a parenthesis that holds no feature before the word', () => {
    const q = 'how does the client ask for argument suggestions that depend on values already filled in (completion context)?'
    expect(namedInParentheses(q, 'context', ['client', 'completion', 'context'])).toBe(true)
    expect(namedInParentheses(q, 'context', ['client'])).toBe(false)
    expect(namedInParentheses('What are the statuses of a task (working, completed, failed)?', 'completed', ['task'])).toBe(false)
    expect(namedInParentheses('Can a server ask for a completion (sampling)?', 'sampling', ['completion', 'sampling'])).toBe(
      false,
    )
  })

  it('matches a key as JSON, a type and a field list write it, and not the word in prose', () => {
    const re = (text: string) => {
      const p = keyPattern('title')
      // The same pattern as PostgreSQL reads it: (?n) makes ^ a line start; ~* ignores case.
      return new RegExp(p.replace('(?n)', ''), 'im').test(text)
    }
    expect(re('{ "name": "calc", "title": "Calculator" }')).toBe(true)
    expect(re('interface Tool {\n  title?: string;\n}')).toBe(true)
    expect(re('- title: Optional human-readable name')).toBe(true)
    expect(re('The title of each card is shown to users.')).toBe(false)
    expect(re('a subtitle: shown below')).toBe(false)
    expect(() => keyPattern('a"b')).toThrow()
  })

  it('names the first later release with the field, else the last earlier one', () => {
    expect(nearestWithField(['2.0', '3.0'], ['1.0'])).toEqual({ version: '2.0', later: true })
    expect(nearestWithField(['1.0', '2.0'], ['3.0'])).toEqual({ version: '2.0', later: false })
  })
})

/**
 * Where a feature first appears is the first release with a section on it, not the first whose
 * sentences put its words side by side: 2024-11-05's specification lists "tools" beside
 * "sampling" among its capabilities, and tools in sampling arrive with 2025-11-25's section.
 */
const TITLES: Record<string, string> = {
  'specification/1.0/index.md':
    '# Overview\n\n## Capabilities\n\nServers offer tools, sampling is offered by clients, and both may log.\n',
  'specification/2.0/sampling.md': '# Sampling\n\n## Requests\n\nA server asks the client for a completion.\n',
  'specification/3.0/sampling.md':
    '# Sampling\n\n## Requests\n\nA server asks the client for a completion.\n\n## Tools in Sampling\n\nA request may carry tools the model can call, and a toolChoice.\n',
}
for (const v of ['1.0', '2.0', '3.0'])
  for (const topic of ['Lifecycle', 'Transports', 'Tools'])
    TITLES[`specification/${v}/${topic.toLowerCase()}.md`] =
      `# ${topic}\n\n## Overview\n\nThe ${topic.toLowerCase()} section of release ${v} describes its messages.\n`

describe('where a feature the release lacks first appears', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(TITLES, 'docs'))
  })
  afterAll(async () => {
    await cleanup?.()
  })

  it('is the first release with a section on it', async () => {
    const chat = new ScriptedChat([])
    const result = await engine.ask(
      { question: 'How do tools in sampling work in 2.0?', scope: { collections: ['docs'], version: 'auto' } },
      { chat, reranker: new OverlapReranker(), mode: 'keyword', useCache: false, gate: false },
    )
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe('The 2.0 docs never mention tools in sampling; it first appears in 3.0.')
  })

  it('is said as an earlier release when only releases before the scoped ones mention it', () => {
    expect(firstAppears('3.0', ['2.0'])).toBe('; it first appears in 3.0')
    expect(firstAppears('1.0', ['2.0'])).toBe('; 1.0, an earlier release, mentions it')
    expect(firstAppears(null, ['2.0'])).toBe('')
  })
})

/** Asks with a model that declines (quoted answers off): the trace, and how often the model was called. */
async function askDeclining(engine: Engine, question: string) {
  const chat = new ScriptedChat([NOT_IN_CONTEXT])
  const result = await engine.ask(
    { question, scope: { collections: ['docs'], version: 'auto' } },
    { chat, reranker: new OverlapReranker(), mode: 'keyword', useCache: false, gate: false, quoteShare: null },
  )
  return { trace: (await engine.answers.trace(result.trace_id))!.data, calls: chat.calls.length }
}

/**
 * A name that a release's specification titles a section with in words: 1.0's "Model Preferences"
 * is its section on `modelPreferences`, which 2.0 titles with the name itself ("ModelPreferences").
 * Read as the name alone, 1.0 mentioned it only in passing, and a question about it was refused.
 */
const NAMED: Record<string, string> = {
  'specification/1.0/sampling.md':
    '# Sampling\n\n## Creating Messages\n\nA server asks for a completion with sampling/createMessage:\n\n```json\n{ "messages": [], "modelPreferences": { "hints": [{ "name": "claude" }] } }\n```\n\n## Model Preferences\n\nServers state their preferences for model selection with hints and priorities: cost, speed and intelligence.\n',
  'specification/2.0/sampling.md':
    '# Sampling\n\n## Creating Messages\n\nA server asks for a completion with sampling/createMessage:\n\n```json\n{ "messages": [], "modelPreferences": { "hints": [{ "name": "claude" }] } }\n```\n\n## ModelPreferences\n\nThe modelPreferences of a request hold hints and priorities. The client MAY ignore modelPreferences.\n\n## Priorities\n\nmodelPreferences priorities are numbers from 0 to 1.\n',
}
for (const v of ['1.0', '2.0'])
  for (const topic of ['Lifecycle', 'Transports', 'Tools'])
    NAMED[`specification/${v}/${topic.toLowerCase()}.md`] =
      `# ${topic}\n\n## Overview\n\nThe ${topic.toLowerCase()} section of release ${v} describes its messages.\n`

describe('a name a release titles a section with in words', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(NAMED, 'docs'))
  })
  afterAll(async () => {
    await cleanup?.()
  })

  it('is a section about it: the question goes to the model', async () => {
    const { trace, calls } = await askDeclining(engine, 'How does a server state its modelPreferences in the 1.0 spec?')
    expect(trace.release?.verdict).toBe('mentioned')
    expect(calls).toBe(1)
  })
})

/**
 * A member written through another receiver: a guide's `req.hostname` is the reference's
 * `request.hostname`. Read as a different name, the release's reference never mentioned it, and
 * the question was refused as one only guides answer.
 */
const MEMBERS: Record<string, string> = {
  'reference/1.0/request.md':
    '# Request\n\n## Properties\n\n- hostname: the hostname of the request, with the port\n\n```js\nconsole.log(req.hostname)\n```\n',
  'reference/2.0/request.md':
    '# Request\n\n## Properties\n\n- host: the host of the request\n- hostname: the hostname, without the port\n- port: the port the request came to\n\n```js\nconsole.log(request.hostname)\n```\n',
  'guides/2.0/migration.md':
    '# Migration\n\n## Requests now have host, hostname and port\n\nIn 1.0, `req.hostname` included the port. In 2.0, `req.host` has that value and `req.port` holds the port.\n',
}
for (const v of ['1.0', '2.0'])
  for (const topic of ['Reply', 'Server', 'Routes'])
    MEMBERS[`reference/${v}/${topic.toLowerCase()}.md`] =
      `# ${topic}\n\n## Overview\n\nThe ${topic.toLowerCase()} page of release ${v} describes its methods.\n`

describe('a member the reference reaches through another receiver', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(MEMBERS, 'docs'))
  })
  afterAll(async () => {
    await cleanup?.()
  })

  it("is the release's own: the question goes to the model", async () => {
    const q = "In 2.0 req.hostname doesn't include the port any more, where did the port go?"
    const { trace, calls } = await askDeclining(engine, q)
    expect(trace.release?.releases).toEqual(['2.0'])
    expect(trace.release?.verdict).not.toBe('guides_only')
    expect(calls).toBe(1)
  })
})
