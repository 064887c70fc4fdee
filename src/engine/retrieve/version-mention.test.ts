import { describe, expect, it } from 'vitest'
import { detectVersionIntent, findVersionMentions, removeVersionMentions } from './version-mention'

const DATED = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', 'draft']
const SEMVER = ['v1.0', 'v1.2', '2.0.x', 'next']

const named = (q: string, known = DATED) => findVersionMentions(q, known).map((m) => m.version)
const stripped = (q: string, known = DATED) => removeVersionMentions(q, findVersionMentions(q, known))

describe('findVersionMentions: exact version names', () => {
  it.each([
    ['In MCP 2025-11-25, what does a server do with a bad Origin?', '2025-11-25'],
    ['what content types can a tool result contain in the 2024-11-05 spec?', '2024-11-05'],
    ['v2025-06-18: can a tool return a resource link?', '2025-06-18'],
    ["What is in 2025-06-18's elicitation schema?", '2025-06-18'],
    ['Per the 2025-03-26 specification, must servers support DCR?', '2025-03-26'],
    ['(2025-03-26) batching?', '2025-03-26'],
    ['In the draft spec, how does a client subscribe?', 'draft'],
    ['what does the draft say about deprecations?', 'draft'],
    ['Draft: how long do deprecated features stay?', 'draft'],
    ['Is batching still in the DRAFT?', 'draft'],
    ['the draft MCP spec: subscriptions?', 'draft'],
  ])('%s -> %s', (q, v) => {
    expect(named(q)).toEqual([v])
  })

  it.each([
    ['How do I configure retries in v1.2?', 'v1.2'],
    ['How do I configure retries in 1.2?', 'v1.2'],
    ['does 2.0.x support streaming?', '2.0.x'],
    ['does 2.0 support streaming?', '2.0.x'],
    ['What ships in the next release?', 'next'],
    ['Is it in version 1.0?', 'v1.0'],
  ])('semver and word names: %s -> %s', (q, v) => {
    expect(named(q, SEMVER)).toEqual([v])
  })

  it.each([
    'Which grant does RFC 6749 describe?',
    'The server listens on port 8080 by default.',
    'Why does the example use the date 2025-01-01 in its payload?',
    'A protocolVersion of 2024-10-07 is rejected how?',
    'How do I draft an elicitation request?',
    'Can I save a draft message before sending it?',
    'What goes in the draft email template?',
    'A value of 2025-06-180 is not a date',
    'tools/2025-06-18x is a path',
  ])('ignores %s', (q) => {
    expect(named(q)).toEqual([])
  })

  it.each([
    'The client retries 2 times.',
    'What happens on the next request?',
    'Use 1.25 seconds as timeout',
    'upgrade to 1.2.3 first',
  ])('ignores non-version numbers and words: %s', (q) => {
    expect(named(q, [...SEMVER, '2'])).toEqual([])
  })

  it('reads single-number versions and release lines, never a count', () => {
    const lines = ['9.x', '10.x', '11.x']
    expect(named('How do I define routes in 10.x?', lines)).toEqual(['10.x'])
    expect(named('Is queue batching in version 11?', lines)).toEqual(['11.x'])
    expect(named('Retry 10 times, then give up. Which setting?', lines)).toEqual([])
    expect(named('Can I pair 11 phones?', lines)).toEqual([])
    const majors = ['v1', 'v2', 'v10']
    expect(named('How do I list users with v2?', majors)).toEqual(['v2'])
    expect(named('Does the v10 API paginate?', majors)).toEqual(['v10'])
    expect(named('List 2 users per page', majors)).toEqual([])
  })

  it('reads a release line named by its major or major.minor number, as the newest release of that line', () => {
    const releases = ['3.28.0', '3.29.5', '4.29.1', '5.6.2', 'next']
    const line = (q: string) => findVersionMentions(q, releases, ['fastify']).map((m) => [m.version, m.text])
    expect(line('How do I use withTypeProvider in Fastify 3?')).toEqual([['3.29.5', '3']])
    expect(line('fastify@4: how do hooks run?')).toEqual([['4.29.1', '4']])
    expect(line('Does v5 still support this?')).toEqual([['5.6.2', 'v5']])
    expect(line('Is it in 4.x?')).toEqual([['4.29.1', '4.x']])
    expect(line('Is it in version 3 docs?')).toEqual([['3.29.5', 'version 3 docs']])
    expect(line('What changed in Fastify 5.6?')).toEqual([['5.6.2', '5.6']])
    expect(line('What about fastify version 4?')).toEqual([['4.29.1', 'version 4']])
    // Not a release: another thing's number, a count, a line the collection does not have, a longer number.
    for (const q of [
      'Does it support OAuth 2 and HTTP 3?',
      'Step 3: register the plugin',
      'Retry 3 times',
      'Is it in Fastify 7?',
      'set a timeout of 3.5 seconds',
      'upgrade fastify to 4.30.1',
    ])
      expect(line(q)).toEqual([])
    // Without the collection's name, a bare number after a word is left alone.
    expect(findVersionMentions('How do I use it in Fastify 3?', releases).map((m) => m.version)).toEqual([])
    // A version written in full is the exact release, not its line's newest.
    expect(line('What is new in 3.28.0?')).toEqual([['3.28.0', '3.28.0']])
    // Dated versions have no lines.
    expect(findVersionMentions('Is it in MCP 2025?', DATED, ['mcp'])).toEqual([])
  })

  it('a release line named in the question is the scope, and leaves the search text', () => {
    const releases = ['3.29.5', '4.29.1', '5.6.2']
    expect(detectVersionIntent('How do I use withTypeProvider in Fastify 3?', releases, ['fastify']).versions).toEqual(['3.29.5'])
    const q = 'How do I use withTypeProvider in Fastify 3?'
    expect(removeVersionMentions(q, findVersionMentions(q, releases, ['fastify']))).toBe(
      'How do I use withTypeProvider in Fastify?',
    )
  })

  it('only counts versions the collection has', () => {
    expect(named('In 2025-06-18, how are tools listed?', ['2024-11-05'])).toEqual([])
    expect(named('In 2025-06-18, how are tools listed?', [])).toEqual([])
  })

  it('finds several mentions in text order', () => {
    expect(named('what changed between 2025-03-26 and 2025-06-18 in authorization?')).toEqual(['2025-03-26', '2025-06-18'])
  })
})

