import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../store/db'
import { migrate } from '../store/migrations'
import { upsertCollection } from '../store/writer'
import { storeBackends } from '../../test-support/backends'
import { keywordChunk, writeKeywordDoc } from './keyword-docs.testutil'
import { bridgeNotice } from './search'
import { bridgeFloorFor, bridgeWords, canBridge, titleWords, unknownWords, withBridges, type WordEmbedder } from './bridge'

/**
 * The parts of the bridge that need no embedding model: which words of a question no passage
 * holds (stemmed and stop-worded as the index does it), the title words they may be bridged to,
 * the text keyword search and the gate read, and which embedders have a floor. The bridge itself,
 * with the real all-MiniLM-L6-v2, is in bridge.real.test.ts.
 */

describe('withBridges: the text keyword search reads', () => {
  it('writes each bridged word as its title word, whole words only, any case, with a possessive', () => {
    const bridges = [{ word: 'microphone', term: 'audio' }]
    expect(withBridges('Can a tool send a Microphone recording?', bridges)).toBe('Can a tool send a audio recording?')
    expect(withBridges("the microphone's level", bridges)).toBe('the audio level')
    // Part of a longer word, or of an identifier, is left alone.
    expect(withBridges('microphones and microphone_id and microphone-array', bridges)).toBe(
      'microphones and microphone_id and microphone-array',
    )
    expect(withBridges('no change', [])).toBe('no change')
  })
})

describe('what the person is told of a bridge', () => {
  it('names each word no passage says and what it was searched as', () => {
    const b = (word: string, term: string) => ({ word, term, cosine: 0.7 })
    expect(bridgeNotice([b('microphone', 'audio')])).toBe(
      'No passage says "microphone", so it was searched as "audio", the nearest word in the section titles.',
    )
    expect(bridgeNotice([b('elicitaiton', 'elicitation'), b('pictures', 'image')])).toBe(
      'No passage says "elicitaiton" or "pictures", so they were searched as "elicitation" and "image", the nearest words in the section titles.',
    )
  })
})

describe('bridge floors belong to the embedder they were read from', () => {
  it('all-MiniLM-L6-v2 (fp32 or int8) has one; the fixture model and models never measured have none', () => {
    expect(bridgeFloorFor('embedding/all-minilm-l6-v2-int8@a0f97b365d1b')).toBe(0.6)
    expect(bridgeFloorFor('embedding/all-MiniLM-L6-v2@123')).toBe(0.6)
    expect(bridgeFloorFor('embedding/bge-small-en-v1.5@abc')).toBeNull()
    expect(bridgeFloorFor('embedding/tiny-random-bert@abc')).toBeNull()
    const embedder = (id: string): WordEmbedder => ({ id, embedDocuments: async () => [] })
    expect(canBridge(embedder('embedding/all-minilm-l6-v2@1'))).toBe(true)
    expect(canBridge(embedder('embedding/bge-small-en-v1.5@1'))).toBe(false)
    // A query embedder without document vectors cannot bridge.
    expect(canBridge({ id: 'embedding/all-minilm-l6-v2@1', embedQuery: async () => new Float32Array() })).toBe(false)
    expect(canBridge(null)).toBe(false)
  })
})

for (const backend of storeBackends)
  describe.skipIf(backend.skip)(`the words a question shares with no passage (${backend.name})`, () => {
    let db: Db
    let cleanup: () => Promise<void>
    beforeAll(async () => {
      ;({ db, cleanup } = await backend.openDb())
      await migrate(db)
      await upsertCollection(db, 'docs', '/docs')
      await upsertCollection(db, 'other', '/other')
      await writeKeywordDoc(db, 'docs', 'tools.md', '2.0', [
        keywordChunk('docs', 'tools.md', 'Tools > Audio Content', 'Audio content carries base64 data and a mimeType.'),
        keywordChunk('docs', 'tools.md', 'Tools > Image Content', 'Image content carries base64 data, with what it shows.'),
      ])
      await writeKeywordDoc(db, 'other', 'notes.md', null, [
        keywordChunk('other', 'notes.md', 'Microphones', 'A microphone records speech.'),
      ])
    })
    afterAll(async () => {
      await cleanup()
    })

    it('keeps a word no passage of the searched collections holds, in question order, and drops stop words', async () => {
      // "microphone" is only in another collection; "contents" stems to a word the passages hold.
      expect(await unknownWords(db, ['docs'], 'How does a tool carry contents from a microphone, or a spoken clip?')).toEqual([
        'microphone',
        'spoken',
        'clip',
      ])
      expect(await unknownWords(db, ['docs', 'other'], 'carry contents from a microphone')).toEqual([])
      expect(await unknownWords(db, [], 'microphone')).toEqual([])
    })

    it('offers the words of section titles, each breadcrumb level, without stop words', async () => {
      expect(await titleWords(db, ['docs'])).toEqual(['audio', 'content', 'image', 'tools'])
    })

    it('reads the titles again once a chunk was written', async () => {
      expect(await titleWords(db, ['docs'])).not.toContain('video')
      await writeKeywordDoc(db, 'docs', 'video.md', '3.0', [
        keywordChunk('docs', 'video.md', 'Tools > Video Content', 'Video content carries a URL.'),
      ])
      expect(await titleWords(db, ['docs'])).toEqual(['audio', 'content', 'image', 'tools', 'video'])
    })

    it('bridges nothing, and embeds nothing, with an embedder that has no floor or when every word is known', async () => {
      let calls = 0
      const embedder = (id: string): WordEmbedder => ({
        id,
        embedDocuments: async (texts) => {
          calls++
          return texts.map(() => new Float32Array([1, 0]))
        },
      })
      expect(await bridgeWords(db, embedder('embedding/bge-small-en-v1.5@1'), ['docs'], 'a microphone clip')).toEqual([])
      expect(await bridgeWords(db, embedder('embedding/all-minilm-l6-v2@1'), ['docs'], 'audio content of a tool')).toEqual([])
      expect(calls).toBe(0)
    })
  })
