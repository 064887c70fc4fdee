import type { VerificationProblem, VerificationRepair, VerificationWarning } from '../../shared/answer'
import type { AnswerReply, PromptPassage } from './prompt'

/**
 * Citations are verified, not trusted (docs/lessons.md, "Citations are verified, not trusted"). A JSON grammar fixes the reply's shape but not
 * numeric ranges (seen with node-llama-cpp), so every rule is checked here in code.
 *
 * Problems (block the answer; one corrective retry, then abstain `unverifiable_citations`):
 *  - the reply is not the expected JSON object;
 *  - an answerable reply with an empty answer;
 *  - an answerable reply that cites nothing;
 *  - a cited number that is not one of the passages given (1..n);
 *  - an answer that only restates the question.
 * Repairs (recorded in the trace, not problems): the inline [n] markers are the citations the
 * person sees. A reply that lists `citations` but writes no marker gets them placed at the end of
 * its answer; a listed citation that no marker uses is dropped; a marker missing from the list is
 * added. Rejecting these (as this verifier once did) threw away most replies of a real 1.5B model,
 * whose corrective retry then repeated the same reply (docs/benchmarks.md, "Answers with the real
 * chat model").
 * Unsupported claims (warnings; the answer stands but these claims are never shown as verified):
 *  - a number in the answer that none of the cited passages contains;
 *  - a quoted string in the answer that none of the cited passages contains;
 *  - a name (header, method path, identifier) that none of the cited passages contains.
 * They go into the corrective retry when there is one; whatever is left is returned in
 * `unsupported_numbers`/`unsupported_quotes` (as the answer spells them), and the verdict stage puts
 * them in the result's `unverified_claims`, which the renderer marks in place. They do not refuse
 * the answer on their own: a claim check is a string match, and a number written differently
 * ("thirty", "1,000") must not throw away an otherwise cited answer.
 */

export interface Verification {
  ok: boolean
  /** The reply normalised (citations deduplicated and sorted), or null when it was not a valid reply. */
  reply: AnswerReply | null
  problems: VerificationProblem[]
  warnings: VerificationWarning[]
  /** What was changed in the reply before it was checked (markers placed, unused citations dropped). */
  repairs: VerificationRepair[]
  /** Inline [n] markers found in the answer text, in order of first appearance. */
  markers: number[]
  unsupported_numbers: string[]
  unsupported_quotes: string[]
  unsupported_terms: string[]
}

/** Parses the reply shape leniently (the grammar may not have finished: maxTokens). */
export function parseAnswerReply(parsed: unknown): AnswerReply | null {
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null
  const o = parsed as Record<string, unknown>
  if (typeof o['answerable'] !== 'boolean' || typeof o['answer'] !== 'string' || !Array.isArray(o['citations'])) return null
  const citations = o['citations'].filter((c): c is number => typeof c === 'number' && Number.isFinite(c))
  if (citations.length !== o['citations'].length) return null
  const parts = Array.isArray(o['unanswered_parts'])
    ? o['unanswered_parts'].filter((p): p is string => typeof p === 'string')
    : []
  return {
    answerable: o['answerable'],
    answer: o['answer'],
    citations,
    unanswered_parts: parts.map((p) => p.trim()).filter(Boolean),
  }
}

// [1], [1, 2], [1;2], [1-3]; not markdown links ([text](url)) and not array indexes (items[0]).
const MARKER = /(?<![\w`])\[(\d{1,3}(?:\s*(?:[,;]|-|–)\s*\d{1,3})*)\](?!\()/g

export function inlineMarkers(answer: string): number[] {
  const out: number[] = []
  for (const m of answer.matchAll(MARKER)) {
    for (const part of m[1]!.split(/\s*[,;]\s*/)) {
      const range = /^(\d+)\s*[-–]\s*(\d+)$/.exec(part)
      if (range) {
        const a = Number(range[1])
        const b = Number(range[2])
        if (b >= a && b - a <= 20) for (let i = a; i <= b; i++) out.push(i)
        else out.push(a, b)
      } else out.push(Number(part))
    }
  }
  return [...new Set(out)]
}

/** Digit-group separators between digits (1,000 / 1 000 / 1_000) so both spellings compare equal; a plain space is not one. */
const DIGIT_GROUP = /(?<=\d)[,\u00A0\u202F\u2009_](?=\d{3}(?!\d))/g
function ungroup(s: string): string {
  return s.replace(DIGIT_GROUP, '')
}

/** Lower case, straight quotes, plain dashes, no Markdown emphasis or code marks, ungrouped digits, single spaces. */
function normaliseForMatch(s: string): string {
  return ungroup(s)
    .toLowerCase()
    .replace(/[“”„]/g, '"')
    .replace(/[‘’‚]/g, "'")
    .replace(/[‐‑‒–—−]/g, '-')
    .replace(/…/g, '...')
    .replace(/[*`]|\\(?=[^\w\s])/g, '')
    .replace(/\s+/g, ' ')
    .trim()
}