describe('findVersionMentions: latest, current, previous', () => {
  it.each([
    ['Latest spec, stdio transport: how do I spot a legacy server?', '2025-11-25'],
    ['In the latest release, what must a client check about iss?', '2025-11-25'],
    ['In the current version of MCP, which error codes are reserved?', '2025-11-25'],
    ['what does the newest MCP spec say about icons?', '2025-11-25'],
    ['is that still the recommended way to register in the most recent version?', '2025-11-25'],
    ['Is stream resumption still in the latest?', '2025-11-25'],
    ['How did the release before the current one return task results?', '2025-06-18'],
    ['In the previous release, how were tasks polled?', '2025-06-18'],
    ['the prior MCP spec: how were tasks polled?', '2025-06-18'],
  ])('%s -> %s', (q, v) => {
    expect(named(q)).toEqual([v])
  })

  it('latest means the newest released version, never the draft', () => {
    expect(named('in the latest spec?', ['2025-11-25', 'draft', '2024-11-05'])).toEqual(['2025-11-25'])
    expect(named('in the latest spec?', ['draft'])).toEqual([])
  })

  it('needs two releases for "previous"', () => {
    expect(named('in the previous release?', ['2025-11-25', 'draft'])).toEqual([])
  })

  it.each([
    'Which field carries the current protocol version?',
    'what is the current time format?',
    'How do I get the latest results of a task?',
    'Send the previous cursor back',
  ])('ignores content uses: %s', (q) => {
    expect(named(q)).toEqual([])
  })
})

