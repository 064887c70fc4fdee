import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { AskResult } from '../../shared/answer'
import { OverlapReranker, ScriptedChat } from './scripted.testutil'
import type { GenerateArgs } from '../core/model-ports'

/**
 * The release rule after generation, on a real engine (on-disk PGlite, real import and keyword
 * index) with scripted model replies: the check before the model passed (the question paraphrases
 * the feature, or names nothing the release lacks), and the model's sentences name a feature the
 * scoped release never mentions, or mentions only in a guide. Such a sentence passes the support
 * check (its cited passage holds most of its words) and must still never be shown as verified.
 */

const FILES: Record<string, string> = {
  'specification/1.0/tools.md':
    '# Tools\n\n## Calling Tools\n\nA server lists its tools. A client calls a tool with tools/call and gets its result as text content.\n\n' +
    '## Image Content\n\nA tool may return an image as base64 data with a mimeType such as image/png.\n',
  'specification/2.0/tools.md':
    '# Tools\n\n## Calling Tools\n\nA server lists its tools. A client calls a tool with tools/call and gets text, image or audio content.\n\n' +
    '## Image Content\n\nA tool may return an image as base64 data with a mimeType such as image/png.\n\n' +
    '## Audio\n\nA tool may return audio as base64 data with a mimeType such as audio/wav.\n',
  'specification/2.0/sampling.md': '# Sampling\n\n## Audio\n\nA sampling message may carry audio as base64 data.\n',
  'specification/2.0/tasks.md':
    '# Tasks\n\n## Tasks\n\nA task tracks a long-running request; poll it with tasks/get until it completes.\n\n' +
    '## Task Status\n\nA task is working, completed, failed or cancelled.\n',
  // A guide of 1.0 that describes a feature its specification does not have.
  'guides/1.0/overview.md':
    '# Overview\n\n## What servers offer\n\nServers offer tools for actions. Servers also offer tasks for long-running work, which clients poll until they complete.\n\n' +
    '## Tools and actions\n\nThe server binds each tool to one action.\n',
  // A guide list of 1.0 with an item about a feature its specification does not have (tasks).
  'guides/1.0/servers.md':
    '# Servers\n\n## What a server can do\n\n- A server publishes its tool list to the client.\n- A server runs each tool call with its arguments.\n' +
    '- A server also runs tasks for long-running work, which clients poll.\n- A server sends logging messages at the level set.\n',
  // Two titles of 2.0 hold the pair "server binding": an answer's "the server binds" is not that feature.
  'specification/2.0/registration.md':
    '# Registration\n\n## Authorization Server Binding\n\nCredentials are bound to one authorization server.\n\n' +
    '## Server Binding Rules\n\nA client registers again when the binding changes.\n',
}
for (const v of ['1.0', '2.0'])
  for (const topic of ['Lifecycle', 'Transports', 'Logging', 'Pagination', 'Cancellation', 'Progress', 'Ping', 'Roots'])
    FILES[`specification/${v}/${topic.toLowerCase()}.md`] =
      `# ${topic}\n\n## Overview\n\nThe ${topic.toLowerCase()} section of release ${v} describes its messages and their order.\n`

/** The passage number whose section is `section` (as the prompt escapes it) and whose version is `version`. */
function passage(user: string, section: string, version: string): number {
  const re = new RegExp(`<passage n="(\\d+)" section="${section}"[^>]*version="${version.replace('.', '\\.')}"`)
  const m = re.exec(user)
  if (!m) throw new Error(`no passage ${section} of ${version} in the prompt`)
  return Number(m[1])
}

