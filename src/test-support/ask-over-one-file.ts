import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { AskResult } from '../shared/answer'
import { Engine } from '../engine/engine'
import { OverlapReranker, ScriptedChat, type ScriptedReply } from '../engine/answer/scripted.testutil'
import { tempDir } from './paths'

/**
 * Asks `question` through the whole pipeline of a real engine (PGlite, no models installed) over
 * one Markdown file in the collection "spec": keyword search, the overlap reranker, no cache, and a
 * scripted model replying `replies` in order. Returns the result and its stored trace; the engine
 * and its folders are removed afterwards.
 */
export async function askOverOneFile(
  file: { name: string; markdown: string },
  question: string,
  replies: ScriptedReply[],
): Promise<{ result: AskResult; trace: unknown }> {
  const c = await tempDir()
  const d = await tempDir()
  const engine = await Engine.open({ dataDir: d.dir, modelsDir: path.join(d.dir, 'no-models') })
  try {
    await mkdir(path.join(c.dir, 'spec'), { recursive: true })
    await writeFile(path.join(c.dir, 'spec', file.name), file.markdown)
    const failed = (await engine.importFolder(c.dir, { collection: 'spec' })).failed
    if (failed.length) throw new Error(`the test file did not import: ${JSON.stringify(failed)}`)
    const result = await engine.ask(
      { question, scope: { collections: ['spec'], version: 'all' } },
      { chat: new ScriptedChat(replies), reranker: new OverlapReranker(), mode: 'keyword', useCache: false },
    )
    return { result, trace: (await engine.answers.trace(result.trace_id))!.data }
  } finally {
    await engine.close()
    await c.cleanup()
    await d.cleanup()
  }
}
