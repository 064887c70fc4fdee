import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine'
import { tempDir } from '../../test-support/paths'
import { storeBackends, type StoreBackend } from '../../test-support/backends'
import { type AskEvent, type AskRequest } from '../../shared/answer'
import { AskTrace } from '../../shared/trace'
import { EventMap, InvokeMap } from '../../shared/api'
import type { EngineAskOptions } from './ask'
import { NOT_IN_CONTEXT, OverlapReranker, ScriptedChat, reply } from './scripted.testutil'

/**
 * The host validates every reply and event against the contract and forwards what the parse
 * returns, and zod drops keys a schema does not name. So every section of a trace, every event
 * and every thread message must come back from the contract exactly as the engine wrote it: a
 * field missing from the shared schemas would otherwise vanish on its way to the renderer.
 */

const FILES: Record<string, string> = {
  'specification/2025-03-26/basic/transports.md':
    '# Transports\n\n## Streamable HTTP\n\nThe client MUST send an Accept header listing both application/json and text/event-stream.\n\n' +
    '## Session Management\n\nA server MAY assign a session ID in the Mcp-Session-Id header. ' +
    'When a request carrying the Mcp-Session-Id header gets HTTP 404, the client MUST start a new session.\n',
  'specification/2025-03-26/basic/ping.md':
    '# Ping\n\n## Overview\n\nEither side can send a ping request to check that the other end is still responsive.\n',
}

const ACCEPT = 'What Accept header does the client send with Streamable HTTP?'

for (const backend of storeBackends)
  describe.skipIf(backend.skip)(`the ask contract keeps every field the engine writes (${backend.name})`, () => suite(backend))

function suite(backend: StoreBackend): void {
  let engine: Engine
  const cleanups: (() => Promise<void>)[] = []
  const reranker = new OverlapReranker()
  const sections = new Set<string>()

  /** Asks, then checks the trace, the events and the thread through the contract schemas. */
  const roundTrip = async (
    question: string,
    chat: ScriptedChat | null,
    extra: Partial<EngineAskOptions & AskRequest> = {},
  ): Promise<{ thread_id: string }> => {
    const events: AskEvent[] = []
    const { threadId, searchOnly, ...opts } = extra
    const result = await engine.ask(
      { question, scope: { collections: ['mcp'], version: '2025-03-26' }, threadId, searchOnly },
      { chat, reranker, mode: 'keyword', useCache: false, onEvent: (e) => events.push(e), ...opts },
    )

    const { rows } = await engine.db.query<{ data: unknown }>('SELECT data FROM traces WHERE id = $1', [result.trace_id])
    const written = rows[0]!.data as Record<string, unknown>
    for (const key of Object.keys(written)) sections.add(key)
    expect(AskTrace.parse(written)).toEqual(written)
    const stored = await engine.answers.trace(result.trace_id)
    expect(stored?.data).toEqual(written)
    expect(InvokeMap['trace.get'].output.parse(stored)).toEqual(stored)

    for (const event of events) {
      const payload = { requestId: 'r1', event }
      expect(EventMap['ask.event'].parse(payload)).toEqual(payload)
    }
    expect(events.at(-1)).toEqual({ type: 'final', result })

    const thread = await engine.answers.getThread(result.thread_id)
    expect(InvokeMap['threads.get'].output.parse(thread)).toEqual(thread)
    expect(thread?.messages.at(-1)?.result).toEqual(result)
    return result
  }

  beforeAll(async () => {
    const c = await tempDir()
    const d = await tempDir()
    const place = await backend.place()
    cleanups.push(c.cleanup, d.cleanup, place.cleanup)
    for (const [rel, text] of Object.entries(FILES)) {
      await mkdir(path.dirname(path.join(c.dir, rel)), { recursive: true })
      await writeFile(path.join(c.dir, rel), text)
    }
    engine = await Engine.open({ ...place.options, modelsDir: path.join(d.dir, 'no-models') })
    expect((await engine.importFolder(c.dir, { collection: 'mcp' })).failed).toEqual([])
  })
  afterAll(async () => {
    await engine?.close()
    for (const c of cleanups) await c()
  })

  it('for every outcome of the pipeline', async () => {
    await roundTrip('good morning!', new ScriptedChat([]))
    // A reply that fails verification, then a corrected one; then a follow-up the model rewrites.
    const first = await roundTrip(ACCEPT, new ScriptedChat([reply('Both [9].', [9]), reply('Both types [1].', [1])]))
    await roundTrip(
      'And when it gets a 404?',
      new ScriptedChat([{ standalone_question: 'What happens on HTTP 404?' }, NOT_IN_CONTEXT]),
      {
        threadId: first.thread_id,
      },
    )
    await roundTrip(ACCEPT, new ScriptedChat([reply('Both.', []), reply('Still none.', [])]))
    await roundTrip(
      ACCEPT,
      new ScriptedChat([
        () => {
          throw new Error('out of memory')
        },
      ]),
    )
    await roundTrip(ACCEPT, null)
    // Refused at the gate, with the query-rewrite retry.
    await roundTrip('banana bread recipe', new ScriptedChat([{ query: 'banana bread baking' }]), { queryRewriteRetry: true })
    // Cached: the second ask is served from the first.
    const cached = new ScriptedChat([reply('Both types [1].', [1])])
    await roundTrip(ACCEPT, cached, { useCache: true })
    await roundTrip(ACCEPT, cached, { useCache: true })

    // Every optional section was written at least once, so the schema saw each of them.
    expect([...sections].sort()).toEqual(Object.keys(AskTrace.shape).sort())
  })
}
