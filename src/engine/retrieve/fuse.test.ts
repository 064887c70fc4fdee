import { describe, expect, it } from 'vitest'
import { changeLogRanking, fuseRanks, isChangeLog, RRF_K } from './fuse'

describe('fuseRanks', () => {
  it('sums 1/(k+rank) per chunk id and keeps each retriever rank', () => {
    const fused = fuseRanks({
      keyword: [
        { chunk_id: 'a', rank: 1 },
        { chunk_id: 'b', rank: 2 },
      ],
      vector: [
        { chunk_id: 'b', rank: 1 },
        { chunk_id: 'c', rank: 2 },
      ],
    })
    expect(fused.map((f) => f.chunk_id)).toEqual(['b', 'a', 'c'])
    expect(fused[0]!.rrf).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    expect(fused[0]!.ranks).toEqual({ keyword: 2, vector: 1 })
    expect(fused[2]!.ranks).toEqual({ vector: 2 })
  })
  it('keys on chunk id: two chunks with identical text in different versions stay apart', () => {
    const fused = fuseRanks({
      keyword: [
        { chunk_id: 'v1-intro', rank: 1 },
        { chunk_id: 'v2-intro', rank: 2 },
      ],
    })
    expect(fused).toHaveLength(2)
  })
})

describe('change-log sections', () => {
  it.each([
    ['CHANGELOG.md', ''],
    ['spec/2025-06-18/changelog.mdx', 'Key Changes > Major changes'],
    ['docs/release-notes/1.2.md', 'Fixes'],
    ['whats-new.html', ''],
    ['HISTORY.md', ''],
    ['guide/upgrade.md', 'Release Notes > 1.2'],
  ])('recognises %s (%s)', (p, heading) => {
    expect(isChangeLog({ path: p, heading, kind: null })).toBe(true)
  })

  it.each([
    ['spec/server/tools.mdx', 'Tools > Listing tools'],
    ['docs/exchange-rates.md', 'Rates'],
    ['guide/historyless.md', ''],
  ])('leaves %s alone', (p, heading) => {
    expect(isChangeLog({ path: p, heading, kind: null })).toBe(false)
  })

  it('adds one ranking of the change-log candidates in fused order', () => {
    const fused = fuseRanks({
      keyword: [
        { chunk_id: 'a', rank: 1 },
        { chunk_id: 'log2', rank: 2 },
        { chunk_id: 'b', rank: 3 },
        { chunk_id: 'log1', rank: 4 },
      ],
    })
    const boost = changeLogRanking(fused, new Set(['log1', 'log2']))
    expect(boost).toEqual([
      { chunk_id: 'log2', rank: 1 },
      { chunk_id: 'log1', rank: 2 },
    ])
    const again = fuseRanks({ keyword: fused.map((f, i) => ({ chunk_id: f.chunk_id, rank: i + 1 })), change_log: boost })
    expect(again[0]!.chunk_id).toBe('log2')
    expect(again[0]!.ranks).toEqual({ keyword: 2, change_log: 1 })
  })
})
