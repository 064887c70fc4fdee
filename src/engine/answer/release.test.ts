import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import type { AskEvent } from '../../shared/answer'
import { AskResult } from '../../shared/answer'
import { AUTHORITATIVE_KINDS, checkRelease, keyTermsOf } from './release'
import { resolveSearchScope } from '../retrieve/search'
import { OverlapReranker, ScriptedChat, reply } from './scripted.testutil'
import type { GenerateArgs } from '../core/model-ports'

/**
 * The release rules on a real engine (on-disk PGlite, real import and keyword index) with a
 * scripted chat model: a release that never mentions what is asked about, one that mentions it
 * only in a guide, and an answer scoped to a release that does not rest on its specification.
 */

const FILES: Record<string, string> = {
  'specification/1.0/tools.md':
    '# Tools\n\n## Calling Tools\n\nA client calls a tool with tools/call and gets its result as text content.\n\n## Errors\n\nAn unknown tool is a protocol error.\n',
  'specification/2.0/tools.md':
    '# Tools\n\n## Calling Tools\n\nA client calls a tool with tools/call and gets text, image or audio content.\n\n## Audio\n\nAudio content carries base64 data and a mimeType such as audio/wav.\n\n' +
    '## Structured Content\n\nA tool may also return structuredContent, a JSON object checked against its outputSchema.\n',
  'specification/2.0/tasks.md':
    '# Tasks\n\n## Tasks\n\nA task tracks a long-running request; poll it with tasks/get until it completes.\n\n## Task Status\n\nA task is working, completed, failed or cancelled.\n',
  // Both releases have elicitation, and "url" and "mode" are ordinary words of 1.0; only 2.0 has its URL mode.
  'specification/1.0/elicitation.md':
    '# Elicitation\n\n## Requests\n\nA server asks the user for input in a form, in plain mode, and may put a URL in its message.\n',
  'specification/2.0/elicitation.md':
    '# Elicitation\n\n## Form Requests\n\nA server asks the user for input in a form.\n\n## URL Mode Elicitation\n\nIn URL mode the server sends the user to a web page.\n\n' +
    '## URL Mode Flow\n\nThe client opens the URL mode page after the user consents.\n',
  // "tick" is a specific feature word of 2.0 (its own section); a section named for messages, a
  // feature word too common to be specific, answers a question on ticks without saying "tick".
  'specification/2.0/clock.md': '# Clock\n\n## Ticks\n\nOne tick is one second of the server clock.\n',
  'specification/2.0/notices.md':
    '# Messages\n\n## Notifications\n\nA server sends notifications/progress with a token and a count every few seconds.\n',
  // A guide of release 1.0 that describes a feature its specification does not have.
  'guides/1.0/overview.md':
    '# Overview\n\n## What servers offer\n\nServers offer tools, and tasks for long-running work, which clients poll until they complete.\n',
  'guides/1.0/setup.md': '# Setup\n\n## Install\n\nInstall the server package and start it with the default port 8080.\n',
  // A guide that says tools/call more often than the 1.0 specification, so keyword search ranks it first.
  'guides/1.0/scripts.md':
    '# Scripts\n\n## Calling from a script\n\nA script sends tools/call, then tools/call again, then tools/call once more, logging each tools/call.\n',
  // 2.0 lets the model use tools while sampling; 1.0 has tools and sampling, never together.
  'specification/2.0/sampling-tools.md':
    '# Sampling\n\n## Tools in Sampling\n\nA server may let the model call tools while the client samples.\n\n' +
    '## Tool Choice\n\nWith tools in sampling, the server also says how the model may choose tools.\n',
  // Extensions: a section of their own in 2.0, one passing mention in 1.0.
  'specification/1.0/architecture.md':
    '# Architecture\n\n## Design\n\nAdditional capabilities can be negotiated through extensions to the protocol.\n\n' +
    '## Batches\n\nSending requests in one array is not supported: batching is not part of this release.\n',
  'specification/2.0/extensions.md':
    '# Extensions\n\n## Extensions\n\nThe extensions field of the capabilities lists the extensions a party supports.\n\n' +
    '## Extension Negotiation\n\nClients and servers agree on extensions before using them; unknown extensions are ignored.\n\n' +
    '## Extension Names\n\nExtensions are named by a reverse domain name.\n\n' +
    '## Batching\n\nA client may send several requests in one array as a batch; the server answers the batch in one array.\n\n' +
    '## Batch Limits\n\nA server may limit the size of a batch.\n',
  // A feature described, not named: "survey" is a word of the questionnaire sections of 2.0 only.
  'specification/2.0/questionnaires.md':
    '# Questionnaires\n\n## Questionnaires\n\nA server can show the user a survey to fill in.\n\n' +
    '## Survey Mode Flow\n\nThe client shows the survey and returns what the user typed.\n\n' +
    '## Survey Mode Security\n\nA survey must not ask for passwords.\n',
  // "type" frames questions ("what type of …") and also begins a feature's name: only 2.0 has type providers.
  'specification/1.0/schemas.md':
    '# Schemas\n\n## Schema Types\n\nEvery message type is checked against a schema; a provider of tools declares its input types.\n',
  'specification/2.0/type-providers.md':
    '# Type Providers\n\n## Type Providers\n\nA type provider infers handler types from a JSON schema.\n\n' +
    '## Scoped Type Providers\n\nType providers can be set for one plugin only.\n',
}
// Sections of other subjects, so that no term of the tests is in a large share of the specification.
for (const v of ['1.0', '2.0'])
  for (const topic of [
    'Lifecycle',
    'Transports',
    'Logging',
    'Pagination',
    'Cancellation',
    'Progress',
    'Ping',
    'Roots',
    'Sampling',
    'Completion',
  ])
    FILES[`specification/${v}/${topic.toLowerCase()}.md`] =
      `# ${topic}\n\n## Overview\n\nThe ${topic.toLowerCase()} section of release ${v} describes its messages and their order.\n\n## Messages\n\nEach message has a method and params.\n`

