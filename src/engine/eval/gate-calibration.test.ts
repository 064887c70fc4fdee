import { describe, expect, it } from 'vitest'
import { calibrateDegradedGate, fitGateRule, halfOf, passes, scoreBySet, scoreRule, type GateSample } from './gate-calibration'

const sample = (id: string, answerable: boolean, cos: number | null, cov: number | null, meaningful = 1): GateSample => ({
  id,
  set: 's',
  kind: answerable ? 'paraphrase' : 'absent-feature',
  answerable,
  best_cosine: cos,
  keyword_top_coverage: cov,
  meaningful_terms: meaningful,
  passed_now: true,
  refusal_now: null,
  half: halfOf('s', id),
})

describe('degraded gate calibration', () => {
  it('passes on either kind of evidence, and keyword evidence needs a meaningful term', () => {
    const rule = { cosine_floor: 0.5, keyword_coverage: 0.3 }
    expect(passes(sample('a', true, 0.6, 0), rule)).toBe(true)
    expect(passes(sample('a', true, 0.1, 0.4), rule)).toBe(true)
    expect(passes(sample('a', true, 0.1, 0.4, 0), rule)).toBe(false)
    expect(passes(sample('a', true, null, null), rule)).toBe(false)
  })

  it('fits the thresholds that separate answerable from unanswerable, leaning strict on ties', () => {
    const samples = [
      sample('1', true, 0.7, 0.1),
      sample('2', true, 0.65, 0.5),
      sample('3', true, 0.3, 0.6),
      sample('4', false, 0.45, 0.2),
      sample('5', false, 0.5, 0.1),
    ]
    const rule = fitGateRule(samples)
    const s = scoreRule(samples, rule)
    expect(s).toMatchObject({ answerable_kept: 3, unanswerable_refused: 2, balanced_accuracy: 1 })
    // Strictest separating floors: just above the unanswerable evidence.
    expect(rule.cosine_floor).toBeGreaterThan(0.5)
    expect(rule.cosine_floor).toBeLessThanOrEqual(0.65)
    expect(rule.keyword_coverage).toBeGreaterThan(0.2)
  })

  it('splits questions into two stable halves and reports the fit on the half it did not see', () => {
    expect(halfOf('s', 'q01')).toBe(halfOf('s', 'q01'))
    const ids = Array.from({ length: 200 }, (_, i) => `q${i}`)
    const fit = ids.filter((id) => halfOf('s', id) === 'fit').length
    expect(fit).toBeGreaterThan(70)
    expect(fit).toBeLessThan(130)
    const samples = ids.map((id, i) => sample(id, i % 4 !== 0, i % 4 !== 0 ? 0.6 : 0.4, 0))
    const report = calibrateDegradedGate(samples, 'all-minilm-l6-v2')
    expect(report.fitted_on.held_out.balanced_accuracy).toBe(1)
    expect(report.fitted_on.fit.answerable + report.fitted_on.held_out.answerable).toBe(150)
  })

  it('scores a rule on each question set apart, so a set it was not fitted on is a held-out check', () => {
    const rule = { cosine_floor: 0.5, keyword_coverage: 0.3 }
    const samples = [
      { ...sample('1', true, 0.6, 0), set: 'fitted-on' },
      { ...sample('2', false, 0.1, 0.1), set: 'fitted-on' },
      { ...sample('1', true, 0.2, 0.2), set: 'other' },
      { ...sample('2', true, 0.7, 0), set: 'other' },
      { ...sample('3', false, 0.9, 0), set: 'other' },
    ]
    expect(scoreBySet(samples, rule)).toEqual([
      { set: 'fitted-on', score: scoreRule(samples.slice(0, 2), rule) },
      { set: 'other', score: scoreRule(samples.slice(2), rule) },
    ])
    expect(scoreBySet(samples, rule)[1]!.score).toMatchObject({ answerable_kept: 1, answerable: 2, unanswerable_refused: 0 })
  })
})
