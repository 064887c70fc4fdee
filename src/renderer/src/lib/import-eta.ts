import type { ImportProgress } from '../../../shared/api'

/**
 * The import's time left, from the rate at which work is really finished.
 *
 * The engine counts a file as done once it is parsed, and embeds and writes files in batches of
 * about 64 passages after that. Its bytes-done counter therefore runs ahead in bursts and then
 * stands still while a batch is embedded; an estimate from it swings (a new user saw "1 min" at
 * 20 s, "4 min 47 s" at 45 s, "7 min 35 s" at 180 s) and reaches "under a second" while the last
 * batch is still being embedded. Here only the moments when a batch has been embedded or written
 * count: every byte read up to then is finished for good. The rate is measured between such
 * checkpoints over a window of the most recent work (a minute, or half the work so far when that
 * is longer: quick to follow a change of documents early, steady late). There is no estimate until
 * three batches and a tenth of the folder's bytes are finished: on a real import of the MCP docs
 * (e2e/import-eta-real.test.ts) the first files are the densest, and an estimate from them was 3
 * to 4 times too long. Those two numbers were chosen on that recording (in-sample); a second
 * recording, of the specification folder alone, checks them.
 *
 * What is left is known only in bytes, and bytes are not the work: dense files, and passages the
 * embedding cache already holds (releases that repeat each other), make it run slower or faster
 * than the rate so far. An estimate from the passages still to embed would need the engine to
 * count them; on the recordings this one is never further off than the engine's own.
 */

export interface Checkpoint {
  /** The engine's elapsed time (ImportProgress.elapsedMs): immune to how late events reach the window. */
  t: number
  bytes: number
  texts: number
}

export interface ImportEtaState {
  /** When the work began (the first event past the scan that this window saw). */
  start: number
  checkpoints: Checkpoint[]
  /** Batches finished since the start (the window keeps only the recent checkpoints). */
  batches: number
  chunksWritten: number
  textsEmbedded: number
}

/** The rate is measured over at least this much of the most recent work, and over half of it when that is longer. */
export const RATE_WINDOW_MS = 60_000
/** No estimate from checkpoints closer together than this: too little work to say a rate. */
export const MIN_SPAN_MS = 2_000
/** No estimate before this many batches are finished... */
export const MIN_BATCHES = 3
/** ...and this share of the folder's bytes. */
export const MIN_DONE_SHARE = 0.1

/** Adds a progress event: a checkpoint when a batch was embedded or written since the last one. */
export function trackImport(prev: ImportEtaState | null, p: ImportProgress): ImportEtaState | null {
  if (p.phase === 'scanning') return prev
  if (!prev || prev.checkpoints.length === 0) {
    // The work clock starts with the first event past the scan (or the first one this window sees).
    const start = { t: p.elapsedMs, bytes: p.bytesDone, texts: p.textsEmbedded }
    return { start: start.t, checkpoints: [start], batches: 0, ...counters(p) }
  }
  if (p.chunksWritten <= prev.chunksWritten && p.textsEmbedded <= prev.textsEmbedded) return prev
  const points = [...prev.checkpoints, { t: p.elapsedMs, bytes: p.bytesDone, texts: p.textsEmbedded }]
  // Keep the window and the last checkpoint before it, so the window is spanned in full.
  const cutoff = p.elapsedMs - Math.max(RATE_WINDOW_MS, (p.elapsedMs - prev.start) / 2)
  const firstInside = points.findIndex((c) => c.t >= cutoff)
  return {
    start: prev.start,
    checkpoints: points.slice(Math.max(0, firstInside - 1)),
    batches: prev.batches + (p.chunksWritten > prev.chunksWritten ? 1 : 0),
    ...counters(p),
  }
}

function counters(p: ImportProgress): Pick<ImportEtaState, 'chunksWritten' | 'textsEmbedded'> {
  return { chunksWritten: p.chunksWritten, textsEmbedded: p.textsEmbedded }
}

export interface ImportEstimate {
  /** Time left, counted down from the last checkpoint; null until a rate is known, or when no estimate applies. */
  etaMs: number | null
  /** Passages embedded per second over the window; null without an embedder or before a rate is known. */
  textsPerSecond: number | null
}

/**
 * The estimate at `elapsedNow` (the engine's elapsed time as of now: the last event's elapsedMs
 * plus the time since it arrived), so it counts down between events.
 */
export function estimateImport(state: ImportEtaState | null, p: ImportProgress, elapsedNow: number): ImportEstimate {
  const none = { etaMs: null, textsPerSecond: null }
  if (!state || p.phase === 'done' || p.phase === 'cancelled' || p.phase === 'pruning' || p.phase === 'scanning') return none
  const first = state.checkpoints[0]
  const last = state.checkpoints.at(-1)
  if (!first || !last || last.t - first.t < MIN_SPAN_MS || last.bytes <= first.bytes) return none
  const span = last.t - first.t
  const bytesPerMs = (last.bytes - first.bytes) / span
  const texts = last.texts - first.texts
  const remaining = Math.max(0, p.bytesTotal - last.bytes)
  const known = state.batches >= MIN_BATCHES && last.bytes >= MIN_DONE_SHARE * p.bytesTotal
  return {
    etaMs: known ? Math.max(0, remaining / bytesPerMs - Math.max(0, elapsedNow - last.t)) : null,
    textsPerSecond: texts > 0 ? (texts / span) * 1000 : null,
  }
}