describe('the release check after generation', () => {
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

  const ask = async (question: string, version: string, chat: ScriptedChat) => {
    const result = await engine.ask(
      { question, scope: { collections: ['docs'], version } },
      { chat, reranker, mode: 'keyword', useCache: false, gate: false, correctiveRetry: false },
    )
    expect(AskResult.safeParse(result).success).toBe(true)
    return { result, trace: (await engine.answers.trace(result.trace_id))!.data }
  }

  const sentences = (...s: { text: string; cites: number[] }[]) => ({ answerable: true, sentences: s, unanswered_parts: [] })

  it('removes a sentence that names a feature the release never mentions, and abstains when nothing else is left', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = passage(args.user, 'Tools &gt; Image Content', '1.0')
        // Most of its words are in the 1.0 passage it cites: the support check alone keeps it.
        return sentences({ text: 'Yes: a tool may return audio as base64 data with a mimeType.', cites: [n] })
      },
    ])
    const { result, trace } = await ask('Can a tool send back a voice recording?', '1.0', chat)
    expect(chat.calls).toHaveLength(1)
    // The check before the model did not refuse it: "voice recording" is in no document.
    expect(trace.release!.verdict).toBe('mentioned')
    expect(trace.claims!.find((c) => c.text.includes('audio'))).toMatchObject({ ok: false, failure: 'not_in_release' })
    expect(result).toMatchObject({ abstained: true, answer: null })
    expect(result.explanation).toBe('The 1.0 docs never mention audio; it first appears in 2.0.')
    expect(result.removed).toEqual([
      {
        text: 'Yes: a tool may return audio as base64 data with a mimeType.',
        cited: [expect.any(Number)],
        code: 'not_in_release',
        reason: 'the 1.0 docs never mention audio; it first appears in 2.0',
      },
    ])
    expect(trace.release!.removed_sentences).toEqual([
      { text: 'Yes: a tool may return audio as base64 data with a mimeType.', term: 'audio', verdict: 'never_mentioned' },
    ])
  })

  it('keeps the same sentence in the release that has the feature', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = passage(args.user, 'Tools &gt; Audio', '2.0')
        return sentences({ text: 'Yes: a tool may return audio as base64 data with a mimeType.', cites: [n] })
      },
    ])
    const { result, trace } = await ask('Can a tool send back a voice recording?', '2.0', chat)
    expect(result).toMatchObject({ abstained: false, answer: 'Yes: a tool may return audio as base64 data with a mimeType [1].' })
    expect(result.removed ?? []).toEqual([])
    expect(trace.release!.removed_sentences ?? []).toEqual([])
  })

  it('removes a sentence whose feature only a guide of the release describes, and keeps the rest of the answer', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = passage(args.user, 'Overview &gt; What servers offer', '1.0')
        return sentences(
          { text: 'Servers offer tools for actions.', cites: [n] },
          { text: 'Servers also offer tasks for long-running work, which clients poll until they complete.', cites: [n] },
        )
      },
    ])
    const { result, trace } = await ask('What do servers offer?', '1.0', chat)
    expect(trace.release!.verdict).toBe('mentioned')
    expect(result).toMatchObject({ abstained: false, answer: 'Servers offer tools for actions [1].' })
    expect(result.removed).toEqual([
      {
        text: 'Servers also offer tasks for long-running work, which clients poll until they complete.',
        cited: [expect.any(Number)],
        code: 'not_in_release',
        reason: 'the 1.0 specification does not mention tasks; only guide pages of that release do',
      },
    ])
    // Named where the answer is shown, as the support check's removals are.
    expect(result.warnings).toContain('1 sentence was removed: it is about something the 1.0 release does not have.')
    expect(result.sentences!.map((s) => s.text)).toEqual(['Servers offer tools for actions.'])
  })

  it('does not copy a list item that names a feature the release lacks when it completes a list the answer gave in part', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = passage(args.user, 'Servers &gt; What a server can do', '1.0')
        return sentences(
          { text: 'A server publishes its tool list to the client.', cites: [n] },
          { text: 'A server runs each tool call with its arguments.', cites: [n] },
        )
      },
    ])
    const { result, trace } = await ask('What can a server do?', '1.0', chat)
    // The list's other items were copied (procedure.ts), and the one about tasks did not pass the release rule.
    expect(JSON.stringify(trace)).toContain('list_completed')
    expect(result.sentences!.map((s) => s.text)).toEqual([
      'A server publishes its tool list to the client.',
      'A server runs each tool call with its arguments.',
      '- A server sends logging messages at the level set.',
    ])
    expect(result.answer).not.toContain('tasks')
  })

  it('does not take two adjacent words of a sentence for a feature title of another release', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = passage(args.user, 'Overview &gt; Tools and actions', '1.0')
        return sentences({ text: 'The server binds each tool to one action.', cites: [n] })
      },
    ])
    const { result } = await ask('How are tools tied to actions?', '1.0', chat)
    expect(result).toMatchObject({ abstained: false, answer: 'The server binds each tool to one action [1].' })
    expect(result.removed ?? []).toEqual([])
  })

  it('does not apply when no single release was asked about', async () => {
    const chat = new ScriptedChat([
      (args: GenerateArgs) => {
        const n = passage(args.user, 'Overview &gt; What servers offer', '1.0')
        return sentences({
          text: 'Servers also offer tasks for long-running work, which clients poll until they complete.',
          cites: [n],
        })
      },
    ])
    const { result, trace } = await ask('What do servers offer?', 'all', chat)
    expect(trace.release!.verdict).toBe('not_scoped')
    expect(result.abstained).toBe(false)
    expect(result.removed ?? []).toEqual([])
  })
})