/**
 * Numbers worth checking: multi-digit numbers, decimals, negative codes and dates/versions kept
 * whole ("2025-03-26", "-32602", "1.5", "1,000"). Single digits are skipped: they are mostly counts
 * and list markers, which passages rarely spell the same way. Tokens are returned as the answer
 * writes them, so the renderer can find and mark them.
 */
export function answerNumbers(answer: string): string[] {
  const text = answer.replace(MARKER, ' ').replace(/^\s*\d+[.)]\s/gm, ' ')
  const out = new Set<string>()
  const re = /(?<![\w.,])-?\d{1,3}(?:[,\u00A0\u202F\u2009_]\d{3})+(?:\.\d+)?(?!\w)|(?<![\w.])-?\d+(?:[.:/-]\d+)*(?!\w)/g
  for (const m of text.matchAll(re)) {
    const token = m[0]
    if (/^-?\d$/.test(token)) continue
    out.add(token)
  }
  return [...out]
}

export function answerQuotes(answer: string): string[] {
  const out = new Set<string>()
  for (const m of answer.matchAll(/"([^"\n]{3,200})"|“([^”\n]{3,200})”|`([^`\n]{2,200})`/g)) {
    const q = (m[1] ?? m[2] ?? m[3] ?? '').trim()
    if (q) out.add(q)
  }
  return [...out]
}

/**
 * Names a reader would copy: header and parameter names (Last-Event-ID, Mcp-Session-Id), method
 * paths (tools/call, notifications/cancelled), camelCase and snake_case identifiers. A wrong one
 * sends the person after something that does not exist, so, like numbers, they must come from the
 * cited passages. Plain hyphenated words ("well-known") and single capitalised words are not names.
 */
