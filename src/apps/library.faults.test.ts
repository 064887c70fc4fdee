import { spawn } from 'node:child_process'
import { cp, lstat } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Library } from './library'
import { Engine } from '../engine/engine'
import { checkIndexConsistency } from '../engine/store/consistency'
import { lockIsStale, readLock } from '../engine/store/lock'
import { SOCKET_FILE } from '../engine/host/socket'
import type { EventPayload } from '../shared/api'
import { docent, startMcp, toolText } from '../test-support/docent-process'
import { killEngine, KILLED_BY_SIGKILL, realEngineClient, type Seen } from '../test-support/engine-process'
import { ingestAndKill } from '../test-support/ingest-child'
import { mcpCorpus, tempDir } from '../test-support/paths'

/**
 * One library, many clients, and processes killed at the worst moment: the owner mid-import while a
 * client searches, a client mid-request, and the leftovers of a killed owner (its lock, its socket
 * file). Each test first checks that its fault really happened, then that the next opener recovers
 * and the index is what a clean import gives.
 */

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})
async function temp(): Promise<string> {
  const t = await tempDir('docent-libfault-')
  cleanups.push(t.cleanup)
  return t.dir
}

/** 56 documents of the MCP docs: room for a kill inside the import. */
async function corpus(): Promise<string> {
  const dir = await temp()
  for (const part of ['specification/2025-06-18', 'docs/2025-06-18', 'specification/2025-03-26'])
    await cp(path.join(mcpCorpus, part), path.join(dir, part), { recursive: true })
  return dir
}

async function snapshot(dataDir: string, modelsDir: string) {
  const engine = await Engine.open({ dataDir, modelsDir })
  try {
    const { rows } = await engine.db.query<{ id: string; text: string }>('SELECT id, text FROM chunks ORDER BY id')
    return { problems: await checkIndexConsistency(engine.db), rows }
  } finally {
    await engine.close()
  }
}

async function cleanImport(folder: string, modelsDir: string) {
  const data = path.join(await temp(), 'index')
  const engine = await Engine.open({ dataDir: data, modelsDir })
  await engine.importFolder(folder, { collection: 'mcp' })
  await engine.close()
  return snapshot(data, modelsDir)
}

const jobOf = (s: Seen) => (s.payload as { jobId?: string }).jobId
const progressOf = (s: Seen) => s.payload as EventPayload<'import.progress'>

function refusedConnect(socketPath: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath)
    s.once('connect', () => (s.destroy(), resolve('connected')))
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
  })
}

/** Waits for `cond`, failing with `what` (and what is known) after `ms`. */
async function until(cond: () => boolean, what: () => string, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function gone(pid: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`process ${pid} is still running`)
}

