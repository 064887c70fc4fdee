import { describe, expect, it } from 'vitest'
import type { ImportProgress } from '../../shared/api'
import { progressBar } from './main'

const base: ImportProgress = {
  phase: 'importing',
  collection: 'manuals',
  filesTotal: 40,
  filesDone: 12,
  currentFile: 'manuals/big.pdf',
  imported: 12,
  unchanged: 0,
  failed: 0,
  skipped: 0,
  chunksWritten: 80,
  textsEmbedded: 0,
  bytesTotal: 100_000,
  bytesDone: 30_000,
  elapsedMs: 4_000,
  etaMs: 9_500,
}

describe('docent ingest progress line', () => {
  // Issue 26: a 61-second parse of a 5,000-page PDF showed the same line for a minute.
  it('shows the page inside a long file while it is parsed', () => {
    const line = progressBar({ ...base, fileProgress: { stage: 'pages', done: 1250, total: 5000 } })
    expect(line).toContain('12/40 files, 80 chunks eta 10s manuals/big.pdf (page 1250/5000)')
    expect(progressBar({ ...base, fileProgress: null })).not.toMatch(/page/)
  })
})
