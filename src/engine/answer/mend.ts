import type { VerificationRepair } from '../../shared/trace'
import { stripMarkers } from './match'
import type { PromptPassage, ReplySentence } from './prompt'
import { splitUnits } from './sentences'

/**
 * Sentences the reply's JSON cut at a quotation mark. A model copying "…request LLM sampling
 * ("completions" or "generations") from language models via clients" into a JSON string ends the
 * string at the first quotation mark, and its reply holds three sentences: "…request LLM
 * sampling (", "completions" and "generations" (seen twice with the real 1.5B model, on held-out
 * questions of two sets). Checked one by one, the fragments fail or pass alone, and what is shown
 * reads "…LLM sampling ( [1]. from language models via clients".
 *
 * A sentence that does not end as a sentence ends, with at least MIN_WORDS words, that a sentence
 * of a passage it cites begins with, is that passage sentence: the fragments after it that the
 * passage sentence holds go into it, and a sentence that goes on from the passage sentence's last
 * words keeps only what comes after them. A repair names each one. Nothing else changes, so what
 * is mended is the passage's own sentence, which the support check then checks as any other.
 */

const MIN_WORDS = 4
/** Characters a sentence and the passage sentence's remainder must share to be one run of text. */
const MIN_OVERLAP = 12
const ENDED = /[.!?:;]["'”’)\]]*$/

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim()
const norm = (text: string) => collapse(text).toLowerCase()

/** A code block as a whole sentence: its fences, an optional language, its body. */
const CODE_BLOCK = /^\s*```([\w+-]*)[^\S\n]*\n?([\s\S]*?)\n?[^\S\n]*(```)?\s*$/
const squeeze = (code: string) => code.replace(/\s+/g, '')

/**
 * A code block the reply copied from a passage, as the passage has it. The model writes code into
 * a JSON string with its line breaks and indentation squeezed out, and the closing fence glued to
 * the last line ("{  \"jsonrpc\": \"2.0\", …  }```", b04 of mcp-docs-releases): Markdown then
 * never closes the block, and every line after it is shown as code. A block whose text, spaces
 * aside, is a code block of a passage it cites is that block; any other gets its fences on lines of
 * their own.
 */
export function mendCodeBlocks(
  sentences: ReplySentence[],
  passages: readonly PromptPassage[],
  repairs: VerificationRepair[],
): ReplySentence[] {
  return sentences.map((s) => {
    const m = CODE_BLOCK.exec(s.text)
    if (!m || !s.text.trimStart().startsWith('```')) return s
    const body = m[2] ?? ''
    const pool = s.cites.length ? passages.filter((p) => s.cites.includes(p.n)) : passages
    for (const p of pool) {
      const block = splitUnits(p.text).find((u) => {
        if (u.kind !== 'code') return false
        const inner = CODE_BLOCK.exec(u.text)
        return !!inner && squeeze(inner[2] ?? '') === squeeze(body) && squeeze(body).length > 0
      })
      if (block) {
        if (block.text.trim() !== s.text.trim())
          repairs.push({
            code: 'sentence_mended',
            message: `A code block of the reply is passage [${p.n}]'s, shown with its own lines.`,
          })
        return { ...s, text: block.text.trim() }
      }
    }
    const fenced = '```' + (m[1] ?? '') + '\n' + body.trimEnd() + '\n```'
    if (fenced === s.text.trim()) return s
    repairs.push({ code: 'sentence_mended', message: 'A code block of the reply was given its fences on lines of their own.' })
    return { ...s, text: fenced }
  })
}

export function mendCutSentences(
  sentences: ReplySentence[],
  passages: readonly PromptPassage[],
  repairs: VerificationRepair[],
): ReplySentence[] {
  const out: ReplySentence[] = []
  const items = sentences.map((s) => ({ ...s, cites: [...s.cites] }))
  for (let i = 0; i < items.length; i++) {
    const s = items[i]!
    const bare = norm(stripMarkers(s.text))
    if (!bare || ENDED.test(bare) || bare.split(' ').length < MIN_WORDS) {
      out.push(s)
      continue
    }
    const pool = s.cites.length ? passages.filter((p) => s.cites.includes(p.n)) : passages
    let found: { passage: PromptPassage; text: string } | null = null
    for (const p of pool) {
      const unit = splitUnits(p.text).find((u) => {
        const t = norm(u.text)
        return t.length > bare.length && t.startsWith(bare)
      })
      if (unit) {
        found = { passage: p, text: collapse(unit.text) }
        break
      }
    }
    if (!found) {
      out.push(s)
      continue
    }
    let rest = norm(found.text).slice(bare.length)
    const cites = new Set(s.cites)
    let j = i + 1
    while (j < items.length && rest.trim()) {
      const next = items[j]!
      const nb = norm(stripMarkers(next.text))
      if (!nb) {
        j++
        continue
      }
      const at = rest.indexOf(nb)
      if (at >= 0) {
        // A fragment the passage sentence holds ("completions"): it is part of it.
        rest = rest.slice(at + nb.length)
        next.cites.forEach((c) => cites.add(c))
        j++
        continue
      }
      // A sentence that goes on from the passage sentence's last words keeps what follows them.
      const t = rest.trim()
      let overlap = 0
      for (let k = 0; k <= t.length - MIN_OVERLAP; k++)
        if (nb.startsWith(t.slice(k))) {
          overlap = t.length - k
          break
        }
      if (overlap > 0) {
        const after = collapse(stripMarkers(next.text)).slice(overlap).trim()
        next.cites.forEach((c) => cites.add(c))
        if (after) items[j] = { ...next, text: after }
        else j++
      }
      break
    }
    out.push({ ...s, text: found.text, cites: [...cites].sort((a, b) => a - b) })
    repairs.push({
      code: 'sentence_mended',
      message: `A sentence the reply cut short ("…${bare.slice(-30)}") is passage [${found.passage.n}]'s own sentence, which it was completed to.`,
    })
    i = j - 1
  }
  return out
}