export function answerTerms(answer: string): string[] {
  const text = answer.replace(MARKER, ' ').replace(/`[^`\n]*`|"[^"\n]*"|“[^”\n]*”/g, ' ')
  const out = new Set<string>()
  const re = /(?<![\w/.-])[A-Za-z][A-Za-z0-9]*(?:[-_/.][A-Za-z0-9]+)+(?![\w/-])|(?<![\w/.-])[a-z]+[A-Z][A-Za-z0-9]*(?![\w/-])/g
  for (const m of text.matchAll(re)) {
    const t = m[0].replace(/\.$/, '')
    const parts = t.split(/[-_/.]/)
    const isName =
      /[_/]/.test(t) ||
      /^[a-z]+[A-Z]/.test(t) ||
      (t.includes('-') && parts.filter((p) => /^[A-Z]/.test(p)).length >= 2) ||
      /\d/.test(t)
    if (isName && !/^(?:e\.g|i\.e|etc|and\/or)$/i.test(t)) out.add(t)
  }
  return [...out]
}

const UNITS = ['', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine']
const TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen']
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety']
const NUMBER_WORD = new RegExp(
  `\\b(?:(${TENS.filter(Boolean).join('|')})(?:[- ](${UNITS.filter(Boolean).join('|')}))?|(${TEENS.join('|')})|(?:a |one )?(hundred|thousand))\\b`,
  'g',
)

/** Numbers a passage writes as words ("thirty seconds", "twenty-five"), as digits, so "30" in the answer finds them. */
function numberWordsAsDigits(hay: string): string {
  const digits: string[] = []
  for (const m of hay.matchAll(NUMBER_WORD)) {
    if (m[1]) digits.push(String(TENS.indexOf(m[1]) * 10 + (m[2] ? UNITS.indexOf(m[2]) : 0)))
    else if (m[3]) digits.push(String(10 + TEENS.indexOf(m[3])))
    else if (m[4]) digits.push(m[4] === 'hundred' ? '100' : '1000')
  }
  return digits.join(' ')
}

function haystack(p: PromptPassage): string {
  const hay = normaliseForMatch([p.text, p.heading, p.path, p.version ?? '', p.kind ?? ''].join('\n'))
  return `${hay}\n${numberWordsAsDigits(hay)}`
}

function containsNumber(hay: string, token: string): boolean {
  // "32602" must not count as found inside "132602"; a leading minus may be written as a word.
  const bare = ungroup(token).replace(/^-/, '')
  const re = new RegExp(`(?<![\\d])${bare.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?![\\d])`)
  if (re.test(hay)) return true
  // A range ("10-20") the passage may write as "10 to 20": both ends must be there.
  const range = /^(\d+)[-–](\d+)$/.exec(bare)
  return range !== null && containsNumber(hay, range[1]!) && containsNumber(hay, range[2]!)
}

/** A quote is supported when the cited passages contain it; an elided quote ("a ... b") needs each piece. */
function containsQuote(hay: string, quote: string): boolean {
  const pieces = normaliseForMatch(quote)
    .split(/\s*(?:\[\.\.\.\]|\.\.\.)\s*/)
    .filter((piece) => piece.length > 0)
  return pieces.length > 0 && pieces.every((piece) => hay.includes(piece))
}

/**
 * Places citation markers at the end of an answer: before its closing full stop when it ends with
 * one ("… server [2]."), on a line of their own after a closing code fence or list.
 */
export function appendMarkers(answer: string, citations: number[]): string {
  const marks = citations.map((c) => `[${c}]`).join('')
  const text = answer.trimEnd()
  if (/```\s*$/.test(text) || /\n\s*(?:[-*+]|\d+[.)])\s[^\n]*$/.test(text)) return `${text}\n\n${marks}`
  const m = /([.!?:;])(["')\]]*)$/.exec(text)
  if (m && !/\.\.$/.test(text.slice(0, m.index + 1))) return `${text.slice(0, m.index)} ${marks}${m[1]}${m[2]}`
  return `${text} ${marks}`
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}_'-]*/gu

/**
 * Whether an answer only restates the question: at least 80% of its words (markers aside) are the
 * question's, and it covers at least 60% of the question's or is itself a question. Seen with a 1.5B model, which replied
 * "An MCP client MUST put in the resource parameter during the OAuth flow, and on which requests?
 * [1][2]" with valid citations.
 */
export function repeatsQuestion(answer: string, question: string): boolean {
  const words = (s: string) => (s.replace(MARKER, ' ').toLowerCase().match(WORD) ?? []) as string[]
  const a = words(answer)
  const q = new Set(words(question))
  if (a.length === 0 || q.size === 0) return false
  const fromQuestion = a.filter((w) => q.has(w)).length / a.length
  const covered = [...q].filter((w) => a.includes(w)).length / q.size
  const asks = /\?\s*$/.test(answer.replace(MARKER, ' ').trim())
  return fromQuestion >= 0.8 && (covered >= 0.6 || asks)
}

export function verifyCitations(parsed: unknown, passages: PromptPassage[], question?: string): Verification {
  const problems: VerificationProblem[] = []
  const warnings: VerificationWarning[] = []
  const reply = parseAnswerReply(parsed)
  const empty = { markers: [], unsupported_numbers: [], unsupported_quotes: [], unsupported_terms: [] }
  if (!reply) {
    problems.push({
      code: 'invalid_reply',
      message:
        'The reply was not a complete JSON object with "answerable" (boolean), "answer" (string), "citations" (integers) and "unanswered_parts" (strings).',
    })
    return { ok: false, reply: null, problems, warnings, repairs: [], ...empty }
  }
  const declared = [...new Set(reply.citations)].sort((a, b) => a - b)
  const normalised: AnswerReply = { ...reply, answer: reply.answer.trim(), citations: declared }
  // The model says the passages do not answer: nothing to verify (the pipeline abstains).
  if (!reply.answerable) return { ok: true, reply: normalised, problems, warnings, repairs: [], ...empty }

  const n = passages.length
  const inRange = (c: number) => Number.isInteger(c) && c >= 1 && c <= n
  const repairs: VerificationRepair[] = []
  // The question asks about a name (Last-Event-ID, server/discover) that no passage given
  // contains, and the answer talks about it anyway: the passages do not answer; the model wrote
  // from elsewhere. Measured with a 1.5B model on features a release lacks.
  if (question) {
    const all = passages.map(haystack).join('\n')
    const answerTermsSet = new Set(answerTerms(normalised.answer).map((t) => t.toLowerCase()))
    const missing = answerTerms(question).filter((t) => answerTermsSet.has(t.toLowerCase()) && !containsQuote(all, t))
    if (missing.length) {
      repairs.push({
        code: 'subject_not_in_passages',
        message: `The question asks about ${missing.join(', ')}, which no passage given mentions; the reply was taken as "not in the documents".`,
      })
      const refused: AnswerReply = { answerable: false, answer: '', citations: [], unanswered_parts: [question] }
      return { ok: true, reply: refused, problems, warnings, repairs, ...empty }
    }
  }
  // The inline markers are the citations the person sees. Small models often list the passages
  // they used in "citations" and write no marker (measured: Qwen2.5 1.5B did so in most replies);
  // those citations then cover the whole answer, so they are placed at its end.
  if (normalised.answer && inlineMarkers(normalised.answer).length === 0 && declared.length > 0 && declared.every(inRange)) {
    normalised.answer = appendMarkers(normalised.answer, declared)
    repairs.push({
      code: 'markers_added',
      message: `The answer had no [n] markers; its citations ${declared.map((c) => `[${c}]`).join('')} were placed at its end.`,
    })
  }
  const markers = inlineMarkers(normalised.answer)
  // A number listed in "citations" that no statement uses supports nothing the person can see.
  const unused = markers.length > 0 ? declared.filter((c) => !markers.includes(c)) : []
  if (unused.length)
    repairs.push({
      code: 'citation_dropped',
      message: `"citations" listed ${unused.join(', ')}, which no [n] marker in the answer uses; dropped.`,
    })
  normalised.citations = markers.length > 0 ? [...markers].sort((a, b) => a - b) : declared
  const cited = normalised.citations
  if (!normalised.answer) problems.push({ code: 'empty_answer', message: '"answerable" is true but "answer" is empty.' })
  if (cited.length === 0)
    problems.push({
      code: 'no_citations',
      message: 'The answer cites no passage: put the passage number in square brackets, like [1], after every statement.',
    })
  if (question && normalised.answer && repeatsQuestion(normalised.answer, question))
    problems.push({
      code: 'answer_repeats_question',
      message: 'The answer repeats the question instead of answering it: answer from the passages, or set "answerable" to false.',
    })
  const outOfRange = cited.filter((c) => !inRange(c))
  if (outOfRange.length)
    problems.push({
      code: 'citation_out_of_range',
      message: `Citation${outOfRange.length > 1 ? 's' : ''} ${outOfRange.map((c) => `[${c}]`).join(', ')} ${outOfRange.length > 1 ? 'do' : 'does'} not match any passage: only passages 1 to ${n} were given.`,
    })

  const citedPassages = passages.filter((p) => cited.includes(p.n))
  const hay = citedPassages.map(haystack).join('\n')
  const unsupported_numbers = answerNumbers(normalised.answer).filter((t) => !containsNumber(hay, t))
  const unsupported_quotes = answerQuotes(normalised.answer).filter((q) => !containsQuote(hay, q))
  const unsupported_terms = answerTerms(normalised.answer).filter(
    (t) => !containsQuote(hay, t) && !unsupported_quotes.some((q) => q.includes(t)),
  )
  if (citedPassages.length > 0) {
    for (const t of unsupported_numbers)
      warnings.push({ code: 'unsupported_number', message: `The number ${t} does not appear in the cited passages.` })
    for (const q of unsupported_quotes)
      warnings.push({ code: 'unsupported_quote', message: `The quoted text "${q}" does not appear in the cited passages.` })
    for (const t of unsupported_terms)
      warnings.push({ code: 'unsupported_term', message: `The name ${t} does not appear in the cited passages.` })
  }
  return {
    ok: problems.length === 0,
    reply: normalised,
    problems,
    warnings,
    repairs,
    markers,
    unsupported_numbers: citedPassages.length ? unsupported_numbers : [],
    unsupported_quotes: citedPassages.length ? unsupported_quotes : [],
    unsupported_terms: citedPassages.length ? unsupported_terms : [],
  }
}
