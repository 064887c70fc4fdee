import { describe, expect, it } from 'vitest'
import { splitUnits } from './sentences'
import { GAP, trimPassage } from './trim'

const words = (t: string) => t.split(/\s+/).filter(Boolean).length

describe('splitUnits', () => {
  it('cuts prose into sentences, keeps list items, rows, headings and code blocks whole', () => {
    const text = [
      '### Retries',
      'The client retries 3 times. It waits e.g. 1.5 s between tries. Then it gives up.',
      '',
      '1. Open the file.',
      '2. Read it',
      '   to the end.',
      '',
      '| code | meaning |',
      '```sh',
      'npm ci',
      '```',
    ].join('\n')
    expect(splitUnits(text).map((u) => [u.kind, u.text, u.ordinal])).toEqual([
      ['heading', '### Retries', null],
      ['prose', 'The client retries 3 times.', null],
      ['prose', 'It waits e.g. 1.5 s between tries.', null],
      ['prose', 'Then it gives up.', null],
      ['list', '1. Open the file.', 1],
      ['list', '2. Read it to the end.', 2],
      ['table', '| code | meaning |', null],
      ['code', '```sh\nnpm ci\n```', null],
    ])
  })
})

describe('trimPassage', () => {
  const count = words
  const filler = (n: number) => Array.from({ length: n }, (_, i) => `Filler sentence number ${i} talks about nothing in particular here.`).join(' ')

  it('leaves a passage that fits alone', () => {
    const t = trimPassage('Short passage about timeouts.', 'timeouts', { budget: 50, countTokens: count })
    expect(t.text).toBe('Short passage about timeouts.')
    expect(t.units).toEqual([{ text: 'Short passage about timeouts.', match: true }])
  })

  it('keeps the sentences that bear on the question, with their neighbours, in order, marking gaps', () => {
    const text = `${filler(10)} The server answers an invalid Origin header with HTTP 403 Forbidden. It logs the attempt. ${filler(10)}`
    const t = trimPassage(text, 'What does the server answer for an invalid Origin header?', { budget: 40, countTokens: count })
    expect(t.text).toContain('The server answers an invalid Origin header with HTTP 403 Forbidden.')
    expect(t.text).toContain('It logs the attempt.')
    expect(t.text.startsWith(GAP)).toBe(true)
    expect(t.text.endsWith(GAP)).toBe(true)
    expect(t.tokensAfter).toBeLessThan(t.tokensBefore)
    expect(t.tokensAfter).toBeLessThanOrEqual(40 + 4)
    expect(t.units.find((u) => u.text.includes('403'))!.match).toBe(true)
  })

  it('keeps every step of a numbered procedure it quotes from (up to twice the budget)', () => {
    const steps = Array.from({ length: 6 }, (_, i) => `${i + 1}. Step ${i + 1}: turn knob ${i + 1} and wait.`).join('\n')
    const text = `${filler(8)}\n\nTo calibrate the sensor:\n\n${steps}\n\n${filler(8)}`
    const t = trimPassage(text, 'How do I calibrate the sensor?', { budget: 30, countTokens: count })
    for (let i = 1; i <= 6; i++) expect(t.text).toContain(`${i}. Step ${i}`)
  })

  it('falls back to the start of the passage when nothing matches', () => {
    const t = trimPassage(filler(20), 'zebra', { budget: 30, countTokens: count })
    expect(t.text.startsWith('Filler sentence number 0')).toBe(true)
    expect(t.tokensAfter).toBeLessThanOrEqual(31)
  })
})