describe('owner killed', () => {
  it('mid-import while a client searches: the client takes the folder over, the import resumes, the index equals a clean import', async () => {
    const folder = await corpus()
    const data = path.join(await temp(), 'index')
    const models = path.join(await temp(), 'none')
    const { client: app, rec } = realEngineClient(data, models)
    cleanups.push(() => app.dispose(5_000))
    const started = await app.invoke('collections.import', { folder, collection: 'mcp' })
    if (!started.ok) throw new Error(started.error.message)
    await rec.waitFor((s) => s.event === 'import.progress' && jobOf(s) === started.value.jobId)
    const owner = app.pid!
    expect(readLock(data)).toMatchObject({ pid: owner, role: 'app' })

    // A client in this process, attached to the owner, searching over and over.
    const lib = new Library({ data, models, role: 'cli' })
    cleanups.push(() => lib.close())
    await lib.invoke('collections.list', {})
    expect(lib.state).toMatchObject({ kind: 'attached', owner: { pid: owner } })
    let searches = 0
    let stop = false
    const failures: unknown[] = []
    const searching = (async () => {
      while (!stop && failures.length < 20) {
        try {
          await lib.invoke('search', { query: 'tool result', scope: { collections: [], version: 'all' }, mode: 'keyword', rerank: false, k: 5 })
          searches++
        } catch (err) {
          failures.push(err)
        }
      }
    })()
    const hit = await rec.waitFor(
      (s) =>
        jobOf(s) === started.value.jobId &&
        (s.event === 'import.done' || (s.event === 'import.progress' && progressOf(s).phase !== 'done' && progressOf(s).imported >= 3)),
    )
    expect(hit.event, 'the import finished before 3 documents: no kill point inside it').toBe('import.progress')
    await until(
      () => searches >= 2,
      () => `two searches during the import (failures: ${failures.map(String).join('; ')})`,
    )
    const before = searches
    // The owner's leftovers at the moment of the kill: its lock and its socket file.
    expect((await lstat(path.join(data, SOCKET_FILE))).isSocket()).toBe(true)
    killEngine(app)
    const done = await rec.waitFor((s) => s.event === 'import.done' && jobOf(s) === started.value.jobId)
    expect((done.payload as EventPayload<'import.done'>).error).toMatch(KILLED_BY_SIGKILL)
    await gone(owner)

    // The searcher goes on: its next search found the lock stale and this process owns the folder now.
    await until(
      () => searches >= before + 3 || failures.length >= 20,
      () => `three searches after the kill (failures: ${failures.map(String).join('; ')})`,
    )
    stop = true
    await searching
    expect(failures).toEqual([])
    expect(lib.state.kind).toBe('owner')
    expect(readLock(data)).toMatchObject({ pid: process.pid, role: 'cli' })

    // The interrupted import resumes through the new owner: what the dead owner finished is kept.
    const report = await lib.importFolder({ folder, collection: 'mcp' })
    expect(report.unchanged).toBeGreaterThanOrEqual(progressOf(hit).imported)
    expect(report.imported).toBeGreaterThan(0)
    // The app comes back attached to the new owner.
    const listed = await app.invoke('collections.list', {})
    expect(listed.ok).toBe(true)
    expect(app.pid).not.toBe(owner)
    expect(readLock(data)?.pid).toBe(process.pid)
    await app.dispose(5_000)
    await lib.close()

    const after = await snapshot(data, models)
    expect(after.problems).toEqual([])
    expect(after.rows).toEqual((await cleanImport(folder, models)).rows)
  })

  it('leaves a stale lock and socket file: the next command takes them over', async () => {
    const data = path.join(await temp(), 'index')
    const models = path.join(await temp(), 'none')
    // A library to serve: a read-only `docent mcp` serves no --data folder that holds none.
    await (await Engine.open({ dataDir: data, modelsDir: models })).close()
    const mcp = await startMcp(data, models)
    await mcp.waitForStderr(/owning it/)
    const left = readLock(data)!
    expect(left).toMatchObject({ pid: mcp.pid, role: 'mcp' })
    process.kill(mcp.pid, 'SIGKILL')
    await gone(mcp.pid)
    // The fault: a lock naming a dead process, and a socket file nobody listens on.
    expect(readLock(data)).toEqual(left)
    expect(lockIsStale(left)).toBe(true)
    expect((await lstat(path.join(data, SOCKET_FILE))).isSocket()).toBe(true)
    expect(await refusedConnect(path.join(data, SOCKET_FILE))).toBe('ECONNREFUSED')
    await mcp.close().catch(() => undefined)

    const r = await docent(['collections', '--data', data, '--models', models, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ collections: [] })
    // It owned the folder, then released it.
    expect(readLock(data)).toBeNull()
    await expect(lstat(path.join(data, SOCKET_FILE))).rejects.toThrow()
  })

  it('a stale socket file without a lock is replaced by the next owner, and clients reach that owner', async () => {
    const data = path.join(await temp(), 'index')
    const models = path.join(await temp(), 'none')
    const sock = path.join(data, SOCKET_FILE)
    await Engine.open({ dataDir: data, modelsDir: models }).then((e) => e.close())
    const squatter = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(sock)}, () => console.log('up'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await new Promise<void>((resolve) => squatter.stdout!.once('data', () => resolve()))
    squatter.kill('SIGKILL')
    await new Promise((r) => squatter.once('exit', r))
    expect(squatter.signalCode).toBe('SIGKILL')
    expect((await lstat(sock)).isSocket()).toBe(true)
    expect(await refusedConnect(sock)).toBe('ECONNREFUSED')
    expect(readLock(data)).toBeNull()

    const mcp = await startMcp(data, models)
    cleanups.push(mcp.close)
    await mcp.waitForStderr(/owning it/)
    expect(await refusedConnect(sock)).toBe('connected')
    const folder = path.join(await temp(), 'notes')
    await cp(path.join(mcpCorpus, 'specification/2025-06-18/basic'), folder, { recursive: true })
    const r = await docent(['ingest', folder, '--collection', 'notes', '--data', data, '--models', models, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(readLock(data)?.pid).toBe(mcp.pid)
    const listed = await mcp.call('list_collections')
    expect(toolText(listed)).toContain('"notes"')
  })
})

describe('client killed', () => {
  it('mid-request (an attached docent ingest): the owner finishes its import and keeps serving', async () => {
    const folder = await corpus()
    const data = path.join(await temp(), 'index')
    const models = path.join(await temp(), 'none')
    const { client: app, rec } = realEngineClient(data, models)
    cleanups.push(() => app.dispose(5_000))
    expect((await app.invoke('collections.list', {})).ok).toBe(true)
    const owner = app.pid!

    const run = await ingestAndKill(folder, { data, models, collection: 'mcp', killAfterDocs: 3 })
    // The client died of the kill while its import was running on the owner.
    expect(run.killed).toBe(true)
    expect(run.atKill!.filesDone).toBeLessThan(run.atKill!.filesTotal)
    expect(readLock(data)).toMatchObject({ pid: owner, role: 'app' })

    // The import belonged to the owner: it goes on to the end, and the owner answers the next client.
    const done = await rec.waitFor(
      (s) => s.event === 'import.done' && (s.payload as EventPayload<'import.done'>).report?.collection === 'mcp',
      300_000,
    )
    const report = (done.payload as EventPayload<'import.done'>).report!
    expect((done.payload as EventPayload<'import.done'>).error).toBeNull()
    expect(report.imported).toBe(56)
    const search = await docent(['search', 'tools/call', '--mode', 'keyword', '--data', data, '--json'])
    expect(search.code, search.stderr).toBe(0)
    expect((JSON.parse(search.stdout) as { results: unknown[] }).results.length).toBeGreaterThan(0)
    expect(app.pid).toBe(owner)
    await app.dispose(5_000)

    const after = await snapshot(data, models)
    expect(after.problems).toEqual([])
    expect(after.rows).toEqual((await cleanImport(folder, models)).rows)
  })
})
