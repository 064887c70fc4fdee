import { readFile } from 'node:fs/promises'
import path from 'node:path'

/**
 * Token counts for the chunker, word by word where that is exact. A BERT-style tokenizer (the
 * embedders of the catalog and of `models:dev`: all-MiniLM, bge) splits its input at whitespace
 * before anything else, and its normaliser (control characters out, accents, case, spaces around
 * CJK characters) works character by character, so the count of a text is the sum of the counts
 * of its whitespace-separated words. Documentation repeats its words (and whole sections, across
 * versions), so each word is counted by the tokenizer once and remembered: the chunker, which
 * counts every sentence of every document on the engine's thread, then spends a fraction of the
 * time in the tokenizer. Any other tokenizer (byte-level BPE, SentencePiece: a word's tokens
 * depend on the space before it) is asked for whole texts, as before.
 */

/** Pre-tokenizers that split at whitespace first, whatever follows. */
const SPLITS_AT_WHITESPACE = new Set(['BertPreTokenizer', 'Whitespace', 'WhitespaceSplit'])

/** Separators every such pre-tokenizer treats as whitespace (a subset is enough: it only refines the split). */
const ASCII_SPACE = /[ \t\n\r]+/

/** Words remembered at most; past that the memory starts again (a long import of many languages). */
const MAX_WORDS = 200_000

/** Whether the tokenizer.json in `dir` describes a tokenizer whose counts add up word by word. */
export async function countsByWord(dir: string): Promise<boolean> {
  try {
    const json = JSON.parse(await readFile(path.join(dir, 'tokenizer.json'), 'utf8')) as {
      pre_tokenizer?: { type?: unknown } | null
      added_tokens?: { content?: unknown; special?: unknown }[]
    }
    const type = json.pre_tokenizer?.type
    if (typeof type !== 'string' || !SPLITS_AT_WHITESPACE.has(type)) return false
    // An added token that is not special and holds a space would be matched across words.
    return !(json.added_tokens ?? []).some((t) => t.special !== true && typeof t.content === 'string' && /\s/.test(t.content))
  } catch {
    return false
  }
}

/** `count` for whole texts, made word by word with a memory of each word's count. */
export function wordByWordCounter(count: (text: string) => number): (text: string) => number {
  const memo = new Map<string, number>()
  return (text: string) => {
    let total = 0
    for (const word of text.split(ASCII_SPACE)) {
      if (word === '') continue
      let n = memo.get(word)
      if (n === undefined) {
        n = count(word)
        if (memo.size >= MAX_WORDS) memo.clear()
        memo.set(word, n)
      }
      total += n
    }
    return total
  }
}

/** The counter for an embedder's tokenizer: word by word when that is exact (see above), else whole texts. */
export async function tokenCounterFor(dir: string, count: (text: string) => number): Promise<(text: string) => number> {
  return (await countsByWord(dir)) ? wordByWordCounter(count) : count
}
