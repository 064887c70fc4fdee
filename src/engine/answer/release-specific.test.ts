import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { engineOverFiles } from '../../test-support/engine-over-files'
import type { GenerateArgs } from '../core/model-ports'
import { NOT_IN_CONTEXT, OverlapReranker, ScriptedChat, reply } from './scripted.testutil'
import type { ReleaseCheck } from './release'
import { absenceSentences } from './release-absent'
import type { PromptPassage } from './prompt'

/**
 * A feature word common in the collection's specifications can still be rare in the scoped
 * release's: the shape of the MCP docs, where "authorization" is in 15% of all specification
 * passages and in 4 of 2024-11-05's, whose core leaves it out, while the 2024-11-05 docs folder
 * carries a tutorial on OAuth flows. An answer scoped to that release must rest on its
 * specification (release.ts, SPECIFIC_SHARE in the scoped release too).
 */
const FILES: Record<string, string> = {
  'specification/1.0/overview.md':
    '# Overview\n\n## Auth\n\nGrants never reach the core of this release; servers may agree on their own grant schemes.\n',
  'guides/1.0/grants.md':
    '# Grants\n\n## Grant flow\n\nA grant is requested with a bearer token, exchanged at the grant endpoint, and refreshed every hour.\n',
}
for (const topic of ['Flow', 'Tokens', 'Scopes', 'Refresh', 'Revocation', 'Discovery', 'Consent', 'Errors'])
  FILES[`specification/2.0/grants-${topic.toLowerCase()}.md`] =
    `# Grants\n\n## ${topic}\n\nEvery grant ${topic.toLowerCase()} step is described here for release 2.0.\n`
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
    'Tools',
  ])
    FILES[`specification/${v}/${topic.toLowerCase()}.md`] =
      `# ${topic}\n\n## Overview\n\nThe ${topic.toLowerCase()} section of release ${v} describes its messages.\n\n## Messages\n\nEach message has a method and params.\n`

describe('a feature word common in the collection and rare in the scoped release', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(FILES, 'docs'))
  })
  afterAll(async () => {
    await cleanup?.()
  })

  it('must be answered from the release specification: an answer from the guide alone is refused', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Grants &gt; Grant flow"/.exec(args.user)![1]
        return reply(`A grant is requested with a bearer token and refreshed every hour [${n}].`, [Number(n)])
      },
    ])
    const result = await engine.ask(
      { question: 'How do grants work?', scope: { collections: ['docs'], version: '1.0' } },
      { chat, reranker: new OverlapReranker(), mode: 'keyword', useCache: false, gate: false },
    )
    const trace = (await engine.answers.trace(result.trace_id))!.data
    // Grants are in more than a tenth of the collection's specification passages, in one of 1.0's.
    expect(trace.release).toMatchObject({ verdict: 'mentioned', must_cite_authoritative: true, cited_authoritative: false })
    expect(result).toMatchObject({ abstained: true, reason: 'not_in_context' })
    expect(result.explanation).toContain('does not rest on the 1.0 specification, which is what defines grants')
  })
})

/**
 * The same collection, but the 1.0 specification says outright that grants are not part of it
 * (as 2024-11-05's says of authorization). That sentence answers the question, in the release's
 * own words (release-absent.ts), whether the model answered from the guide or declined.
 */
const SAYS_ABSENT: Record<string, string> = {
  ...FILES,
  'specification/1.0/overview.md':
    '# Overview\n\n## Auth\n\nGrants are not currently part of the core of this release, but may come later.\n\nJoin the discussion to help shape it.\n\nServers MAY agree on their own grant schemes.\n',
}

