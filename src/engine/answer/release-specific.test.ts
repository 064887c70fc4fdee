import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { engineOverFiles } from '../../test-support/engine-over-files'
import type { GenerateArgs } from '../core/model-ports'
import { OverlapReranker, ScriptedChat, reply } from './scripted.testutil'

/**
 * A feature word common in the collection's specifications can still be rare in the scoped
 * release's: the shape of the MCP docs, where "authorization" is in 15% of all specification
 * passages and in 4 of 2024-11-05's, whose core leaves it out, while the 2024-11-05 docs folder
 * carries a tutorial on OAuth flows. An answer scoped to that release must rest on its
 * specification (release.ts, SPECIFIC_SHARE in the scoped release too).
 */
const FILES: Record<string, string> = {
  'specification/1.0/overview.md':
    '# Overview\n\n## Auth\n\nGrants are not part of the core of this release; servers may agree on their own grant schemes.\n',
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