describe('findVersionMentions: a release named by its month, or as the first one', () => {
  it.each([
    ['Can a server ask the user to fill in a form in the March 2025 spec?', '2025-03-26'],
    ['In the November 2024 version of MCP, how does a tool send back audio?', '2024-11-05'],
    ['Can a client call server/discover in the Nov 2025 spec?', '2025-11-25'],
    ['per the Mar. 2025 revision, are batches allowed?', '2025-03-26'],
    ['what does the june 2025 release say about elicitation?', '2025-06-18'],
    ['In June of 2025, how were tools listed?', '2025-06-18'],
    ['the 2025-03 spec: is there audio?', '2025-03-26'],
  ])('%s -> %s', (q, v) => {
    expect(named(q)).toEqual([v])
  })

  it.each([
    ['how do I mark a tool read-only? original MCP spec', '2024-11-05'],
    ['In the original spec, how are tasks polled?', '2024-11-05'],
    ['in the first release, can a client batch requests?', '2024-11-05'],
    ['What did the initial version of MCP say about roots?', '2024-11-05'],
    ['the very first MCP spec: how is ping sent?', '2024-11-05'],
    ['Does the earliest release have sampling?', '2024-11-05'],
  ])('the first release: %s -> %s', (q, v) => {
    expect(named(q)).toEqual([v])
  })

  it('the first release is the oldest released version, never a prerelease', () => {
    expect(named('in the original spec?', ['draft', '2025-06-18', '2025-03-26'])).toEqual(['2025-03-26'])
    expect(named('in the original spec?', ['draft'])).toEqual([])
  })

  it.each([
    'What was the first version to add audio content?',
    'Which is the first release that supports elicitation?',
    'I shipped the first version of my server, is it compatible?',
    'A token issued in March 2024 was rejected, why?',
    'What happened in May 2025?',
    'the server may 2025 times retry',
    'Can I keep the original version of a resource?',
  ])('ignores %s', (q) => {
    expect(named(q)).toEqual([])
  })

  it('a month with two releases names neither', () => {
    expect(named('In the March 2025 spec?', ['2025-03-03', '2025-03-26'])).toEqual([])
  })
})

describe('removeVersionMentions: the version token is not searched for', () => {
  it.each([
    [
      'In MCP 2025-11-25, what is a Streamable HTTP server supposed to do?',
      'In MCP, what is a Streamable HTTP server supposed to do?',
    ],
    [
      'what content types can a tool result contain in the 2024-11-05 spec?',
      'what content types can a tool result contain in the?',
    ],
    ['v2025-06-18: can a tool hand back a link?', 'can a tool hand back a link?'],
    ["What is in 2025-06-18's elicitation schema?", 'What is in elicitation schema?'],
    ['Latest spec, stdio transport: legacy servers?', 'stdio transport: legacy servers?'],
    ['How did the release before the current one return results?', 'How did return results?'],
  ])('%s', (q, want) => {
    expect(stripped(q)).toBe(want)
  })

  it('takes out a month or "the original spec" as it does a version name', () => {
    expect(stripped('Can a server ask the user to fill in a form in the March 2025 spec?')).toBe(
      'Can a server ask the user to fill in a form in the?',
    )
    expect(stripped('In the original spec, how are tasks polled?')).toBe('In, how are tasks polled?')
  })

  it('keeps the question when nothing else would be left', () => {
    expect(stripped('2025-06-18')).toBe('2025-06-18')
  })

  it('leaves dates that are not versions in place', () => {
    expect(stripped('Why does 2025-01-01 appear in 2025-06-18?')).toBe('Why does 2025-01-01 appear in?')
  })
})