describe('a release whose specification says it lacks the feature asked about', () => {
  let engine: Engine
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    ;({ engine, cleanup } = await engineOverFiles(SAYS_ABSENT, 'docs'))
  })
  afterAll(async () => {
    await cleanup?.()
  })

  const ask = (chat: ScriptedChat) =>
    engine.ask(
      { question: 'How do grants work?', scope: { collections: ['docs'], version: '1.0' } },
      { chat, reranker: new OverlapReranker(), mode: 'keyword', useCache: false, gate: false },
    )

  it('is answered with that sentence when the model answers from a guide', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = /<passage n="(\d+)" section="Grants &gt; Grant flow"/.exec(args.user)![1]
        return reply(`A grant is requested with a bearer token and refreshed every hour [${n}].`, [Number(n)])
      },
    ])
    const result = await ask(chat)
    const trace = (await engine.answers.trace(result.trace_id))!.data
    // The rule that refuses the guide's answer fired, and the release's own sentence replaced it.
    expect(trace.release).toMatchObject({ verdict: 'mentioned', must_cite_authoritative: true, cited_authoritative: true })
    expect(trace.release!.absence_quoted).toBeTruthy()
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.answer).toContain('Grants are not currently part of the core of this release, but may come later')
    expect(result.answer).toContain('Servers MAY agree on their own grant schemes')
    expect(result.answer).not.toContain('bearer token')
    expect(result.answer).not.toContain('Join the discussion')
    expect(result.citations).toHaveLength(1)
    expect(result.citations[0]).toMatchObject({ path: expect.stringContaining('specification/1.0/overview.md'), version: '1.0' })
    expect(result.sentences!.every((s) => s.added === 'quote' && s.citations.join() === '1')).toBe(true)
    expect(result.notices.join(' ')).toContain(
      'Quoted from the 1.0 specification: it says that what was asked about (grants) is not part of that release',
    )
    expect(trace.attempts!.at(-1)!.verification.repairs.map((r) => r.code)).toContain('absence_quoted')
  })

  it('is answered with that sentence when the model says its passages do not say', async () => {
    const result = await ask(new ScriptedChat([NOT_IN_CONTEXT, NOT_IN_CONTEXT]))
    expect(result).toMatchObject({ abstained: false, mode: 'answer' })
    expect(result.answer).toContain('Grants are not currently part of the core of this release')
  })
})

describe('sentences that do not say a release lacks the feature', () => {
  const release = (mustCite: string[]): ReleaseCheck =>
    ({
      trace: {
        releases: ['1.0'],
        authoritative_kinds: ['Specification'],
        has_authoritative: true,
        terms: [],
        verdict: 'mentioned',
        must_cite_authoritative: true,
        cited_authoritative: null,
      },
      explanation: null,
      mustCite,
      featureTerms: [],
    }) as ReleaseCheck
  const passage = (text: string, over: Partial<PromptPassage> = {}): PromptPassage => ({
    n: 1,
    chunk_id: 'c1',
    path: 'specification/1.0/grants.md',
    heading: 'Grants',
    kind: 'Specification',
    version: '1.0',
    page: null,
    text,
    ...over,
  })
  const pick = (text: string, terms = ['grants'], over: Partial<PromptPassage> = {}) =>
    absenceSentences([passage(text, over)], (p) => p.text, release(terms))

  it('finds the sentence that says so outright', () => {
    expect(pick('Grants are no longer supported in this release.')?.units[0]!.text).toBe(
      'Grants are no longer supported in this release.',
    )
  })
  it('passes over a condition, a rule, a term it does not name first, and a term the rules do not require', () => {
    expect(pick('If the server does not support grants, grants are not supported by the client either.')).toBeNull()
    expect(pick('Servers MUST NOT send grants to clients that did not ask.')).toBeNull()
    expect(pick('Batching is not supported; use grants instead.')).toBeNull()
    expect(pick('The previous pattern of server-initiated requests is no longer supported.', ['grants'])).toBeNull()
  })
  it('finds the release change log’s item that removes the term, and passes over one that removes a rule about it', () => {
    // The shape of the MCP 2026-07-28 change log (p15 of mcp-docs-people, fit half).
    const log = { path: 'specification/1.0/changelog.md', heading: 'Key Changes > Major changes' }
    const line = '5. Remove grants, consent and revocation. Scopes are now set per request.'
    expect(pick(line, ['grants'], log)?.units.map((u) => u.text)).toEqual([line])
    expect(pick('- Removed support for grants in the transport.', ['grants'], log)?.term).toBe('grants')
    expect(pick('3. Remove the requirement that grants be refreshed hourly.', ['grants'], log)).toBeNull()
    expect(pick('4. Remove consent. Grants are now refreshed daily.', ['grants'], log)).toBeNull()
    // The same line outside a change log says nothing of the release.
    expect(pick(line)).toBeNull()
  })
  it('passes over guides and other releases', () => {
    expect(pick('Grants are not part of the core of this release.', ['grants'], { kind: 'Guide' })).toBeNull()
    expect(pick('Grants are not part of the core of this release.', ['grants'], { version: '2.0' })).toBeNull()
  })
})
