/**
 * Passage excerpts with the query's words marked, for search-only answers in the CLI (bold) and
 * the app (<mark>): a person scanning passages sees why each one matched. Plain functions, no
 * Node or DOM imports; matching is approximate on purpose (a shared stem, case-insensitive),
 * since it only guides the eye and never decides what is retrieved.
 */

export const STOPWORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers him his how i if
  in into is it its itself just me more most my no nor not now of off on once only or other our out over own same she
  should so some such than that the their them then there these they this those through to too under until up very was
  we were what when where which while who whom why will with would you your yours yourself get got also may let use using
  ok okay hey please tell know want need`.split(/\s+/),
)

export interface Segment {
  text: string
  hit: boolean
}

/** Lower-case stem of a word: enough to let "tools" find "tool" and "retrying" find "retry". */
export function stem(word: string): string {
  const w = word.toLowerCase()
  for (const suffix of ['ing', 'ies', 'ed', 'es', 's']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix))
      return suffix === 'ies' ? w.slice(0, -3) + 'y' : w.slice(0, -suffix.length)
  }
  return w
}

// Words, keeping identifiers such as tools/call, -32602, list_changed or x.y whole.
export const WORD = /-?[\p{L}\p{N}](?:[\p{L}\p{N}_]|[/.:-](?=[\p{L}\p{N}]))*/gu

/** The words of a query worth marking: no stop words, no single letters. */
export function queryTerms(query: string): string[] {
  const out = new Set<string>()
  for (const m of query.matchAll(WORD)) {
    const w = m[0].toLowerCase()
    if (w.length < 2 || STOPWORDS.has(w)) continue
    out.add(stem(w))
  }
  return [...out]
}

function isHit(word: string, terms: readonly string[]): boolean {
  const s = stem(word)
  const lower = word.toLowerCase()
  return terms.some((t) => s === t || lower === t)
}

/** The text split into runs, those that are (or share a stem with) a query term marked. */
export function markTerms(text: string, terms: readonly string[]): Segment[] {
  if (terms.length === 0) return text ? [{ text, hit: false }] : []
  const out: Segment[] = []
  let at = 0
  const push = (t: string, hit: boolean) => {
    if (!t) return
    const last = out[out.length - 1]
    if (last && last.hit === hit) last.text += t
    else out.push({ text: t, hit })
  }
  for (const m of text.matchAll(WORD)) {
    if (!isHit(m[0], terms)) continue
    push(text.slice(at, m.index), false)
    push(m[0], true)
    at = m.index + m[0].length
  }
  push(text.slice(at), false)
  return out
}

/**
 * About `max` characters of the passage (whitespace and code fences flattened) around the
 * stretch with the most query words, cut at word boundaries, with "…" where it was cut.
 */
export function excerpt(text: string, terms: readonly string[], max = 240): string {
  const flat = text
    .replace(/```\w*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  if (flat.length <= max) return flat
  const hits = [...flat.matchAll(WORD)].filter((m) => isHit(m[0], terms)).map((m) => m.index)
  let start = 0
  let best = -1
  for (const h of hits) {
    // The window that starts a little before this hit: how many hits does it hold?
    const from = Math.max(0, h - 40)
    const count = hits.filter((x) => x >= from && x < from + max).length
    if (count > best) {
      best = count
      start = from
    }
  }
  start = Math.min(start, flat.length - max)
  if (start > 0) {
    const space = flat.indexOf(' ', start)
    start = space >= 0 && space - start < 20 ? space + 1 : start
  }
  let end = Math.min(flat.length, start + max)
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end)
    end = space > start + max / 2 ? space : end
  }
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`
}
