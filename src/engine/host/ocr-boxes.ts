import type { OcrPageRow } from '../store/passages'
import { LOW_OCR_CONFIDENCE } from '../store/writer'

/**
 * Where a passage of recognised text is on its page(s): the boxes of the page's words that are the
 * passage's words, for the viewer to draw over the page image. The passage was made from the
 * page's words in their order (parsers/ocr.ts), so its words are found as a run: matched in
 * order, a page word that is not the next passage word is skipped (a word the chunker or the
 * hyphen mending changed, a running header) and a passage word not found within a few page words
 * is given up, so one odd word never loses the rest.
 */

/** A recognised page of the passage: its confidence, whether that is low, and the passage's word boxes. */
export interface PassageOcrPage {
  page: number
  confidence: number
  low_confidence: boolean
  boxes: [number, number, number, number][]
}

const LOOKAHEAD = 6
/** Passage words in a row not found on the page: the passage goes on on the next page. */
const GIVE_UP = 4

function tokens(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  )
}

/**
 * How many page tokens from `k` make the wanted token: 1, or 2 for a word hyphenated at a line
 * end that the passage has whole ("be-" "have" is "behave"); 0 when they do not.
 */
function matchAt(flat: string[], k: number, tok: string): number {
  if (flat[k] === tok) return 1
  if (k + 1 < flat.length && tok.startsWith(flat[k]!) && flat[k]! + flat[k + 1]! === tok) return 2
  return 0
}

/** First position in `flat` where the next (up to 3) wanted tokens follow one another. */
function anchor(flat: string[], want: string[], i: number): number {
  const n = Math.min(3, want.length - i)
  for (let s = 0; s < flat.length; s++) {
    let at = s
    let k = 0
    for (; k < n; k++) {
      const m = matchAt(flat, at, want[i + k]!)
      if (!m) break
      at += m
    }
    if (k === n) return s
  }
  return -1
}

export function passageBoxes(passage: string, pages: OcrPageRow[]): PassageOcrPage[] {
  const want = tokens(passage)
  let i = 0
  const out: PassageOcrPage[] = []
  for (const page of pages) {
    // The page's tokens, each with the word it is part of ("fish-line," is "fish" and "line").
    const flat: string[] = []
    const wordOf: number[] = []
    page.words.forEach((w, wi) => {
      for (const t of tokens(w[0])) {
        flat.push(t)
        wordOf.push(wi)
      }
    })
    const taken = new Set<number>()
    let p = i < want.length ? anchor(flat, want, i) : -1
    let missed = 0
    while (p >= 0 && p < flat.length && i < want.length && missed < GIVE_UP) {
      let found = -1
      let used = 0
      for (let k = p; k < Math.min(flat.length, p + LOOKAHEAD); k++) {
        used = matchAt(flat, k, want[i]!)
        if (used) {
          found = k
          break
        }
      }
      if (found < 0) {
        missed++
        i++
        continue
      }
      missed = 0
      for (let u = 0; u < used; u++) taken.add(wordOf[found + u]!)
      i++
      p = found + used
    }
    const boxes = [...taken]
      .sort((a, z) => a - z)
      .map((wi) => {
        const w = page.words[wi]!
        return [w[1], w[2], w[3], w[4]] as [number, number, number, number]
      })
    out.push({ page: page.page, confidence: page.confidence, low_confidence: page.confidence < LOW_OCR_CONFIDENCE, boxes })
  }
  return out
}
