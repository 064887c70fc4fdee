import { describe, expect, it } from 'vitest'
import type { ImportProgress } from '../../../shared/api'
import { formatTimeLeft } from './format'
import { estimateImport, trackImport, type ImportEtaState } from './import-eta'

/**
 * An import as the engine reports it (src/engine/ingest/importer.ts and sync/progress.ts): files
 * are parsed one by one and counted as done at once; every 64 passages the batch is embedded
 * (slow: 5.5 passages/s, all-MiniLM-L6-v2 on two cores, docs/benchmarks.md) and written.
 * Progress events are throttled to one per 100 ms, as the engine's are. The clock is simulated,
 * so the test does not depend on this machine's speed. `engineEta` is the engine's own estimate
 * (bytes left at the rate of bytes read since the import phase began), for comparison.
 */
interface Event {
  p: ImportProgress
  engineEta: number | null
}

interface SimOptions {
  files: number
  seed: number
  embedMsPerText: number
  /**
   * The second half of the folder is denser reference material (twice the passages per byte, each
   * 1.5x slower to embed), as when guides come before a specification's schema pages.
   */
  denserSecondHalf?: boolean
}

function simulateImport(opts: SimOptions): { events: Event[]; end: number } {
  let seed = opts.seed
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
  const files = Array.from({ length: opts.files }, (_, i) => {
    const dense = opts.denserSecondHalf && i >= opts.files / 2
    const bytes = Math.round(1_000 + rand() * 15_000)
    // Passages per byte differ from file to file (prose, tables, code).
    const texts = Math.max(1, Math.round((bytes / (dense ? 350 : 700)) * (0.6 + rand() * 0.8)))
    return { bytes, texts, embedMs: opts.embedMsPerText * (dense ? 1.5 : 1), parseMs: 5 + rand() * 25 }
  })
  const p: ImportProgress = {
    phase: 'scanning',
    collection: 'c',
    filesTotal: files.length,
    filesDone: 0,
    currentFile: null,
    imported: 0,
    unchanged: 0,
    failed: 0,
    skipped: 0,
    chunksWritten: 0,
    textsEmbedded: 0,
    bytesTotal: files.reduce((s, f) => s + f.bytes, 0),
    bytesDone: 0,
    elapsedMs: 0,
    etaMs: null,
  }
  const events: Event[] = []
  let t = 0
  let lastEmit = -Infinity
  let workStarted = 0
  let bytesWorked = 0
  const emit = (force = false) => {
    if (!force && t - lastEmit < 100) return
    lastEmit = t
    const rate = bytesWorked / Math.max(1, t - workStarted)
    const engineEta = bytesWorked > 0 && rate > 0 ? Math.round((p.bytesTotal - p.bytesDone) / rate) : null
    events.push({ p: { ...p, elapsedMs: t, etaMs: engineEta }, engineEta })
  }
  emit(true)
  t += 1_500
  p.phase = 'importing'
  workStarted = t
  emit(true)
  let pending: (typeof files)[number][] = []
  const flush = () => {
    const texts = pending.reduce((s, f) => s + f.texts, 0)
    if (texts === 0) return
    p.phase = 'embedding'
    emit()
    t += pending.reduce((s, f) => s + f.texts * f.embedMs, 0)
    p.textsEmbedded += texts
    emit()
    p.phase = 'importing'
    t += 40 + pending.length * 5
    p.imported += pending.length
    p.chunksWritten += texts
    emit()
    pending = []
  }
  files.forEach((f, i) => {
    p.currentFile = `doc-${i}.md`
    emit()
    t += f.parseMs
    bytesWorked += f.bytes
    p.filesDone++
    p.bytesDone += f.bytes
    pending.push(f)
    if (pending.reduce((s, x) => s + x.texts, 0) >= 64) flush()
  })
  flush()
  p.phase = 'pruning'
  emit(true)
  t += 200
  p.phase = 'done'
  emit(true)
  return { events, end: t }
}

/** The estimate a person sees each second (it counts down between events, as the screen does). */
function everySecond(events: Event[]): { t: number; eta: number | null; engineEta: number | null }[] {
  const out: { t: number; eta: number | null; engineEta: number | null }[] = []
  let state: ImportEtaState | null = null
  let i = 0
  const end = events.at(-1)!.p.elapsedMs
  for (let t = 0; t < end; t += 1000) {
    let last: Event | null = null
    while (i < events.length && events[i]!.p.elapsedMs <= t) {
      last = events[i]!
      state = trackImport(state, last.p)
      i++
    }
    const current = last ?? events[Math.max(0, i - 1)]!
    if (current.p.phase === 'done') break
    out.push({ t, eta: estimateImport(state, current.p, t).etaMs, engineEta: current.engineEta })
  }
  return out
}

