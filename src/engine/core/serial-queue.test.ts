import { describe, expect, it } from 'vitest'
import { SerialQueue } from './serial-queue'

/** A task that waits until the test lets it finish, recording when it starts and ends. */
function gated(log: string[], name: string, fail = false) {
  let open!: () => void
  const gate = new Promise<void>((r) => (open = r))
  const task = async (): Promise<string> => {
    log.push(`${name} start`)
    await gate
    log.push(`${name} end`)
    if (fail) throw new Error(`${name} failed`)
    return name
  }
  return { task, open }
}

describe('SerialQueue', () => {
  it('runs tasks one at a time, in the order queued', async () => {
    const q = new SerialQueue()
    const log: string[] = []
    const a = gated(log, 'a')
    const b = gated(log, 'b')
    const pa = q.run(a.task)
    const pb = q.run(b.task)
    await new Promise((r) => setImmediate(r))
    expect(log).toEqual(['a start'])
    b.open()
    await new Promise((r) => setImmediate(r))
    expect(log).toEqual(['a start'])
    a.open()
    expect(await pa).toBe('a')
    expect(await pb).toBe('b')
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end'])
  })

  it('a failed task rejects its own caller only; the next one still runs', async () => {
    const q = new SerialQueue()
    const log: string[] = []
    const a = gated(log, 'a', true)
    const b = gated(log, 'b')
    const pa = q.run(a.task)
    const pb = q.run(b.task)
    a.open()
    b.open()
    await expect(pa).rejects.toThrow('a failed')
    expect(await pb).toBe('b')
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end'])
  })

  it('is busy while a task is queued or running, and idle() waits for all of them without rejecting', async () => {
    const q = new SerialQueue()
    expect(q.busy).toBe(false)
    const log: string[] = []
    const a = gated(log, 'a', true)
    const b = gated(log, 'b')
    const pa = q.run(a.task).catch((e: unknown) => e)
    void q.run(b.task)
    expect(q.busy).toBe(true)
    let idle = false
    const waiting = q.idle().then(() => (idle = true))
    a.open()
    await pa
    expect(q.busy).toBe(true)
    expect(idle).toBe(false)
    b.open()
    await waiting
    expect(idle).toBe(true)
    expect(q.busy).toBe(false)
  })
})