describe('detectVersionIntent', () => {
  const intent = (q: string, known = DATED) => {
    const i = detectVersionIntent(q, known)
    return { versions: i.versions, history: i.history }
  }

  it('a single named version is the scope', () => {
    expect(intent('In MCP 2025-11-25, how is Origin checked?')).toEqual({ versions: ['2025-11-25'], history: false })
  })

  it('nothing named leaves the default', () => {
    expect(intent('How are tools listed?')).toEqual({ versions: null, history: false })
    expect(intent('What notification says the tool list has changed?')).toEqual({ versions: null, history: false })
    expect(intent('How do I change the log level?')).toEqual({ versions: null, history: false })
    expect(intent('In which order are messages sent?')).toEqual({ versions: null, history: false })
    expect(intent('Which protocol version does the client send?')).toEqual({ versions: null, history: false })
  })

  it('between A and B spans both and every release in between, change logs first', () => {
    expect(intent('what changed between 2024-11-05 and 2025-06-18 in authorization?')).toEqual({
      versions: ['2024-11-05', '2025-03-26', '2025-06-18'],
      history: true,
    })
    expect(intent('How did the error codes change from 2025-06-18 to 2025-11-25?')).toEqual({
      versions: ['2025-06-18', '2025-11-25'],
      history: true,
    })
    // Written newest first: still the same span.
    expect(intent('what is different in 2025-06-18 vs 2024-11-05?').versions).toEqual(['2024-11-05', '2025-03-26', '2025-06-18'])
  })

  it('since / after / until / before bound one side', () => {
    expect(intent('Since 2025-03-26, has the stderr guidance changed?')).toEqual({
      versions: ['2025-03-26', '2025-06-18', '2025-11-25', 'draft'],
      history: true,
    })
    expect(intent('Was anything removed after 2025-06-18?').versions).toEqual(['2025-11-25', 'draft'])
    expect(intent('what did auth look like up to 2025-03-26?').versions).toEqual(['2024-11-05', '2025-03-26'])
    expect(intent('how were errors reported before 2025-06-18?').versions).toEqual(['2024-11-05', '2025-03-26'])
    expect(intent('in 2025-06-18 and later, is batching allowed?').versions).toEqual(['2025-06-18', '2025-11-25', 'draft'])
  })

  it('a month bounds a range as a version name does', () => {
    expect(intent('Before June 2025, could a tool return a resource link?')).toEqual({
      versions: ['2024-11-05', '2025-03-26'],
      history: true,
    })
    expect(intent('since June 2025, can a tool return a resource link?').versions).toEqual(['2025-06-18', '2025-11-25', 'draft'])
  })

  it('asking for a release searches all of them, change logs first', () => {
    expect(intent('Which release first added audio content?')).toEqual({ versions: 'all', history: true })
    expect(intent('When was JSON-RPC batching added and when was it taken out again?')).toEqual({
      versions: 'all',
      history: true,
    })
    expect(intent('Is stream resumption still in the latest spec? If not, when did it go away?')).toEqual({
      versions: 'all',
      history: true,
    })
    expect(intent('In which version was the initialize handshake removed?')).toEqual({ versions: 'all', history: true })
    expect(intent('What happened to tasks after they were first added?')).toEqual({ versions: 'all', history: true })
    expect(intent('whatever happened to the HTTP+SSE transport?')).toEqual({ versions: 'all', history: true })
    // "How has X changed" (not only "how did X change"); "how do I change X" stays a how-to.
    expect(intent('How has elicitation changed since it was added?')).toEqual({ versions: 'all', history: true })
    expect(intent('How have the error codes changed over time?')).toEqual({ versions: 'all', history: true })
    expect(intent('How do I change the log level?')).toEqual({ versions: null, history: false })
    // What happens (now) is content, not history.
    expect(intent('What happens to pending requests when the session ends?')).toEqual({ versions: null, history: false })
    // Unless it asks about the releases after: what happens to it in newer releases is history.
    expect(intent('What happens to JSON-RPC batches in newer releases?')).toEqual({ versions: 'all', history: true })
    expect(intent('Is sampling still supported in later versions?')).toEqual({ versions: 'all', history: true })
  })

  it('what changed in one release reads that release, change log first', () => {
    expect(intent("What's new in 2025-06-18?")).toEqual({ versions: ['2025-06-18'], history: true })
    expect(intent('what changed in 2025-11-25?')).toEqual({ versions: ['2025-11-25'], history: true })
  })

  it('two releases named without a range word are searched as named', () => {
    expect(intent('Show the tools section of 2024-11-05 and 2025-06-18')).toEqual({
      versions: ['2024-11-05', '2025-06-18'],
      history: false,
    })
  })

  it('relative mentions resolve per collection', () => {
    expect(intent('In the latest release, what is new?', ['v1.0', 'v1.2', 'next']).versions).toEqual(['v1.2'])
  })
})
