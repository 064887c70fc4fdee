import { describe, expect, it } from 'vitest'
import type { VerificationRepair } from '../../shared/trace'
import { addCloseSentences, type Closeness } from './close-sentences'
import type { KeptSentence } from './procedure'
import type { PromptPassage } from './prompt'

/**
 * Sentences of the cited passages that say what was asked in other words, by the embedding
 * model's cosine to the question. The cosines here are scripted per sentence (the real embedder's
 * are in close-sentences.real.test.ts), so each case says which sentence the model finds close.
 */

// The shape of the MCP pagination page (p32 of mcp-docs-people's fit half, with the real model):
// asked whether cursors can be saved for later, the answer said they are opaque and stopped.
const GUIDELINES = `## Implementation Guidelines

Clients SHOULD treat a missing nextCursor as the end of results.

- Clients MUST treat cursors as opaque tokens
- Don't make assumptions about cursor format
- Don't persist cursors across sessions
- Handle invalid cursors

Servers SHOULD provide stable cursors and handle invalid cursors gracefully.`

const OTHER = `## Pagination Model

Pagination is a cursor-based approach instead of numbered pages. The page size is chosen by the server and clients cannot rely on it.`

const passage = (n: number, text: string): PromptPassage =>
  ({ n, chunk_id: `c${n}`, text, heading: 'h', path: 'p.md', version: null, kind: null }) as unknown as PromptPassage

const QUESTION = 'pagination cursors - can the client parse them or save them for later?'
const said: KeptSentence[] = [{ text: 'Clients MUST treat cursors as opaque tokens.', cites: [1] }]

/** The embedding model, scripted: each sentence's cosine to the question by its first words; others 0.1. */
const scripted = (cos: Record<string, number>, floor = 0.5): Closeness & { asked: string[][] } => {
  const asked: string[][] = []
  return {
    floor,
    asked,
    cosines: async (_q, sentences) => {
      asked.push(sentences)
      return sentences.map((s) => Object.entries(cos).find(([start]) => s.startsWith(start))?.[1] ?? 0.1)
    },
  }
}

const add = async (
  kept: KeptSentence[],
  passages: PromptPassage[],
  closeness?: Closeness,
  misses?: (s: string[]) => Promise<{ index: number }[]>,
) => {
  const repairs: VerificationRepair[] = []
  const out = await addCloseSentences(kept, passages, (p) => p.text, QUESTION, repairs, closeness, misses)
  return { out, repairs }
}

describe('sentences of the cited passages close in meaning to the question', () => {
  it('adds the closest sentences at or above the model’s floor, at most two, closest first, after the sentence citing their passage', async () => {
    const model = scripted({
      "- Don't persist": 0.61,
      "- Don't make": 0.58,
      'Servers SHOULD provide': 0.52,
      'Clients SHOULD treat': 0.3,
    })
    const kept: KeptSentence[] = [...said, { text: 'Pages are sized by the server.', cites: [2] }]
    const { out, repairs } = await add(kept, [passage(1, GUIDELINES), passage(2, OTHER)], model)
    expect(out).toEqual([
      said[0],
      { text: "- Don't persist cursors across sessions", cites: [1], added: 'quote' },
      { text: "- Don't make assumptions about cursor format", cites: [1], added: 'quote' },
      kept[1],
    ])
    expect(repairs).toEqual([
      {
        code: 'key_sentences_added',
        message:
          '2 sentences of passage [1], which the answer cites, close in meaning to the question and not in the answer were copied from it.',
      },
    ])
  })

  it('adds nothing below the floor, and nothing without an embedding model', async () => {
    expect((await add(said, [passage(1, GUIDELINES)], scripted({ "- Don't persist": 0.49 }))).out).toEqual(said)
    const { out, repairs } = await add(said, [passage(1, GUIDELINES)], undefined)
    expect(out).toEqual(said)
    expect(repairs).toEqual([])
  })

  it('reads only the passages the model’s own sentences cite, and only sentences that stand alone', async () => {
    const model = scripted({ 'Pagination is': 0.9, 'The page size': 0.9, '- Handle invalid': 0.9 })
    // Passage 2 is read but not cited; "- Handle invalid cursors" holds three content words.
    const { out } = await add(said, [passage(1, GUIDELINES), passage(2, OTHER)], model)
    expect(out).toEqual(said)
    expect(model.asked.flat()).not.toContain('The page size is chosen by the server and clients cannot rely on it.')
    expect(model.asked.flat()).not.toContain('- Handle invalid cursors')
  })

  it('never adds what the answer says already, nor what a copied sentence cites alone', async () => {
    const model = scripted({ '- Clients MUST': 0.9, "- Don't persist": 0.7 })
    const copied: KeptSentence[] = [{ text: 'Paging is the server’s choice.', cites: [2], added: 'quote' }]
    // The only sentence citing passage 1 is copied: the model's own sentences cite passage 2 alone.
    const { out } = await add(
      [{ text: 'Pages are sized by the server.', cites: [2] }, ...copied],
      [passage(1, GUIDELINES), passage(2, OTHER)],
      model,
    )
    expect(out.some((s) => s.text.includes('persist'))).toBe(false)
    const again = await add(said, [passage(1, GUIDELINES)], model)
    expect(again.out.map((s) => s.text)).toEqual([
      'Clients MUST treat cursors as opaque tokens.',
      "- Don't persist cursors across sessions",
    ])
  })

  it('passes its sentences through the release rule after generation', async () => {
    const model = scripted({ "- Don't persist": 0.7, "- Don't make": 0.6 })
    const misses = async (sentences: string[]) => sentences.flatMap((s, index) => (s.includes('persist') ? [{ index }] : []))
    const { out } = await add(said, [passage(1, GUIDELINES)], model, misses)
    expect(out.map((s) => s.text)).toEqual([
      'Clients MUST treat cursors as opaque tokens.',
      "- Don't make assumptions about cursor format",
    ])
  })
})