describe('release rules on a real engine', () => {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []
  const reranker = new OverlapReranker()

  beforeAll(async () => {
    const c = await tempDir()
    const d = await tempDir()
    cleanups.push(c.cleanup, d.cleanup)
    for (const [rel, text] of Object.entries(FILES)) {
      await mkdir(path.dirname(path.join(c.dir, rel)), { recursive: true })
      await writeFile(path.join(c.dir, rel), text)
    }
    engine = await Engine.open({ dataDir: d.dir, modelsDir: path.join(d.dir, 'no-models') })
    expect((await engine.importFolder(c.dir, { collection: 'docs' })).failed).toEqual([])
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  const ask = async (question: string, version: string, chat: ScriptedChat, extra: { quoteShare?: number | null } = {}) => {
    const events: AskEvent[] = []
    const result = await engine.ask(
      { question, scope: { collections: ['docs'], version } },
      { chat, reranker, mode: 'keyword', useCache: false, gate: false, onEvent: (e) => events.push(e), ...extra },
    )
    expect(AskResult.safeParse(result).success).toBe(true)
    return { result, events, trace: (await engine.answers.trace(result.trace_id))!.data }
  }

  it('takes names, quoted names and feature words from the question, leaving version mentions and framing words out', () => {
    const terms = keyTermsOf(
      'In the 1.0 spec, how do I return `structuredContent` with an outputSchema via tools/call? Is PKCE supported?',
      {
        known: ['1.0', '2.0'],
      },
    )
    expect(terms.map((t) => [t.term, t.form])).toEqual(
      expect.arrayContaining([
        ['structuredcontent', 'quoted'],
        ['outputschema', 'identifier'],
        ['tools/call', 'identifier'],
        ['pkce', 'word'],
        ['return', 'word'],
      ]),
    )
    expect(terms.map((t) => t.term)).not.toContain('1.0')
    expect(terms.map((t) => t.term)).not.toContain('spec')
    expect(terms.find((t) => t.term === 'outputschema')!.spelling).toBe('outputSchema')
  })

  it('leaves out the words that ask about change: they name no feature a release could lack', () => {
    // h12 with the model was refused "…the specification, which is what defines changed in that release".
    const terms = keyTermsOf('What changed about tasks in the newest release compared to when they first showed up?', {
      known: ['1.0', '2.0'],
    })
    expect(terms.map((t) => t.term)).toEqual(['tasks'])
  })

  it('answers "the 1.0 docs never mention structuredContent" without the model, naming where it first appears', async () => {
    const chat = new ScriptedChat([])
    const { result, trace } = await ask('How do I return structuredContent from a tool?', '1.0', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result).toMatchObject({ abstained: true, reason: 'no_relevant_sources', answer: null })
    expect(result.explanation).toBe('The 1.0 docs never mention structuredContent; it first appears in 2.0.')
    expect(trace.release).toMatchObject({ releases: ['1.0'], verdict: 'never_mentioned' })
  })

  it('counts a version named in the question as the scope, and a feature word as a term', async () => {
    const chat = new ScriptedChat([])
    const { result } = await ask('How does audio content work in the 1.0 spec?', 'auto', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe('The 1.0 docs never mention audio; it first appears in 2.0.')
  })

  it('counts two ordinary words that name a feature together as a phrase the release never mentions', async () => {
    const chat = new ScriptedChat([])
    const { result, trace } = await ask('How do I use URL mode elicitation to send the user to a web page?', '1.0', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe('The 1.0 docs never mention URL mode; it first appears in 2.0.')
    const phrase = trace.release!.terms.find((t) => t.term === 'url mode')!
    expect(phrase).toMatchObject({ form: 'phrase', in_scope_authoritative: 0, elsewhere: 2 })
    // Each word alone is in 1.0: the words rule could not tell.
    for (const w of ['url', 'mode', 'elicitation'])
      expect(trace.release!.terms.find((t) => t.term === w)!.in_scope_authoritative, w).toBeGreaterThan(0)
  })

  it('reads a feature name that begins with a framing word ("type providers") as a phrase', async () => {
    const chat = new ScriptedChat([])
    const { result, trace } = await ask('How do type providers work?', '1.0', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe('The 1.0 docs never mention type providers; it first appears in 2.0.')
    expect(trace.release!.terms.find((t) => t.term === 'type providers')).toMatchObject({
      form: 'phrase',
      in_scope_authoritative: 0,
    })
    // "What type of …" frames the question: no phrase begins with it.
    const framed = keyTermsOf('What type of content can a tool return?', { known: ['1.0', '2.0'] })
    expect(framed.filter((t) => t.form === 'phrase' && t.term.startsWith('type')).map((t) => t.term)).toEqual([])
  })

  it('leaves a phrase question to the model in the release that has the feature', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Elicitation &gt; URL Mode Elicitation"/.exec(args.user)![1]
        return reply(`In URL mode the server sends the user to a web page [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask('How does URL mode elicitation work?', '2.0', chat)
    expect(chat.calls).toHaveLength(1)
    expect(result.abstained).toBe(false)
    // Its specification passage is cited, though only its heading says "elicitation".
    expect(trace.release).toMatchObject({ verdict: 'mentioned', must_cite_authoritative: true, cited_authoritative: true })
  })

  it('says when only a guide of the release mentions the feature its specification lacks', async () => {
    const chat = new ScriptedChat([])
    const { result, trace } = await ask('How do tasks work?', '1.0', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe(
      'The 1.0 specification does not mention tasks; it appears only in guide pages, which may describe features this release does not have.',
    )
    expect(trace.release!.verdict).toBe('guides_only')
    expect(result.closest.length).toBeGreaterThan(0)
  })

  it('lets the model answer where the release mentions the feature, and keeps the answer that cites its specification', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Tools &gt; Audio" kind="Specification" version="2.0"/.exec(args.user)![1]
        return reply(`Audio content carries base64 data and a mimeType such as audio/wav [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask('How does audio content work?', '2.0', chat)
    expect(result).toMatchObject({ abstained: false })
    expect(trace.release).toMatchObject({ verdict: 'mentioned', must_cite_authoritative: true, cited_authoritative: true })
  })

  it('refuses an answer scoped to a release that rests only on a guide, when the specification defines the term', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Setup &gt; Install"/.exec(args.user)![1]
        return reply(`Call a tool after you install the server package [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask('How does a client call a tool after installing the server package?', '1.0', chat, {
      quoteShare: null,
    })
    expect(chat.calls).toHaveLength(1)
    expect(result).toMatchObject({ abstained: true, reason: 'not_in_context' })
    expect(result.explanation).toContain('does not rest on the 1.0 specification')
    expect(trace.release).toMatchObject({ must_cite_authoritative: true, cited_authoritative: false })
  })

  it("quotes the release's own specification, never its guide, when the model's answer rested on the guide", async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Setup &gt; Install"/.exec(args.user)![1]
        return reply(`Call a tool after you install the server package [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask('How does a client call a tool after installing the server package?', '1.0', chat)
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.sentences!.every((s) => s.added === 'quote')).toBe(true)
    expect(result.citations.length).toBeGreaterThan(0)
    expect(result.citations.every((c) => c.kind === 'Specification' && c.version === '1.0')).toBe(true)
    expect(trace.release).toMatchObject({ must_cite_authoritative: true, cited_authoritative: true })
  })

  it("puts the release's specification first among the passages read when none of them is one, so an answer can rest on it", async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        // Only one passage is read (passages: 1): the 1.0 specification's, not the guide keyword ranks first.
        const n = /<passage n="(\d+)" section="Tools &gt; Calling Tools" kind="Specification" version="1.0"/.exec(args.user)![1]
        return reply(`A client calls a tool with tools/call and gets its result as text content [${n}].`, [Number(n)])
      },
    ])
    const search = await engine.search('How do I send tools/call from a script?', {
      scope: { collections: ['docs'], version: '1.0' },
      mode: 'keyword',
      k: 3,
      rerank: false,
    })
    expect(search.results[0]!.path).toBe('guides/1.0/scripts.md')
    const events: AskEvent[] = []
    const result = await engine.ask(
      { question: 'How do I send tools/call from a script?', scope: { collections: ['docs'], version: '1.0' } },
      { chat, reranker, mode: 'keyword', useCache: false, gate: false, passages: 1, onEvent: (e) => events.push(e) },
    )
    expect(result).toMatchObject({ abstained: false })
    expect(result.citations?.map((c) => c.path)).toEqual(['specification/1.0/tools.md'])
    const trace = (await engine.answers.trace(result.trace_id))!.data
    expect(trace.release).toMatchObject({ must_cite_authoritative: true, cited_authoritative: true })
    expect(trace.release?.authoritative_added).toBe(trace.passages?.[0])
  })

  it('replaces an answer that never names the identifier asked about with the specification sentence that does, and shows what it removed', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Setup &gt; Install"/.exec(args.user)![1]
        return reply(`Call a tool after you install the server package [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask(
      'How does a client call a tool with tools/call after installing the server package?',
      '1.0',
      chat,
    )
    expect(chat.calls).toHaveLength(1)
    // The fault: the drafted sentence is true of its guide passage and says nothing of tools/call.
    expect(result.removed).toEqual([
      expect.objectContaining({ text: 'Call a tool after you install the server package.', code: 'off_target' }),
    ])
    expect(result).toMatchObject({ abstained: false })
    expect(result.sentences).toEqual([
      expect.objectContaining({
        text: 'A client calls a tool with tools/call and gets its result as text content.',
        added: 'quote',
      }),
    ])
    expect(result.citations.map((c) => c.kind)).toEqual(['Specification'])
    expect(result.warnings).toEqual(['1 sentence was removed: it answers something other than what was asked.'])
    expect(trace.release).toMatchObject({ must_cite_authoritative: true, cited_authoritative: true })
  })

  it('keeps an answer that cites the release specification section named for the asked feature, though it lacks the specific word', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Messages &gt; Notifications" kind="Specification" version="2.0"/.exec(
          args.user,
        )![1]
        return reply(`A server sends notifications/progress with a token and a count every few seconds [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask('Which messages tick a job forward with a token count?', '2.0', chat)
    expect(chat.calls).toHaveLength(1)
    // "tick" is the specific word the rule asks for, and the cited passage does not hold it ...
    expect(trace.release).toMatchObject({ verdict: 'mentioned', must_cite_authoritative: true })
    expect(trace.release!.terms.find((t) => t.term === 'tick')!.in_scope_authoritative).toBeGreaterThan(0)
    // ... but its section is named for messages, which the question asks about: the answer stands.
    expect(trace.release!.cited_authoritative).toBe(true)
    expect(result.abstained).toBe(false)
  })

  it('leaves a question about something no release calls a feature to the model (a guide answers it)', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Setup &gt; Install"/.exec(args.user)![1]
        return reply(`Start the server package with the default port 8080 [${n}].`, [Number(n)])
      },
    ])
    const { result, trace } = await ask('Which default port does the server package start on?', '1.0', chat)
    expect(result).toMatchObject({ abstained: false })
    expect(trace.release).toMatchObject({ verdict: 'mentioned', must_cite_authoritative: false })
  })

  it("says the release never mentions another release's section title whose words the question holds apart", async () => {
    const chat = new ScriptedChat([])
    const q = 'How does a server let the model call tools inside a sampling request?'
    const { result, trace } = await ask(q, '1.0', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe('The 1.0 docs never mention tools in sampling; it first appears in 2.0.')
    expect(trace.release!.terms.find((t) => t.form === 'title')).toMatchObject({ in_scope_authoritative: 0, elsewhere: 2 })
    // Each word alone is in 1.0.
    for (const w of ['tools', 'sampling'])
      expect(trace.release!.terms.find((t) => t.term === w)!.in_scope_authoritative, w).toBeGreaterThan(0)
    // In 2.0 the question goes to the model.
    const twin = await ask(q, '2.0', new ScriptedChat([() => ({ answerable: false, sentences: [], unanswered_parts: [] })]))
    expect(twin.trace.release!.verdict).toBe('mentioned')
  })

  it('says when the specification mentions a term only in passing, while another release has a section on it', async () => {
    const chat = new ScriptedChat([])
    const { result, trace } = await ask('What is the extensions field for?', '1.0', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe(
      'The 1.0 specification mentions extensions only in passing, never in a section about it; 2.0 has a section on it.',
    )
    expect(trace.release).toMatchObject({ verdict: 'incidental', verdict_term: 'extensions' })
  })

  it('counts a sentence that says a release lacks the feature as a mention that answers, not a passing one', async () => {
    const chat = new ScriptedChat([() => ({ answerable: false, sentences: [], unanswered_parts: [] })])
    const { trace } = await ask('Can a client send a batch of requests?', '1.0', chat)
    expect(trace.release!.verdict).toBe('mentioned')
    expect(chat.calls).toHaveLength(1)
  })

  it('reads a paraphrase through the sections that use its words: "survey" is what 2.0 calls questionnaires', async () => {
    const chat = new ScriptedChat([])
    const { result, trace } = await ask('Can a server ask the user to fill in a survey?', '1.0', chat)
    expect(chat.calls).toHaveLength(0)
    expect(result.explanation).toBe(
      'The 1.0 docs never mention questionnaires, which is what "survey" is about in the other releases\' specifications; it first appears in 2.0.',
    )
    expect(trace.release).toMatchObject({ verdict: 'paraphrase', verdict_term: 'questionnaires' })
    const twin = await ask(
      'Can a server ask the user to fill in a survey?',
      '2.0',
      new ScriptedChat([() => ({ answerable: false, sentences: [], unanswered_parts: [] })]),
    )
    expect(twin.trace.release!.verdict).toBe('mentioned')
  })

  it('says the release never mentions the title word a word of the question was bridged to, and names that word', async () => {
    // Retrieval bridges a word no passage holds to the nearest section-title word by the embedder
    // (retrieve/bridge.ts; the real model in bridge.real.test.ts); here the bridge is given.
    const question = 'Can a tool send back a recording from a microphone?'
    const bridged = [{ word: 'microphone', term: 'audio', cosine: 0.63 }]
    const scope = (version: string) => resolveSearchScope(engine.db, { collections: ['docs'], version }, question)
    const lacking = await checkRelease(engine.db, await scope('1.0'), question, AUTHORITATIVE_KINDS, bridged)
    expect(lacking.explanation).toBe(
      'The 1.0 docs never mention audio (the documents\' nearest word for "microphone"); it first appears in 2.0.',
    )
    expect(lacking.trace).toMatchObject({ verdict: 'never_mentioned', verdict_term: 'audio' })
    expect(lacking.trace.terms.find((t) => t.term === 'audio')).toMatchObject({ bridged_from: 'microphone' })
    // Without the bridge the question names nothing 1.0 lacks.
    expect((await checkRelease(engine.db, await scope('1.0'), question)).explanation).toBeNull()
    // In the release that has it the bridged word decides nothing: no answer must cite it.
    const has = await checkRelease(engine.db, await scope('2.0'), question, AUTHORITATIVE_KINDS, bridged)
    expect(has.explanation).toBeNull()
    expect(has.mustCite).not.toContain('audio')
    expect(has.featureTerms).not.toContain('audio')
  })

  it('does not apply when no single release was asked about', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const one = /<passage n="(\d+)" section="Tools &gt; Calling Tools" kind="Specification" version="1.0"/.exec(args.user)![1]
        const two = /<passage n="(\d+)" section="Tools &gt; Calling Tools" kind="Specification" version="2.0"/.exec(args.user)![1]
        return {
          answerable: true,
          sentences: [
            { text: 'A client calls a tool with tools/call and gets its result as text content.', cites: [Number(one)] },
            { text: 'A client calls a tool with tools/call and gets text, image or audio content.', cites: [Number(two)] },
            // Cited newest first: the label still reads oldest first. (Each passage says it alone, so both stay cited.)
            { text: 'A client that calls tools/call gets content.', cites: [Number(two), Number(one)] },
          ],
          unanswered_parts: [],
        }
      },
    ])
    const { result, trace } = await ask('What content does a client get back when it calls a tool with tools/call?', 'all', chat)
    expect(trace.release!.verdict).toBe('not_scoped')
    expect(result.abstained).toBe(false)
    // The releases say different things: each sentence names its release, instead of blending them.
    expect(result.sentences!.map((s) => s.version)).toEqual(['1.0', '2.0', '1.0, 2.0'])
    expect(result.answer).toBe(
      '1.0: A client calls a tool with tools/call and gets its result as text content [1]. 2.0: A client calls a tool with tools/call and gets text, image or audio content [2]. 1.0, 2.0: A client that calls tools/call gets content [1][2].',
    )
    expect(result.notices.join(' ')).toContain('say different things')
  })
})
