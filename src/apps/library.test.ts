import { appendFile, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Engine } from '../engine/engine'
import { readLock } from '../engine/store/lock'
import type { EventPayload } from '../shared/api'
import { docent, startDocent, startMcp, toolText, type McpProcess } from '../test-support/docent-process'
import { realEngineClient, type Seen } from '../test-support/engine-process'
import { tempDir } from '../test-support/paths'
import { READ_ONLY_REFUSAL } from './mcp/server'

/**
 * One library, many clients: two real processes on one data folder at a time. The app's side runs
 * as the real engine process (src/apps/engine-host.ts) in a Node child behind the app's own
 * EngineClient (the IPC stand-in the browser e2e uses): Electron itself is not installed here, so
 * its utility process and main cannot run in these tests.
 *
 * Each test checks who owns the folder (the lock names one process) before it checks that every
 * client sees every other client's writes.
 */

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** An empty library in `data`: a read-only `docent mcp` serves no --data folder that holds none (issue 26). */
async function emptyLibrary(data: string, models: string): Promise<void> {
  await (await Engine.open({ dataDir: data, modelsDir: models })).close()
}

async function setup(): Promise<{ data: string; models: string; root: string }> {
  const t = await tempDir('docent-library-')
  cleanups.push(t.cleanup)
  const models = path.join(t.dir, 'no-models')
  await mkdir(models)
  return { data: path.join(t.dir, 'index'), models, root: t.dir }
}

/** A folder of Markdown pages, each naming `word` so a keyword search finds exactly them. */
async function pages(root: string, name: string, word: string, n = 2): Promise<string> {
  const dir = path.join(root, name)
  await mkdir(dir, { recursive: true })
  for (let i = 0; i < n; i++) await writeFile(path.join(dir, `p${i}.md`), `# ${name} ${i}\n\nThe ${word} number ${i} lives here.\n`)
  return dir
}

