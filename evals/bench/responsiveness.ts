import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fixtureModels, tempDir } from '../../src/test-support/paths'
import { realEngineClient, type Seen } from '../../src/test-support/engine-process'
import { printTable, r1 } from './machine'
import { writeMarkdownCorpus } from './synthetic'

/**
 * Responsiveness while a large import runs, measured the way the app is built: the engine host in
 * its own process behind the app's EngineClient, this process standing in for Electron main (the
 * process that serves the UI). Baseline in the same run: the same measurements with no import.
 */
export async function benchResponsiveness(opts: { docs: number }): Promise<Record<string, unknown>> {
  const corpus = await tempDir('docent-bench-resp-corpus-')
  const data = await tempDir('docent-bench-resp-db-')
  await writeMarkdownCorpus(corpus.dir, opts.docs)
  // A small collection to ask about while the big one imports.
  const small = await tempDir('docent-bench-resp-small-')
  await writeMarkdownCorpus(small.dir, 50, 9)
  const { client, rec } = realEngineClient(path.join(data.dir, 'index'), fixtureModels)
  const jobDone = (jobId: string) =>
    rec.waitFor((s: Seen) => s.event === 'import.done' && (s.payload as { jobId: string }).jobId === jobId, 3_600_000)

  const firstStageMs = async (): Promise<number> => {
    const t0 = performance.now()
    const r = await client.invoke('ask', {
      question: 'what does the kaloru setting change?',
      scope: { collections: ['small'], version: 'all' },
      searchOnly: true,
    })
    if (!r.ok) throw new Error(r.error.message)
    await rec.waitFor((s) => s.event === 'ask.event' && (s.payload as { requestId: string }).requestId === r.value.requestId)
    const ms = performance.now() - t0
    await rec.waitFor((s) => s.event === 'ask.done' && (s.payload as { requestId: string }).requestId === r.value.requestId)
    return ms
  }
  const lagDuring = async (fn: () => Promise<unknown>) => {
    // The histogram records each timer's full wait, resolution included: subtract it for the lag.
    const resolution = 10
    const h = monitorEventLoopDelay({ resolution })
    h.enable()
    await fn()
    h.disable()
    const lag = (ns: number) => r1(Math.max(0, ns / 1e6 - resolution))
    return { p50: lag(h.percentile(50)), p99: lag(h.percentile(99)), max: lag(h.max) }
  }

  try {
    const s = await client.invoke('collections.import', { folder: small.dir, collection: 'small' })
    if (!s.ok) throw new Error(s.error.message)
    await jobDone(s.value.jobId)

    // Baseline: idle engine.
    const idleLag = await lagDuring(() => new Promise((r) => setTimeout(r, 3000)))
    const idleStage: number[] = []
    for (let i = 0; i < 5; i++) idleStage.push(await firstStageMs())

    // During a large import.
    const started = await client.invoke('collections.import', { folder: corpus.dir, collection: 'big' })
    if (!started.ok) throw new Error(started.error.message)
    const t0 = performance.now()
    const busyStage: number[] = []
    let importedDocs = 0
    const importLag = await lagDuring(async () => {
      const done = jobDone(started.value.jobId)
      let finished = false
      void done.then(() => (finished = true))
      await new Promise((r) => setTimeout(r, 3000))
      while (!finished && busyStage.length < 5) {
        busyStage.push(await firstStageMs())
        await new Promise((r) => setTimeout(r, 2000))
      }
      const final = (await done).payload as { error: string | null; report: { imported: number } | null }
      if (final.error) throw new Error(`the import being measured failed: ${final.error}`)
      importedDocs = final.report?.imported ?? 0
    })
    const importS = (performance.now() - t0) / 1000
    const med = (xs: number[]) => (xs.length ? r1([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!) : null)
    const rows: (string | number | null)[][] = [
      ['idle (baseline)', idleLag.p50, idleLag.p99, idleLag.max, med(idleStage), Math.max(...idleStage.map(r1))],
      [
        `importing ${importedDocs.toLocaleString('en-US')} docs (${r1(importS)} s)`,
        importLag.p50,
        importLag.p99,
        importLag.max,
        med(busyStage),
        busyStage.length ? Math.max(...busyStage.map(r1)) : null,
      ],
    ]
    printTable(
      'Responsiveness (this process = Electron main stand-in; engine host in a child process with fixture models; ms)',
      ['situation', 'UI-process loop lag p50', 'p99', 'max', 'first stage event p50', 'max'],
      rows,
    )
    return {
      responsiveness: {
        docs: opts.docs,
        import_s: r1(importS),
        idle: { lag: idleLag, first_stage_ms: idleStage },
        importing: { lag: importLag, first_stage_ms: busyStage },
      },
    }
  } finally {
    await client.dispose(10_000)
    await corpus.cleanup()
    await small.cleanup()
    await data.cleanup()
  }
}