describe('import time left', () => {
  const even = simulateImport({ files: 300, seed: 7, embedMsPerText: 180 })
  const evenSeconds = everySecond(even.events)
  // The third batch to finish with a tenth of the bytes done.
  const known = (() => {
    let batches = 0
    let last = 0
    for (const e of even.events) {
      if (e.p.chunksWritten > last) batches++
      last = e.p.chunksWritten
      if (batches >= 3 && e.p.bytesDone >= e.p.bytesTotal / 10) return e.p.elapsedMs
    }
    return Infinity
  })()
  // Guides first, then denser reference pages: the case where the engine's estimate kept growing.
  const uneven = simulateImport({ files: 300, seed: 7, embedMsPerText: 180, denserSecondHalf: true })
  const unevenSeconds = everySecond(uneven.events)
  const error = (s: { t: number; eta: number | null }, end: number) => Math.abs(s.t + s.eta! - end) / end
  const at = (list: typeof evenSeconds, share: number, end: number) => list.filter((s) => s.t >= share * end)

  it('the simulated import reproduces the reported fault of the engine estimate', () => {
    expect(uneven.end).toBeGreaterThan(1_000_000)
    // Predicted end = now + time left. The engine's grows all the way: at 60% of the import it is still 15% short.
    const engine = at(unevenSeconds, 0.6, uneven.end)[0]!
    expect((uneven.end - (engine.t + engine.engineEta!)) / uneven.end).toBeGreaterThan(0.15)
    const engineEnds = unevenSeconds.filter((s) => s.engineEta != null).map((s) => s.t + s.engineEta!)
    expect(Math.max(...engineEnds) / Math.min(...engineEnds)).toBeGreaterThan(2.5)
  })

  it('shows no estimate before three batches and a tenth of the bytes are finished', () => {
    expect(known).toBeLessThan(even.end / 5)
    for (const s of evenSeconds.filter((x) => x.t < known)) expect(s.eta).toBeNull()
    expect(evenSeconds.find((s) => s.eta != null)!.t).toBeGreaterThanOrEqual(known)
  })

  it('stays steady on an even folder: past a fifth of the import, the predicted end is within 10% of the real end', () => {
    const shown = at(evenSeconds, 0.2, even.end).filter((s) => s.eta != null)
    expect(shown.length).toBeGreaterThan(500)
    expect(Math.max(...shown.map((s) => error(s, even.end)))).toBeLessThan(0.1)
  })

  it('follows a change of documents: from 60% of an uneven folder on, within 10% of the real end', () => {
    const shown = at(unevenSeconds, 0.6, uneven.end).filter((s) => s.eta != null)
    expect(shown.length).toBeGreaterThan(400)
    expect(Math.max(...shown.map((s) => error(s, uneven.end)))).toBeLessThan(0.1)
  })

  it('ends as "almost done", never "under a second" or a negative time', () => {
    for (const list of [evenSeconds, unevenSeconds]) {
      const last = list.filter((s) => s.eta != null).at(-1)!
      expect(formatTimeLeft(last.eta!)).toMatch(/^(almost done|about 5 s left)$/)
      for (const s of list)
        if (s.eta != null)
          expect(formatTimeLeft(s.eta)).toMatch(/^(about \d+ (s|min) left|about \d+ h( \d+ min)? left|almost done)$/)
    }
  })

  it('has no estimate once the files are done (pruning, finishing), where the engine says 0', () => {
    const done = even.events.at(-1)!.p
    expect(done.etaMs).toBe(0)
    let state: ImportEtaState | null = null
    for (const e of even.events) state = trackImport(state, e.p)
    expect(estimateImport(state, done, done.elapsedMs).etaMs).toBeNull()
    expect(estimateImport(state, { ...done, phase: 'pruning' }, done.elapsedMs).etaMs).toBeNull()
  })

  it('a re-sync that skips unchanged files first settles on the rate of real work', () => {
    // The first third of the folder is unchanged: its bytes are done at once, with no passages.
    const base = simulateImport({ files: 300, seed: 11, embedMsPerText: 180 })
    const third = base.events[0]!.p.bytesTotal / 2
    const shifted: Event[] = base.events.map((e) => ({
      p: {
        ...e.p,
        bytesDone: e.p.phase === 'scanning' ? 0 : e.p.bytesDone + third,
        bytesTotal: e.p.bytesTotal + third,
      },
      engineEta: null,
    }))
    const first = everySecond(shifted).filter((s) => s.eta != null)[0]!
    // Early on the skipped bytes make the work look fast...
    expect(first.t + first.eta!).toBeLessThan(base.end * 0.9)
    // ...and once they are out of the window the estimate is the real one.
    const later = at(everySecond(shifted), 0.3, base.end).filter((s) => s.eta != null)
    expect(later.length).toBeGreaterThan(200)
    expect(Math.max(...later.map((s) => error(s, base.end)))).toBeLessThan(0.1)
  })
})

describe('formatTimeLeft', () => {
  it('rounds so the estimate does not flicker', () => {
    expect(formatTimeLeft(4_999)).toBe('almost done')
    expect(formatTimeLeft(-3_000)).toBe('almost done')
    expect(formatTimeLeft(9_500)).toBe('about 10 s left')
    expect(formatTimeLeft(22_400)).toBe('about 20 s left')
    expect(formatTimeLeft(89_000)).toBe('about 90 s left')
    expect(formatTimeLeft(287_000)).toBe('about 5 min left')
    expect(formatTimeLeft(3_600_000 + 20 * 60_000)).toBe('about 1 h 20 min left')
    expect(formatTimeLeft(7_200_000)).toBe('about 2 h left')
  })
})