async function gone(pid: number, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    if (Date.now() > until) throw new Error(`process ${pid} is still running`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const jobOf = (s: Seen) => (s.payload as { jobId?: string }).jobId

/** Where a keyword search through an MCP server finds `query`, as collection/path, sorted. */
async function keywordHits(m: McpProcess, query: string): Promise<string[]> {
  const r = await m.call('search_docs', { query, mode: 'keyword' })
  expect(r.isError, toolText(r)).toBeFalsy()
  return (r.structuredContent as { passages: { collection: string; path: string }[] }).passages
    .map((p) => `${p.collection}/${p.path}`)
    .sort()
}

describe('one library, many clients', () => {
  it('the app owns the folder; MCP servers attach, read it, write only with --allow-writes, and see each other’s writes', async () => {
    const { data, models, root } = await setup()
    const { client: app, rec } = realEngineClient(data, models)
    cleanups.push(() => app.dispose(5_000))
    const a = await app.invoke('collections.import', { folder: await pages(root, 'alpha', 'albatross'), collection: 'alpha' })
    if (!a.ok) throw new Error(a.error.message)
    await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === a.value.jobId)
    expect(readLock(data)).toMatchObject({ pid: app.pid, role: 'app' })

    const ro = await startMcp(data, models)
    cleanups.push(ro.close)
    const attached = await ro.waitForStderr(/attached to pid (\d+)/)
    expect(Number(attached[1])).toBe(app.pid)
    expect(await keywordHits(ro, 'albatross')).toEqual(['alpha/p0.md', 'alpha/p1.md'])

    const beta = await pages(root, 'beta', 'bittern')
    const refused = await ro.call('import_folder', { folder: beta, collection: 'beta' })
    expect(refused.isError).toBe(true)
    expect(toolText(refused)).toContain(READ_ONLY_REFUSAL)

    const rw = await startMcp(data, models, ['--allow-writes'])
    cleanups.push(rw.close)
    expect(Number((await rw.waitForStderr(/attached to pid (\d+)/))[1])).toBe(app.pid)
    const imported = await rw.call('import_folder', { folder: beta, collection: 'beta' })
    expect(imported.isError, toolText(imported)).toBeFalsy()
    expect(imported.structuredContent).toMatchObject({ collection: 'beta', imported: 2 })

    // The app hears of an import it did not start, and reads what the MCP server wrote.
    const done = await rec.waitFor(
      (s) => s.event === 'import.done' && (s.payload as EventPayload<'import.done'>).report?.collection === 'beta',
    )
    expect(jobOf(done)).not.toBe(a.value.jobId)
    await rec.waitFor((s) => s.event === 'collections.changed' && (s.payload as { collection: string }).collection === 'beta')
    const listed = await app.invoke('collections.list', {})
    expect(listed.ok && listed.value.map((c) => c.id).sort()).toEqual(['alpha', 'beta'])
    // And so does the other MCP server.
    expect(await keywordHits(ro, 'bittern')).toEqual(['beta/p0.md', 'beta/p1.md'])
    // One owner all along.
    expect(readLock(data)).toMatchObject({ pid: app.pid, role: 'app' })
  })

  it('docent watch owns the folder; docent ingest imports another folder through it while it indexes a change, and the next reader sees both', async () => {
    const { data, models, root } = await setup()
    const birds = await pages(root, 'birds', 'cormorant')
    const first = await docent(['ingest', birds, '--collection', 'birds', '--data', data, '--models', models])
    expect(first.code, first.stderr).toBe(0)
    // The command released the folder when it ended.
    expect(readLock(data)).toBeNull()

    const watch = startDocent(['watch', '--data', data, '--models', models])
    cleanups.push(async () => void watch.child.kill('SIGKILL'))
    await watch.waitForOutput(/Press Ctrl-C to stop/)
    expect(readLock(data)).toMatchObject({ pid: watch.pid, role: 'watch' })

    // The measured failure: the watcher's sync and another process's import at the same time.
    await appendFile(path.join(birds, 'p0.md'), '\nThe cormorant dries its wings on the pier.\n')
    const ingest = await docent([
      'ingest',
      await pages(root, 'puffins', 'puffin', 3),
      '--collection',
      'puffins',
      '--data',
      data,
      '--models',
      models,
      '--json',
    ])
    expect(ingest.code, ingest.stderr).toBe(0)
    expect(JSON.parse(ingest.stdout)).toMatchObject({ collection: 'puffins', imported: 3, failed: [] })
    await watch.waitForOutput(/birds: 1 changed/)
    expect(readLock(data)).toMatchObject({ pid: watch.pid })

    const wings = await docent(['search', 'dries its wings', '--mode', 'keyword', '--data', data, '--json'])
    expect(wings.code, wings.stderr).toBe(0)
    expect((JSON.parse(wings.stdout) as { results: { path: string }[] }).results.map((r) => r.path)).toContain('p0.md')
    const listed = await docent(['collections', '--data', data, '--json'])
    const cols = (JSON.parse(listed.stdout) as { collections: { id: string; documents: number }[] }).collections
    expect(cols.map((c) => [c.id, c.documents]).sort()).toEqual([
      ['birds', 2],
      ['puffins', 3],
    ])

    watch.child.kill('SIGINT')
    expect(await watch.exited).toEqual({ code: 0, signal: null })
    expect(readLock(data)).toBeNull()
  })

  it('docent mcp owns the folder; docent ingest writes through it and the server sees the import at once', async () => {
    const { data, models, root } = await setup()
    await emptyLibrary(data, models)
    const mcp = await startMcp(data, models)
    cleanups.push(mcp.close)
    await mcp.waitForStderr(/owning it/)
    expect(readLock(data)).toMatchObject({ pid: mcp.pid, role: 'mcp' })

    const cranes = await pages(root, 'cranes', 'crane', 3)
    const r = await docent(['ingest', cranes, '--collection', 'cranes', '--data', data, '--models', models, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ collection: 'cranes', imported: 3 })
    expect(readLock(data)).toMatchObject({ pid: mcp.pid })
    expect(await keywordHits(mcp, 'crane')).toEqual(['cranes/p0.md', 'cranes/p1.md', 'cranes/p2.md'])
  })

  it('an MCP server that attached to docent ingest owns the folder once the import is over', async () => {
    const { data, models, root } = await setup()
    // Enough pages that the import is still running when the server starts.
    const many = await pages(root, 'herons', 'heron', 150)
    const ingest = startDocent(['ingest', many, '--collection', 'herons', '--data', data, '--models', models, '--json'], {
      DOCENT_PROGRESS: 'jsonl',
    })
    cleanups.push(async () => void ingest.child.kill('SIGKILL'))
    await ingest.waitForOutput(/"phase":"importing"/)
    expect(readLock(data)).toMatchObject({ pid: ingest.pid, role: 'cli' })
    const mcp = await startMcp(data, models)
    cleanups.push(mcp.close)
    expect(Number((await mcp.waitForStderr(/attached to pid (\d+)/))[1])).toBe(ingest.pid)
    const during = await mcp.call('list_collections')
    expect(during.isError, toolText(during)).toBeFalsy()

    expect((await ingest.exited).code).toBe(0)
    expect(JSON.parse(ingest.stdout())).toMatchObject({ collection: 'herons', imported: 150 })
    // The owner left; the server's next call opens the folder itself.
    const hits = await keywordHits(mcp, 'heron')
    expect(hits.length).toBeGreaterThan(0)
    expect(readLock(data)).toMatchObject({ pid: mcp.pid, role: 'mcp' })
  })

  it('the app started while docent mcp owns the folder attaches (the owner watches folders for it), and takes over when the server quits', async () => {
    const { data, models, root } = await setup()
    await emptyLibrary(data, models)
    const mcp = await startMcp(data, models)
    await mcp.waitForStderr(/owning it/)
    const { client: app, rec } = realEngineClient(data, models)
    cleanups.push(() => app.dispose(5_000))
    const egrets = await pages(root, 'egrets', 'egret')
    const started = await app.invoke('collections.import', { folder: egrets, collection: 'egrets' })
    if (!started.ok) throw new Error(started.error.message)
    await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === started.value.jobId)
    // The app's engine process relays to the server's engine: one owner.
    expect(readLock(data)).toMatchObject({ pid: mcp.pid, role: 'mcp' })
    expect(app.pid).not.toBe(mcp.pid)
    expect(await keywordHits(mcp, 'egret')).toEqual(['egrets/p0.md', 'egrets/p1.md'])

    // Folder watching came with the app: an edit reaches the index through the server's engine.
    const seenBefore = rec.seen.length
    await appendFile(path.join(egrets, 'p1.md'), '\nAn egret stalks the shallows at dawn.\n')
    await rec.waitFor(
      (s) =>
        rec.seen.indexOf(s) >= seenBefore &&
        s.event === 'collections.changed' &&
        (s.payload as { collection: string }).collection === 'egrets',
    )
    expect(await keywordHits(mcp, 'shallows')).toEqual(['egrets/p1.md'])

    const relay = app.pid!
    await mcp.close()
    await gone(mcp.pid)
    // The app's engine process was relaying to the server: it exits with it.
    await gone(relay)
    // The app's next request starts its engine process again, which now owns the folder.
    const after = await app.invoke('search', {
      query: 'shallows',
      scope: { collections: [], version: 'all' },
      mode: 'keyword',
      rerank: false,
      k: 5,
    })
    expect(after.ok && after.value.results.map((h) => h.path)).toEqual(['p1.md'])
    expect(readLock(data)).toMatchObject({ pid: app.pid, role: 'app' })
  })
})
