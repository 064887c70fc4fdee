import type { AskEvent, AskResult } from '../../shared/answer'
import { withLibrary } from '../library'
import { markTerms, queryTerms } from '../../shared/excerpt'
import { sameTextLabel, type SamePlace } from '../../shared/passage'

/**
 * `docent ask "<question>"`. With --json, stdout is exactly one JSON document (the AskResult:
 * answer, abstained, reason, citations, passages, trace_id, ...). Without it, stages go to stderr
 * and, on a terminal, the draft answer streams to stdout as the model writes it; the verified
 * result follows (a draft that fails verification is withdrawn, never left standing).
 */

export interface AskFlags {
  collection?: string[]
  version?: string
  data?: string
  database?: string
  models?: string
  json?: boolean
  searchOnly?: boolean
  thread?: string
}

export async function cmdAsk(words: string[], values: AskFlags): Promise<void> {
  const question = words.join(' ').trim()
  if (!question) throw new Error('ask needs a question: docent ask "how do I ..."')
  const json = !!values.json
  const live = !json && !!process.stdout.isTTY
  const showStages = !json && !!process.stderr.isTTY
  const controller = new AbortController()
  process.once('SIGINT', () => controller.abort())

  let draft = ''
  let attempt = 0
  let midLine = false
  let status = false
  const clearStatus = () => {
    if (status) process.stderr.write('\r\x1b[2K')
    status = false
  }
  const onEvent = (e: AskEvent) => {
    if (e.type === 'stage' && showStages && e.stage !== 'done') {
      clearStatus()
      if (midLine) process.stdout.write('\n')
      midLine = false
      process.stderr.write(`\x1b[2m… ${e.message}\x1b[0m\n`)
    } else if (e.type === 'passages' && live) {
      // Something to read while the model reads the same passages.
      clearStatus()
      process.stdout.write(formatPassages(e, question, true) + '\n')
    } else if (e.type === 'progress' && showStages) {
      process.stderr.write(`\r\x1b[2K\x1b[2m${progressLine(e)}\x1b[0m`)
      status = true
    } else if (e.type === 'token' && live) {
      clearStatus()
      if (e.attempt !== attempt) {
        attempt = e.attempt
        draft = ''
      }
      draft += e.text
      process.stdout.write(e.text)
      midLine = !e.text.endsWith('\n')
    }
  }

  const result: AskResult = await withLibrary(
    values,
    (lib) =>
      lib.ask(
        {
          question,
          // No --version: the version named in the question (if any), else every version.
          scope: { collections: values.collection ?? [], version: values.version ?? 'auto' },
          ...(values.thread ? { threadId: values.thread } : {}),
          ...(values.searchOnly ? { searchOnly: true } : {}),
        },
        { onEvent, signal: controller.signal },
      ),
    { mustExist: true },
  )
  clearStatus()
  if (json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
    return
  }
  const streamedFinal = live && !!draft && result.answer !== null && draft.trim() === result.answer.trim()
  if (live && draft && !streamedFinal)
    process.stdout.write('\n' + dim('(the draft above did not pass verification and is withdrawn)') + '\n')
  process.stdout.write(
    (streamedFinal ? '\n' : '') +
      formatResult(result, { skipAnswer: streamedFinal, question, tty: !!process.stdout.isTTY }) +
      '\n',
  )
}

const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s)

const REASON_TEXT: Record<string, (scope: string) => string> = {
  no_relevant_sources: (s) =>
    `Nothing in ${s} answers this closely enough, so no answer was generated. The closest sections were:`,
  off_topic: (s) => `This question does not seem to be about these documents (searched ${s}): nothing related was found.`,
  not_in_context: () => 'The passages found do not contain the answer. The passages read were:',
  unverifiable_citations: () =>
    'An answer was drafted, but its citations could not be verified, so it is not shown. The passages read were:',
}

/** Bold (ANSI) runs for the query's words, only on a terminal: piped output stays plain text. */
export function highlight(text: string, terms: readonly string[], tty: boolean): string {
  if (!tty) return text
  return markTerms(text, terms)
    .map((s) => (s.hit ? `\x1b[1m${s.text}\x1b[22m` : s.text))
    .join('')
}

