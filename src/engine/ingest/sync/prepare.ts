import type { Db } from '../../store/db'
import { stripControls } from '../parsers/textcheck'
import { mayStopTheProcess } from '../parsers/formats'
import { ParserStartError, type ParsePool } from '../parsers/worker-pool'
import type { TokenCounter } from '../../core/model-ports'
import type { WalkIssue } from '../walk'
import { type PreparedDocument, chunkParsed } from './chunk'
import { parsePlanned, readPlanned, type ParsedFile } from './parse'
import type { PlannedFile } from './plan'
import type { ProgressReporter } from './progress'
import { clearReading, noteReading } from './reading'
import type { StageTimer } from './timings'
import { isTransientFailure, writeFailure, writeTouched, type FailedFile } from './write'

/**
 * A PDF with more pages than this to recognise (a minute or more on two cores) is read after the
 * rest of the folder, in the same import: a person expects the short files first, not to wait on a
 * long scan that happens to come first in the folder. Its text layer is read twice for it.
 */
export const DEFER_OCR_OVER = 10

/** A failure reason as stored and shown: one line of plain text, whatever the library's message held. */
export function reasonText(reason: string): string {
  const line = stripControls(reason).replace(/\s+/g, ' ').trim()
  return (line.length > 1000 ? line.slice(0, 999) + '…' : line) || 'unknown error'
}

export interface PrepareContext {
  db: Db
  /** The folder's real path (walk.root). */
  root: string
  collection: string
  /** What documents are read with now (importer.ts, importSignature). */
  signature: string
  tokenCounter: TokenCounter
  kinds: Record<string, string> | undefined
  /** Text recognition of scanned pages and images (the collection's `ocr` setting). */
  ocr: boolean
  signal: AbortSignal | undefined
  pool: ParsePool | undefined
  timer: StageTimer
  progress: ProgressReporter
  onFailed: (path: string, reason: string) => void
}

/**
 * The per-file stages of a sync before embedding: read, parse, chunk, and every way a file can
 * fail on the way, recorded with its reason. A failure is remembered with the content that failed
 * and the build it failed with, so an unchanged failed file is listed again without being read
 * (`failed` decisions), unless it may pass by itself (the parser could not start, a transient
 * write conflict, a file that could not be read).
 */
export class FilePreparer {
  /** Every file of this sync that failed, in order (the walk's first). */
  readonly failed: WalkIssue[]
  /** Failed files listed again without being read: unchanged since they failed with this build. */
  notRetried = 0
  /** Per-file notices (pages left out, and why), prefixed with the file's path. */
  readonly notices: string[] = []
  /** Files put back to be read after the rest of the folder (DEFER_OCR_OVER). */
  readonly deferred: PlannedFile[] = []

  constructor(
    private readonly ctx: PrepareContext,
    walkFailed: WalkIssue[],
  ) {
    this.failed = [...walkFailed]
  }

  /** `remember`: the content and the document's own signature (plan.ts documentSignature) it failed with, so it waits until either changes. */
  async fail(file: FailedFile, reason: string, remember: { sha256: string; signature: string } | null): Promise<void> {
    const text = reasonText(reason)
    this.failed.push({ relativePath: file.path, reason: text })
    await writeFailure(this.ctx.db, this.ctx.collection, file, text, remember)
    this.ctx.progress.state.failed++
    this.ctx.onFailed(file.path, text)
  }

  /** A document the store refused (DocumentWriter): that file's failure, and the rest goes on. */
  async writeFailed(p: PreparedDocument, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err)
    const file = { id: p.doc.id, path: p.doc.path, size: p.doc.size, mtimeMs: p.doc.mtimeMs }
    await this.fail(
      file,
      `could not be stored in the index: ${message}`,
      isTransientFailure(err) ? null : { sha256: p.doc.sha256, signature: p.doc.chunker },
    )
  }

  /** A failed file not read again: it is listed as failed with the reason it failed with. */
  private stillFailed(item: PlannedFile): null {
    this.failed.push({ relativePath: item.file.relativePath, reason: item.storedError ?? 'failed before' })
    this.ctx.progress.state.failed++
    this.notRetried++
    return null
  }

  /** The parse stage, with the file noted while a reader that can stop the engine has it (reading.ts). */
  private async parse(item: PlannedFile, read: { bytes: Uint8Array; sha: string }, defer: boolean): Promise<ParsedFile> {
    const { ctx } = this
    const f = item.file
    const noted = mayStopTheProcess(f.relativePath)
    if (noted) {
      const note = { id: item.docId, path: f.relativePath, size: f.size, mtimeMs: f.mtimeMs, sha256: read.sha }
      await noteReading(ctx.db, ctx.collection, { ...note, signature: item.signature })
    }
    try {
      return await parsePlanned(item, read, ctx.kinds, ctx.timer, {
        signal: ctx.signal,
        pool: ctx.pool,
        onProgress: (fp) => ctx.progress.fileProgress(fp),
        ocr: ctx.ocr,
        deferOcrOver: defer ? DEFER_OCR_OVER : undefined,
      })
    } finally {
      if (noted) await clearReading(ctx.db, ctx.collection)
    }
  }

  /**
   * Parse and chunk one file; null when there is nothing to write (unchanged, failed and recorded,
   * or put back in `deferred` to be read again, with `defer` false, after the rest).
   */
  async prepare(item: PlannedFile, defer = true): Promise<PreparedDocument | null> {
    const { ctx } = this
    const p = ctx.progress.state
    if (item.decision === 'unchanged') {
      p.unchanged++
      return null
    }
    if (item.decision === 'failed') return this.stillFailed(item)
    const file = { id: item.docId, path: item.file.relativePath, size: item.file.size, mtimeMs: item.file.mtimeMs }
    const read = await readPlanned(ctx.root, item, ctx.timer)
    if (read.status === 'unreadable') {
      await this.fail(file, read.reason, null)
      return null
    }
    if (defer) ctx.progress.worked(item.file.size)
    if (read.status === 'same') {
      await writeTouched(ctx.db, item)
      if (item.storedFailed) return this.stillFailed(item)
      p.unchanged++
      return null
    }
    try {
      const parsed = await this.parse(item, read, defer)
      if (parsed.parsed.deferredOcrPages !== undefined) {
        this.deferred.push(item)
        return null
      }
      for (const n of parsed.parsed.notices ?? []) this.notices.push(`${item.file.relativePath}: ${n}`)
      const t0 = performance.now()
      const prepared = chunkParsed(item, parsed, {
        collection: ctx.collection,
        signature: ctx.signature,
        tokenCounter: ctx.tokenCounter,
      })
      ctx.timer.add('chunk', performance.now() - t0)
      return prepared
    } catch (err) {
      // A cancelled parse is a cancelled import (the importer sees the signal), not a file that failed.
      if (ctx.signal?.aborted) throw err
      const remember = err instanceof ParserStartError ? null : { sha256: read.sha, signature: item.signature }
      await this.fail(file, err instanceof Error ? err.message : String(err), remember)
      return null
    }
  }
}
