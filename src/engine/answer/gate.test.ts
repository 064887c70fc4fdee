import { describe, expect, it } from 'vitest'
import { calibrateGate, decideGate, rerankerGateFor } from './gate'
import type { KeywordEvidence } from '../../shared/trace'

const evidence = (over: Partial<KeywordEvidence> = {}): KeywordEvidence => ({
  n: 1000,
  terms: [],
  known_share: 1,
  top_coverage: 1,
  meaningful: ['ping'],
  ...over,
})

describe('calibrateGate', () => {
  it('picks the threshold that keeps the most answerable and refuses the most unanswerable', () => {
    const c = calibrateGate([
      { score: 5, answerable: true },
      { score: 3, answerable: true },
      { score: 1, answerable: true },
      { score: -1, answerable: false },
      { score: -4, answerable: false },
      { score: 0.5, answerable: false },
      { score: 4, answerable: false },
    ])
    // Between 0.5 and 1 everything but the unanswerable 4 is right: 6 of 7.
    expect(c.threshold).toBe(0.75)
    expect(c.answerable_kept + c.unanswerable_refused).toBe(6)
  })

  it('leans to refusing on ties (the higher threshold wins)', () => {
    // Thresholds in (1, 2] keep 1 answerable, refuse 1 unanswerable = 2; a threshold of 0 keeps
    // both answerable and refuses none = 2 as well: the tie goes to the stricter threshold.
    const c = calibrateGate([
      { score: 2, answerable: true },
      { score: 1, answerable: false },
      { score: 0.5, answerable: true },
    ])
    expect(c.answerable_kept + c.unanswerable_refused).toBe(2)
    expect(c.threshold).toBe(1.5)
  })

  it('always refuses questions that retrieved nothing', () => {
    const c = calibrateGate([
      { score: null, answerable: false },
      { score: 1, answerable: true },
    ])
    expect(c.unanswerable_refused).toBe(1)
    expect(c.answerable_kept).toBe(1)
  })
})

describe('decideGate', () => {
  it('passes or refuses on the reranker threshold for that model', () => {
    expect(rerankerGateFor('Xenova/ms-marco-MiniLM-L-6-v2').match).toBe('ms-marco-minilm-l-6-v2')
    const base = { rerankerId: 'ms-marco-MiniLM-L-6-v2', embedderId: null, bestCosine: null, keyword: evidence() }
    expect(decideGate({ ...base, bestReranker: 4 }).pass).toBe(true)
    const refused = decideGate({ ...base, bestReranker: -3 })
    expect(refused).toMatchObject({ pass: false, basis: 'reranker', refusal: 'no_relevant_sources', threshold: -2 })
    expect(decideGate({ ...base, bestReranker: -3, thresholdOverride: -5 }).pass).toBe(true)
  })

  it('calls it off topic only when the score is far below the gate AND the query has no meaningful known terms', () => {
    const base = { rerankerId: 'ms-marco-MiniLM-L-6-v2', embedderId: null, bestCosine: null }
    // "How does ping work?" style: low score, but the collection knows its words -> not off topic.
    expect(decideGate({ ...base, bestReranker: -11, keyword: evidence() }).refusal).toBe('no_relevant_sources')
    // Banana bread: far below, and the informative words are unknown to the collection.
    expect(decideGate({ ...base, bestReranker: -11, keyword: evidence({ known_share: 0.2, meaningful: [] }) }).refusal).toBe(
      'off_topic',
    )
    // Unknown words, but the score is only a little below the gate -> no_relevant_sources.
    expect(decideGate({ ...base, bestReranker: -3, keyword: evidence({ known_share: 0.2, meaningful: [] }) }).refusal).toBe(
      'no_relevant_sources',
    )
  })

  it('falls back to cosine and keyword evidence without a reranker, and says so', () => {
    const d = decideGate({
      rerankerId: null,
      bestReranker: null,
      embedderId: 'bge-small-en-v1.5',
      bestCosine: 0.7,
      keyword: evidence({ top_coverage: 0.1 }),
    })
    expect(d).toMatchObject({ pass: true, basis: 'fallback', cosine_floor: 0.62 })
    expect(
      decideGate({
        rerankerId: null,
        bestReranker: null,
        embedderId: null,
        bestCosine: null,
        keyword: evidence({ top_coverage: 0.8 }),
      }).pass,
    ).toBe(true)
    const weak = decideGate({
      rerankerId: null,
      bestReranker: null,
      embedderId: null,
      bestCosine: null,
      keyword: evidence({ top_coverage: 0.1 }),
    })
    expect(weak).toMatchObject({ pass: false, refusal: 'no_relevant_sources' })
    const offTopic = decideGate({
      rerankerId: null,
      bestReranker: null,
      embedderId: null,
      bestCosine: null,
      keyword: evidence({ top_coverage: 0, known_share: 0.1, meaningful: [] }),
    })
    expect(offTopic.refusal).toBe('off_topic')
  })
})
