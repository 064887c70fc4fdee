import path from 'node:path'
import { AutoTokenizer } from '@huggingface/transformers'
import { describe, expect, it } from 'vitest'
import { mcpCorpus, realModels } from '../../../test-support/paths'
import { configureOfflineEnv } from './onnx-common'
import { tokenCounterFor } from './token-count'
import { paragraphsOf, TRICKY_TEXTS } from './token-count.testutil'

/** The real embedder's tokenizer (all-MiniLM-L6-v2, 30,522 word pieces) counts word by word exactly as on whole texts. */
describe('real embedder: token counts word by word', () => {
  it('equal the tokenizer on every paragraph of the MCP docs and on tricky text', async () => {
    configureOfflineEnv()
    const dir = path.join(realModels, 'embedding', 'all-minilm-l6-v2-int8')
    const tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true })
    const whole = (t: string) => tokenizer.encode(t, { add_special_tokens: false }).length
    const byWord = await tokenCounterFor(dir, whole)
    expect(byWord).not.toBe(whole)
    const texts = [...TRICKY_TEXTS, ...(await paragraphsOf(mcpCorpus, Infinity))]
    expect(texts.length).toBeGreaterThan(5000)
    expect(texts.filter((t) => byWord(t) !== whole(t))).toEqual([])
  })
})
