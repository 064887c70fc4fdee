import { spawn } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../test-support/paths'
import { LOCK_FILE, processStart, readLock, type LockInfo } from '../store/lock'
import { EngineClient } from './client'
import { folderSpawner, type LibraryProcess } from './open-folder'
import { SOCKET_FILE } from './socket'

/**
 * Opening the library when its owner dies at the worst moment: after accepting the connection,
 * before saying `ready` (a SIGKILLed owner closes its files one by one, so its listening socket can
 * outlive its other connections by a moment). The opener must try again and own the folder, not
 * report the owner's death as its own failure.
 */

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c()
})

describe('opening the library', () => {
  it('an owner that dies between accepting the connection and `ready`: the opener owns the folder instead', async () => {
    const t = await tempDir('docent-open-')
    cleanups.push(t.cleanup)
    const data = path.join(t.dir, 'index')
    await mkdir(data, { recursive: true, mode: 0o700 })
    const sock = path.join(data, SOCKET_FILE)

    // The owner: a live process named by a valid lock, whose socket accepts one connection and dies.
    const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'])
    cleanups.push(async () => void owner.kill('SIGKILL'))
    const lock: LockInfo = {
      pid: owner.pid!,
      start: processStart(owner.pid!),
      started: Date.now(),
      host: os.hostname(),
      role: 'mcp',
      socket: sock,
      token: 'a'.repeat(64),
      since: new Date().toISOString(),
    }
    await writeFile(path.join(data, LOCK_FILE), JSON.stringify(lock), { mode: 0o600 })
    let accepted = 0
    const ownerDied = new Promise<void>((resolve) => owner.once('exit', () => resolve()))
    const server = net.createServer((c) => {
      accepted++
      server.close()
      owner.kill('SIGKILL')
      c.destroy()
    })
    await new Promise<void>((resolve) => server.listen(sock, resolve))

    let proc: LibraryProcess | null = null
    const client = new EngineClient({
      spawn: folderSpawner({ dataDir: data, modelsDir: path.join(t.dir, 'none'), role: 'cli', log: () => {} }, (p) => (proc = p)),
      onEvent: () => {},
      log: () => {},
    })
    cleanups.push(() => client.dispose(10_000))
    const listed = await client.invoke('collections.list', {})
    // The fault happened: the opener was accepted by the owner, which then died.
    expect(accepted).toBe(1)
    await ownerDied
    expect(owner.signalCode).toBe('SIGKILL')
    expect(listed).toEqual({ ok: true, value: [] })
    expect(proc!.state.kind).toBe('owner')
    expect(readLock(data)?.pid).toBe(process.pid)
  })

  it('a folder held by a live process that shares no socket: the request fails with the reason, naming the holder', async () => {
    const t = await tempDir('docent-open-')
    cleanups.push(t.cleanup)
    const data = path.join(t.dir, 'index')
    await mkdir(data, { recursive: true, mode: 0o700 })
    // The holder: a live process whose lock names no socket (a test or an evaluation run holds it so).
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'])
    cleanups.push(async () => void holder.kill('SIGKILL'))
    const lock: LockInfo = {
      pid: holder.pid!,
      start: processStart(holder.pid!),
      started: Date.now(),
      host: os.hostname(),
      role: 'engine',
      socket: null,
      token: 'b'.repeat(64),
      since: new Date().toISOString(),
    }
    await writeFile(path.join(data, LOCK_FILE), JSON.stringify(lock), { mode: 0o600 })

    const client = new EngineClient({
      spawn: folderSpawner({
        dataDir: data,
        modelsDir: path.join(t.dir, 'none'),
        role: 'cli',
        attachTimeoutMs: 300,
        log: () => {},
      }),
      onEvent: () => {},
      log: () => {},
    })
    cleanups.push(() => client.dispose(10_000))
    const listed = await client.invoke('collections.list', {})
    expect(listed.ok).toBe(false)
    if (listed.ok) return
    // The reason itself, not wrapped in "the engine stopped unexpectedly".
    expect(listed.error.message.startsWith(`The index at ${data} is open in`)).toBe(true)
    expect(listed.error.message).toContain('which does not share it with other processes')
    // The holder's lock is untouched.
    expect(readLock(data)?.pid).toBe(holder.pid)
  })
})
