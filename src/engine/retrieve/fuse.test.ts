import { describe, expect, it } from 'vitest'
import {
  changeLogRanking,
  fuseLists,
  fuseRanks,
  HYBRID_FUSION,
  isChangeLog,
  minMax,
  RRF_K,
  withChangeLog,
  type FusionRule,
} from './fuse'

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

describe('fuseLists', () => {
  const kw = [
    { chunk_id: 'a', score: 9 },
    { chunk_id: 'b', score: 5 },
    { chunk_id: 'c', score: 1 },
  ]
  const vec = [
    { chunk_id: 'c', score: 0.8 },
    { chunk_id: 'd', score: 0.7 },
    { chunk_id: 'a', score: 0.4 },
  ]

  it('equal RRF is fuseRanks over the two lists', () => {
    const fused = fuseLists({ kind: 'rrf', k: RRF_K }, { keyword: kw, vector: vec, exact: false })
    const ranks = (xs: { chunk_id: string }[]) => xs.map((x, i) => ({ chunk_id: x.chunk_id, rank: i + 1 }))
    expect(fused).toEqual(fuseRanks({ keyword: ranks(kw), vector: ranks(vec) }))
  })

  it('a single list keeps its order under every rule', () => {
    const rules: FusionRule[] = [
      { kind: 'rrf', k: 60 },
      { kind: 'weighted_rrf', k: 60, exact_keyword_weight: 3 },
      { kind: 'convex', keyword_share: 0.3, exact_extra: 0.5 },
      { kind: 'vector_cutoff', k: 60, delta: 0.01 },
      { kind: 'keyword_led', k: 60, lead: 1 },
      { kind: 'agreed_first', k: 60, depth: 10 },
    ]
    for (const rule of rules) {
      expect(fuseLists(rule, { keyword: kw, vector: null, exact: true }).map((f) => f.chunk_id)).toEqual(['a', 'b', 'c'])
      expect(fuseLists(rule, { keyword: null, vector: vec, exact: false }).map((f) => f.chunk_id)).toEqual(['c', 'd', 'a'])
    }
  })

  it('weighted RRF multiplies the keyword share only for exact-token questions', () => {
    const rule: FusionRule = { kind: 'weighted_rrf', k: 60, exact_keyword_weight: 2 }
    const plain = fuseLists(rule, { keyword: kw, vector: vec, exact: false })
    const exact = fuseLists(rule, { keyword: kw, vector: vec, exact: true })
    expect(plain.find((f) => f.chunk_id === 'b')!.rrf).toBeCloseTo(1 / 62)
    expect(exact.find((f) => f.chunk_id === 'b')!.rrf).toBeCloseTo(2 / 62)
    expect(exact.find((f) => f.chunk_id === 'a')!.rrf).toBeCloseTo(2 / 61 + 1 / 63)
  })

  it('convex mixes min-max normalised scores, a missing chunk scoring 0 in that list', () => {
    const fused = fuseLists({ kind: 'convex', keyword_share: 0.25, exact_extra: 0.5 }, { keyword: kw, vector: vec, exact: false })
    const by = new Map(fused.map((f) => [f.chunk_id, f]))
    // keyword normalised: a 1, b 0.5, c 0; vector: c 1, d 0.75, a 0
    expect(by.get('a')!.rrf).toBeCloseTo(0.25 * 1 + 0.75 * 0)
    expect(by.get('b')!.rrf).toBeCloseTo(0.25 * 0.5)
    expect(by.get('c')!.rrf).toBeCloseTo(0.75 * 1)
    expect(by.get('d')!.rrf).toBeCloseTo(0.75 * 0.75)
    expect(fused.map((f) => f.chunk_id)).toEqual(['c', 'd', 'a', 'b'])
    expect(by.get('a')!.ranks).toEqual({ keyword: 1, vector: 3 })
    // An exact token moves the share to 0.75: a now leads.
    const exact = fuseLists({ kind: 'convex', keyword_share: 0.25, exact_extra: 0.5 }, { keyword: kw, vector: vec, exact: true })
    expect(exact[0]!.chunk_id).toBe('a')
    expect(exact[0]!.rrf).toBeCloseTo(0.75)
  })

  it('min-max scores a list of equal scores 1 throughout', () => {
    expect([
      ...minMax([
        { chunk_id: 'x', score: 2 },
        { chunk_id: 'y', score: 2 },
      ]).values(),
    ]).toEqual([1, 1])
  })

  it('vector cut-off drops vector hits more than delta below the best cosine', () => {
    const fused = fuseLists({ kind: 'vector_cutoff', k: 60, delta: 0.15 }, { keyword: kw, vector: vec, exact: false })
    expect(fused.map((f) => f.chunk_id).sort()).toEqual(['a', 'b', 'c', 'd'])
    expect(fused.find((f) => f.chunk_id === 'a')!.ranks).toEqual({ keyword: 1 })
  })

  it('a change question puts the best change-log section first under any rule', () => {
    const rule: FusionRule = { kind: 'convex', keyword_share: 0.5, exact_extra: 0 }
    const input = { keyword: kw, vector: vec, exact: false }
    const fused = fuseLists(rule, input)
    const boost = changeLogRanking(fused, new Set(['d']))
    const out = withChangeLog(rule, input, fused, boost)
    expect(out[0]!.chunk_id).toBe('d')
    expect(out[0]!.ranks).toEqual({ vector: 2, change_log: 1 })
    expect(out.map((f) => f.chunk_id).sort()).toEqual(['a', 'b', 'c', 'd'])
    // No change-log section among the candidates: the fused order stands.
    expect(withChangeLog(rule, input, fused, [])).toBe(fused)
    // Equal RRF keeps its three-list form.
    const rrf: FusionRule = { kind: 'rrf', k: RRF_K }
    const r = fuseLists(rrf, input)
    const ranks = (xs: { chunk_id: string }[]) => xs.map((x, i) => ({ chunk_id: x.chunk_id, rank: i + 1 }))
    expect(withChangeLog(rrf, input, r, changeLogRanking(r, new Set(['d'])))).toEqual(
      fuseRanks({ keyword: ranks(kw), vector: ranks(vec), change_log: [{ chunk_id: 'd', rank: 1 }] }),
    )
  })

  it("keyword-led puts keyword's first results ahead of the RRF order, which RRF alone would not", () => {
    const k2 = [
      { chunk_id: 'a', score: 9 },
      { chunk_id: 'b', score: 5 },
      { chunk_id: 'c', score: 1 },
    ]
    const v2 = [
      { chunk_id: 'b', score: 0.8 },
      { chunk_id: 'd', score: 0.7 },
      { chunk_id: 'e', score: 0.4 },
    ]
    const input = { keyword: k2, vector: v2, exact: false }
    // RRF: b is in both lists and outscores keyword's first, a.
    expect(fuseLists({ kind: 'rrf', k: 60 }, input).map((f) => f.chunk_id)).toEqual(['b', 'a', 'd', 'c', 'e'])
    const led = fuseLists({ kind: 'keyword_led', k: 60, lead: 1 }, input)
    expect(led.map((f) => f.chunk_id)).toEqual(['a', 'b', 'd', 'c', 'e'])
    // The trace keeps each chunk's own ranks and RRF score.
    expect(led[0]!.ranks).toEqual({ keyword: 1 })
    expect(led[0]!.rrf).toBeCloseTo(1 / 61)
    // A longer lead keeps keyword's first two in keyword order.
    expect(fuseLists({ kind: 'keyword_led', k: 60, lead: 2 }, input).map((f) => f.chunk_id)).toEqual(['a', 'b', 'd', 'c', 'e'])
    expect(HYBRID_FUSION).toEqual({ kind: 'keyword_led', k: RRF_K, lead: 1 })
  })

  it("agreed-first moves keyword's first ahead only when the vector list has it within depth", () => {
    const k2 = [
      { chunk_id: 'a', score: 9 },
      { chunk_id: 'b', score: 5 },
    ]
    const v2 = [
      { chunk_id: 'b', score: 0.8 },
      { chunk_id: 'd', score: 0.7 },
      { chunk_id: 'a', score: 0.4 },
    ]
    const input = { keyword: k2, vector: v2, exact: false }
    expect(fuseLists({ kind: 'agreed_first', k: 60, depth: 3 }, input)[0]!.chunk_id).toBe('a')
    expect(fuseLists({ kind: 'agreed_first', k: 60, depth: 2 }, input).map((f) => f.chunk_id)).toEqual(
      fuseLists({ kind: 'rrf', k: 60 }, input).map((f) => f.chunk_id),
    )
  })
})
