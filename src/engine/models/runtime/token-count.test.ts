import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { AutoTokenizer } from '@huggingface/transformers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixtureModels, mcpCorpus, tempDir } from '../../../test-support/paths'
import { configureOfflineEnv } from './onnx-common'
import { countsByWord, tokenCounterFor, wordByWordCounter } from './token-count'
import { paragraphsOf, TRICKY_TEXTS } from './token-count.testutil'

const fixtureEmbedder = path.join(fixtureModels, 'embedding', 'tiny-random-bert')

describe('token counts word by word', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> }
  beforeAll(async () => {
    tmp = await tempDir()
  })
  afterAll(async () => tmp.cleanup())

  it('are used only for tokenizers that split at whitespace first', async () => {
    expect(await countsByWord(fixtureEmbedder)).toBe(true)
    const write = async (name: string, json: unknown) => {
      const dir = path.join(tmp.dir, name)
      await mkdir(dir, { recursive: true })
      await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(json))
      return dir
    }
    // Byte-level BPE and SentencePiece: a word's tokens depend on the space before it.
    expect(await countsByWord(await write('bpe', { pre_tokenizer: { type: 'ByteLevel' } }))).toBe(false)
    expect(await countsByWord(await write('sp', { pre_tokenizer: { type: 'Metaspace' } }))).toBe(false)
    expect(await countsByWord(await write('none', { pre_tokenizer: null }))).toBe(false)
    // An added token with a space in it would be matched across two words.
    const spaced = { pre_tokenizer: { type: 'BertPreTokenizer' }, added_tokens: [{ content: 'new york', special: false }] }
    expect(await countsByWord(await write('spaced', spaced))).toBe(false)
    expect(await countsByWord(path.join(tmp.dir, 'missing'))).toBe(false)
    // Not word by word: the whole-text counter is handed back as it is.
    const whole = (t: string) => t.length
    expect(await tokenCounterFor(path.join(tmp.dir, 'bpe'), whole)).toBe(whole)
  })

  it('equal the tokenizer on whole texts: the MCP docs, paragraph by paragraph, and tricky text', async () => {
    configureOfflineEnv()
    const tokenizer = await AutoTokenizer.from_pretrained(fixtureEmbedder, { local_files_only: true })
    const whole = (t: string) => tokenizer.encode(t, { add_special_tokens: false }).length
    const byWord = await tokenCounterFor(fixtureEmbedder, whole)
    expect(byWord).not.toBe(whole)
    const texts = [...TRICKY_TEXTS, ...(await paragraphsOf(mcpCorpus))]
    expect(texts.length).toBeGreaterThan(1000)
    const wrong = texts.filter((t) => byWord(t) !== whole(t))
    expect(wrong).toEqual([])
    // The memory is what makes it cheaper: a word seen before is not given to the tokenizer again.
    let calls = 0
    const counted = wordByWordCounter((t) => (calls++, whole(t)))
    counted('the server and the client')
    counted('the client and the server')
    expect(calls).toBe(4)
  })
})
