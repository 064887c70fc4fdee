import { describe, expect, it } from 'vitest'
import { fuseRanks, RRF_K } from './fuse'

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