export function formatResult(r: AskResult, opts: { skipAnswer?: boolean; question?: string; tty?: boolean } = {}): string {
  const lines: string[] = []
  const terms = queryTerms(r.rewritten_question ?? opts.question ?? '')
  const excerpts = new Map(r.closest.map((c) => [c.chunk_id, c.snippet]))
  const where = (c: {
    path: string
    heading: string
    version: string | null
    kind: string | null
    page: number | null
    same_in?: SamePlace[]
  }) => {
    const meta = [c.version, c.kind, c.page ? `p. ${c.page}` : null].filter(Boolean).join(', ')
    const same = sameTextLabel(c.same_in)
    return `${c.path}${c.heading ? ` — ${c.heading}` : ''}${meta ? ` (${meta})` : ''}${same ? `; ${same}` : ''}`
  }
  if (r.mode === 'smalltalk') lines.push(r.answer ?? '')
  else if (r.abstained) {
    if (r.explanation) lines.push(r.explanation)
    lines.push(REASON_TEXT[r.reason ?? 'no_relevant_sources']!(r.scope_label || 'the documents'))
    if (r.reason !== 'off_topic') for (const c of r.closest) lines.push(`  - ${where(c)}`)
  } else if (r.mode === 'search-only') {
    lines.push(`Search only (no generated answer). The best passages in ${r.scope_label}:`)
    for (const c of r.citations) {
      lines.push(`  [${c.n}] ${where(c)}`)
      const text = excerpts.get(c.chunk_id)
      if (text) lines.push(`      ${highlight(text, terms, !!opts.tty)}`)
    }
  } else {
    if (!opts.skipAnswer) lines.push(r.answer ?? '')
    if (r.unanswered_parts.length) lines.push('', 'Not answered by the documents:', ...r.unanswered_parts.map((p) => `  - ${p}`))
    lines.push('', 'Sources:', ...r.citations.map((c) => `  [${c.n}] ${where(c)}`))
  }
  if (r.removed?.length) {
    // Each line says why: the cited passages do not say it, or the release does not have what it names.
    lines.push('', 'Removed (not verified):')
    for (const x of r.removed) lines.push(`  - ${dim(x.text)} (${x.reason})`)
  }
  for (const w of r.warnings) lines.push(`warning: ${w}`)
  for (const n of r.notices) lines.push(`note: ${n}`)
  if (r.rewritten_question) lines.push(`(searched for: ${r.rewritten_question})`)
  // Where the search looked, and why, when the question (not a choice) decided it.
  if (r.mode !== 'smalltalk' && r.scope && r.scope.source !== 'chosen') lines.push(`Searched ${r.scope.label}.`)
  lines.push(dim(`trace ${r.trace_id}  thread ${r.thread_id}${r.cached ? '  (cached answer)' : ''}`))
  return lines.join('\n')
}

/** The passages the model is about to read, with the sentences that match the question in bold. */
export function formatPassages(e: Extract<AskEvent, { type: 'passages' }>, question: string, tty: boolean): string {
  const terms = queryTerms(question)
  const lines = [dim(`The passages being read, from ${e.scope_label} (the checked answer follows):`)]
  for (const p of e.passages) {
    const meta = [p.version, p.kind, p.page ? `p. ${p.page}` : null].filter(Boolean).join(', ')
    lines.push(`  [${p.n}] ${p.path}${p.heading ? ` — ${p.heading}` : ''}${meta ? ` (${meta})` : ''}`)
    const matched = p.sentences.filter((x) => x.match).slice(0, 2)
    for (const x of matched)
      lines.push(`      ${highlight(x.text.length > 220 ? x.text.slice(0, 219) + '…' : x.text, terms, tty)}`)
  }
  return lines.join('\n')
}

/** "reading 420 of 980 tokens · 12 s · about 8 s left", or the tokens written once the model writes. */
export function progressLine(e: Extract<AskEvent, { type: 'progress' }>): string {
  const s = Math.round(e.elapsed_ms / 1000)
  if (e.phase === 'writing')
    return `writing the answer: ${e.written} tokens · ${s} s (the processor does the work; this takes a while on a laptop)`
  const eta = e.eta_ms !== null ? ` · about ${Math.ceil(e.eta_ms / 1000)} s left` : ''
  return `reading the passages: ${e.read} of ${e.total} tokens · ${s} s${eta}`
}
