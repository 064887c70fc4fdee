import type { VerificationRepair } from '../../shared/trace'
import { joinWords } from '../../shared/words'
import { extractExactTerms } from '../core/exact-terms'
import type { PromptPassage, ReplySentence } from './prompt'
import { BLOCK_START } from './markers'
import { withNested } from './readable'
import { MAX_CODE_LINES, contentWords, restates, splitUnits, type TextUnit } from './sentences'
import { firstCell, givesRow, holdsToken, tableRows } from './table-rows'

/**
 * An answer stops only where its source stops. Two shapes of it, both seen with a 1.5B model that
 * reads trimmed passages (answer/trim.ts keeps the sentences that bear on the question, so a
 * list's items, which rarely repeat the question's words, are often not among them):
 *
 * - **Procedures.** When the answer follows the numbered steps of a passage it cites and stops
 *   before the last, the remaining steps are copied from that passage. Seen: a calibration answer
 *   stopped before the step that measures and computes the value.
 * - **Lists introduced and not given.** When a sentence of the answer ends with a colon and says
 *   what a cited passage's own lead-in sentence says ("The following error codes are defined:"),
 *   and that lead-in is followed by a list, the list's items the answer does not give are copied
 *   from the passage. Seen: "The MCP specification defines the following error codes [1]:" as a
 *   whole answer. A sentence that is a cited passage's lead-in nearly word for word introduces its
 *   list too, though the model ended it with a full stop. Seen: "…MCP clients MUST apply the
 *   validation in RFC9207 Section 2.4 before transmitting the authorization code to any token
 *   endpoint." as a whole answer, where the passage's colon introduces the table of what to check.
 * - **Short lists given in part.** When the answer gives two or more items of a short bullet list
 *   of a passage it cites (at most `SHORT_LIST` items), the items it leaves out are copied after
 *   the last it gives: the model picked two of five naming rules, and the question asked for the rules.
 * - **Rows the question names.** When the question names a value that is the first cell of a row
 *   of a cited passage's table, and the answer does not give that row, the row is copied: "What
 *   values go in the Mcp-Method and Mcp-Name headers?" was answered "…MUST be included in the
 *   request", citing the table of what each header holds.
 *
 * Copied items are the passage's own words, citing it, so they are grounded by construction; they
 * are marked as added by the engine (`added`), shown as copied in the app, and named in the trace.
 */

/** Share of a step's content words a sentence must hold to count as giving that step. */
const STEP_COVERED = 0.5
/** At most this many items are copied; a longer tail is left to the source, which is one click away. */
const MAX_ADDED = 8
/**
 * A bullet list of at most this many items is completed when the answer gives two of them; the
 * items of a longer one (a reference page's fields, a catalogue of options) are each their own
 * answer, and the model's choice among them stands.
 */
const SHORT_LIST = 6

/** What the engine added to the model's sentences: procedure steps and list items here, a sentence that answers in substance.ts. */
export type AddedKind = 'procedure' | 'list' | 'quote'
export type KeptSentence = ReplySentence & { added?: AddedKind }

/** Every completion, in order: procedures first (their steps may also follow a lead-in). */
export function completeFromSources(
  kept: ReplySentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  repairs: VerificationRepair[],
  question = '',
): KeptSentence[] {
  const steps = completeProcedures(kept, passages, fullText, repairs)
  const lists = completeShortLists(completeLeadIns(steps, passages, fullText, repairs), passages, fullText, repairs)
  return completeAskedRows(lists, passages, fullText, question, repairs)
}

export function completeProcedures(
  kept: KeptSentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  repairs: VerificationRepair[],
): KeptSentence[] {
  const out: KeptSentence[] = [...kept]
  for (const p of passages) {
    const citing = ownCiting(out, p.n)
    if (citing.length === 0) continue
    const source = fullText(p)
    const units = splitUnits(source)
    for (const steps of orderedLists(units)) {
      const covered = steps.map((step) => citing.some((i) => covers(out[i]!.text, step.text)))
      const last = covered.lastIndexOf(true)
      const count = covered.filter(Boolean).length
      // The answer follows this list (two steps, or the first one) and stops before its end.
      if (last < 0 || last === steps.length - 1 || (count < 2 && !covered[0])) continue
      const rest = steps.slice(last + 1, last + 1 + MAX_ADDED)
      const at = Math.max(...citing) + 1
      // A step that ends in a colon comes with the items nested under it.
      const text = (s: TextUnit) => withNested(s.text, units, units.indexOf(s), source)
      out.splice(at, 0, ...rest.map((s) => ({ text: text(s), cites: [p.n], added: 'procedure' as const })))
      repairs.push({
        code: 'procedure_completed',
        message: `The answer stopped at step ${last + 1} of ${steps.length} of passage [${p.n}]; the remaining ${rest.length} step${rest.length === 1 ? ' was' : 's were'} copied from it.`,
      })
      break
    }
  }
  return out
}

/** The places of the model's own sentences (not copied ones) that cite passage `n`. */
function ownCiting(out: readonly KeptSentence[], n: number): number[] {
  return out.map((s, i) => (s.cites.includes(n) && !s.added ? i : -1)).filter((i) => i >= 0)
}

/** A sentence that introduces what follows: it ends with a colon (markers aside). */
const leadsIn = (text: string) => /:\s*$/.test(text.replace(/(?:\s*\[\d+\])+\s*$/, ''))

export function completeLeadIns(
  kept: KeptSentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  repairs: VerificationRepair[],
): KeptSentence[] {
  const out: KeptSentence[] = [...kept]
  for (let i = 0; i < out.length; i++) {
    const s = out[i]!
    if (s.added) continue
    const colon = leadsIn(s.text)
    if (!colon) {
      // Without its colon, only the lead-in of a passage the sentence cites, said nearly word for word.
      const source = passages
        .filter((p) => s.cites.includes(p.n))
        .map((p) => listAfterLeadIn(p, fullText(p), s.text, restates))
        .find((x): x is ListSource => x !== null)
      if (source) i = fillList(out, i, source, repairs)
      continue
    }
    // The passage whose lead-in the sentence says most closely, a cited one first among equals:
    // "The spec defines the following error codes:" is the overview's "MCP defines the following
    // error codes:", though the model cited three other passages, one of which introduces an
    // example with "…MUST return an error like:" (p07 of mcp-docs-people). The items are
    // copied from, and cite, the passage that holds them.
    const cited = new Set(s.cites)
    const sources = [...passages]
      .sort((a, b) => Number(cited.has(b.n)) - Number(cited.has(a.n)))
      .map((p) => listAfterLeadIn(p, fullText(p), s.text, covers) ?? continued(p, passages, fullText, s.text))
      .filter((x): x is ListSource => x !== null)
      .sort((a, b) => leadShare(s.text, b.lead) - leadShare(s.text, a.lead))
    const source = sources[0]
    if (source) i = fillList(out, i, source, repairs)
  }
  return out
}

/**
 * The items of `source` that the answer's sentences after `out[i]` do not give, copied after the
 * last that gives one; returns the index of the last sentence of the completed list.
 */
function fillList(out: KeptSentence[], i: number, source: ListSource, repairs: VerificationRepair[]): number {
  const { passage: p, items, whole } = source
  // The answer's own sentences after the lead-in that give an item (the model may have begun the
  // list), judged by what sets each item apart: "Number Schema" is not given by "String Schema".
  const own = distinctive(items.map((it) => it.text))
  // A table row is given only with its first cell, the value the row is about: "code 3 means
  // the server requires authentication" gives the row of 3, not that of 4 ("Server unreachable").
  const keys = items.map((it) => (it.kind === 'table' ? firstCell(it.text) : null))
  const gives = (t: KeptSentence, k: number) =>
    !t.added && coversWords(t.text, own[k]!) && (keys[k] == null || holdsToken(t.text, keys[k]!))
  const given = items.map((_, k) => out.slice(i + 1).some((t) => gives(t, k)))
  asItemsOfLeadIn(out, i, source, (t) => items.some((_, k) => gives(t, k)), !given.every(Boolean))
  if (given.every(Boolean)) return i
  const lastGiving = out.reduce((at, t, j) => (j > i && items.some((_, k) => gives(t, k)) ? j : at), i)
  const missing = items.filter((_, k) => !given[k]).slice(0, MAX_ADDED)
  out.splice(lastGiving + 1, 0, ...missing.map((it) => ({ text: whole(it), cites: [p.n], added: 'list' as const })))
  const gave = given.filter(Boolean).length
  const [shape, part] = items[0]!.kind === 'table' ? ['table', 'row'] : ['list', 'item']
  repairs.push({
    code: 'list_completed',
    message:
      items[0]!.kind === 'code'
        ? `The answer introduced the example of passage [${p.n}] without giving it; it was copied from it.`
        : `The answer introduced the ${shape} of passage [${p.n}] and gave ${gave} of its ${items.length} ${part}${items.length === 1 ? '' : 's'}; ${missing.length} ${missing.length === 1 ? 'was' : 'were'} copied from it.`,
  })
  return lastGiving + missing.length
}

/**
 * The layout of a list the model gave as prose: its lead-in ended with a full stop (or its colon
 * followed by sentences on the same line), then each item as a sentence of its own. Seen with the
 * real 1.5B model: "If the input consists solely of (any number of) JSON-RPC responses or
 * notifications [1]. If the server accepts the input, … 202 Accepted with no body [1]. If the
 * server cannot accept the input, …" where the passage's colon introduces two bullets. When two or
 * more of the sentences right after the lead-in each give an item of the list (`gives`), or one
 * does and the others are about to be copied (`completing`), the lead-in ends with its colon and
 * those sentences are shown as the list's items, so the given and the copied items read as one
 * list. A lead-in whose table or list is copied gets its colon back too. Only the punctuation and
 * the layout change, never the words; table rows and code keep their own layout.
 */
function asItemsOfLeadIn(
  out: KeptSentence[],
  i: number,
  source: ListSource,
  gives: (t: KeptSentence) => boolean,
  completing: boolean,
): void {
  const list = source.items[0]!.kind === 'list'
  let j = i + 1
  while (list && j < out.length && !out[j]!.added && !BLOCK_START.test(out[j]!.text.trimStart()) && gives(out[j]!)) j++
  if (!completing && j - (i + 1) < 2) return
  const lead = out[i]!
  out[i] = { ...lead, text: lead.text.replace(/[.;:]?\s*$/, ':') }
  for (let k = i + 1; k < j; k++) out[k] = { ...out[k]!, text: `- ${out[k]!.text.trim()}` }
}

/**
 * Short bullet lists the answer gave in part (module comment): for each passage the answer's own
 * sentences cite, its bullet lists of 3 to `SHORT_LIST` top-level items of which those sentences
 * give at least two; the others are copied after the last sentence giving one, in the list's order.
 */
export function completeShortLists(
  kept: KeptSentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  repairs: VerificationRepair[],
): KeptSentence[] {
  const out: KeptSentence[] = [...kept]
  for (const p of passages) {
    const source = fullText(p)
    const units = splitUnits(source)
    for (let j = 0; j < units.length; j++) {
      const u = units[j]!
      if (u.kind !== 'list' || u.ordinal !== null || (j > 0 && units[j - 1]!.list === u.list)) continue
      const items = topLevelItems(source, units, j)
      if (items.length < 3 || items.length > SHORT_LIST) continue
      // Bullet items often open alike ("Tool names SHOULD…"): an item is given by the words no other
      // item has, or by its term ("working" of "- working: The request is being processed").
      const own = unshared(items.map((it) => it.text))
      const terms = items.map((it) => itemTerm(it.text))
      const gives = (t: KeptSentence, k: number) =>
        !t.added && t.cites.includes(p.n) && (coversWords(t.text, own[k]!) || (terms[k] != null && holdsToken(t.text, terms[k]!)))
      const given = items.map((_, k) => out.some((t) => gives(t, k)))
      const count = given.filter(Boolean).length
      // Two of the answer's sentences give an item each: the model went through the list, item by item.
      const giving = out.filter((t) => items.some((_, k) => gives(t, k))).length
      if (count < 2 || giving < 2 || count === items.length) continue
      // Items an earlier completion already copied from this passage are not copied twice.
      const copied = (it: TextUnit) => out.some((t) => t.added && t.cites.includes(p.n) && t.text.startsWith(it.text))
      const missing = items.filter((it, k) => !given[k] && !copied(it))
      if (missing.length === 0) continue
      const at = out.reduce((last, t, k) => (items.some((_, m) => gives(t, m)) ? k : last), -1) + 1
      const whole = (it: TextUnit) => withNested(it.text, units, units.indexOf(it), source)
      out.splice(at, 0, ...missing.map((it) => ({ text: whole(it), cites: [p.n], added: 'list' as const })))
      repairs.push({
        code: 'list_completed',
        message: `The answer gave ${count} of the ${items.length} items of a list in passage [${p.n}]; ${missing.length} ${missing.length === 1 ? 'was' : 'were'} copied from it.`,
      })
    }
  }
  return out
}

/** Share of a lead-in's content words that the answer's sentence holds. */
function leadShare(sentence: string, lead: string): number {
  return shareHeld(sentence, [...new Set(contentWords(lead))])
}

interface ListSource {
  /** The passage's sentence that introduces the items. */
  lead: string
  /** The passage the items are copied from, and cited. */
  passage: PromptPassage
  items: TextUnit[]
  whole: (u: TextUnit) => string
}

/**
 * The top-level items of the list (or rows of the table, or the short code block) that follows the
 * passage's own lead-in sentence, when the answer's sentence says what that lead-in says (half of
 * its content words), each with what is shown when it is copied (`whole`: an item that ends in a
 * colon, with its nested items); else null.
 */
function listAfterLeadIn(
  passage: PromptPassage,
  text: string,
  sentence: string,
  says: (sentence: string, lead: string) => boolean,
): ListSource | null {
  const units = splitUnits(text)
  const found = leadInItems(text, units, sentence, says)
  return (
    found && { lead: found.lead, passage, items: found.items, whole: (u) => withNested(u.text, units, units.indexOf(u), text) }
  )
}

/**
 * The list or table a passage's last sentence introduces, when the chunker put it in the next
 * chunk: another passage of the same document that opens with a list or a table. Seen: "MCP
 * defines the following error codes:" ends one chunk of the 2026-07-28 overview, and the table
 * of codes opens the next, which the model read too (p07 of mcp-docs-people).
 */
function continued(
  passage: PromptPassage,
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  sentence: string,
): ListSource | null {
  const units = splitUnits(fullText(passage))
  const last = units[units.length - 1]
  if (!last || last.kind !== 'prose' || !leadsIn(last.text) || !covers(sentence, last.text)) return null
  for (const next of passages) {
    if (next.n === passage.n || next.path !== passage.path) continue
    const text = fullText(next)
    const opening = splitUnits(text)
    const items =
      opening[0]?.kind === 'list' ? topLevelItems(text, opening, 0) : opening[0]?.kind === 'table' ? tableRows(opening, 0) : null
    if (items && items.length > 0)
      return { lead: last.text, passage: next, items, whole: (u) => withNested(u.text, opening, opening.indexOf(u), text) }
  }
  return null
}

function leadInItems(
  text: string,
  units: TextUnit[],
  sentence: string,
  says: (sentence: string, lead: string) => boolean,
): { lead: string; items: TextUnit[] } | null {
  const indent = (u: TextUnit) => /^[ \t]*/.exec(text.slice(u.start))![0].length
  for (let j = 0; j + 1 < units.length; j++) {
    const lead = units[j]!
    const next = units[j + 1]!
    // A lead-in is a sentence, or an item of a list whose own items are nested under it ("4. If the
    // input consists solely of JSON-RPC responses or notifications:" over its two cases).
    const itemOver = lead.kind === 'list' && next.kind === 'list' && indent(next) > indent(lead)
    if ((lead.kind !== 'prose' && !itemOver) || !leadsIn(lead.text) || !says(sentence, lead.text)) continue
    const items =
      next.kind === 'list'
        ? topLevelItems(text, units, j + 1)
        : // "…maps to a stable failure class:" followed by a table of the codes: its rows are the items.
          next.kind === 'table'
          ? tableRows(units, j + 1)
          : // "…writes a single JSON line to stderr:" followed by the line itself, as a short code block.
            next.kind === 'code' && next.text.split('\n').length <= MAX_CODE_LINES
            ? [next]
            : null
    if (items) return { lead: lead.text, items }
  }
  return null
}

/**
 * The top-level items of the list that starts at `units[from]`. An item's own indented content
 * (a code block, a paragraph, a nested list) lies between items and ends the list's unit run, so
 * the list goes on past it while the next top-level item follows (numbered in sequence, for a
 * numbered list); a heading or unindented text ends it.
 */
function topLevelItems(text: string, units: TextUnit[], from: number): TextUnit[] {
  const indent = (u: TextUnit) => /^[ \t]*/.exec(text.slice(u.start))![0].length
  const first = units[from]!
  const top = indent(first)
  const items: TextUnit[] = []
  for (let k = from; k < units.length; k++) {
    const u = units[k]!
    const level = indent(u)
    if (u.kind === 'list' && level === top) {
      const last = items[items.length - 1]
      const inSequence = first.ordinal === null ? u.ordinal === null : last ? u.ordinal === (last.ordinal ?? 0) + 1 : true
      if (!inSequence) break
      items.push(u)
    } else if (level <= top || u.kind === 'heading') break
  }
  return items
}

function covers(sentence: string, step: string): boolean {
  return coversWords(sentence, [...new Set(contentWords(step))])
}

function coversWords(sentence: string, words: string[]): boolean {
  return shareHeld(sentence, words) >= STEP_COVERED
}

/** Share of `words` that the sentence holds (0 when there are none). */
function shareHeld(sentence: string, words: string[]): number {
  if (words.length === 0) return 0
  const have = new Set(contentWords(sentence))
  return words.filter((w) => have.has(w)).length / words.length
}

/** Each item's content words less those every item has ("Schema" in a list of schema types); all of them when none is left. */
function distinctive(items: string[]): string[][] {
  const words = items.map((t) => [...new Set(contentWords(t))])
  const inAll = words.length > 1 ? new Set(words[0]!.filter((w) => words.every((ws) => ws.includes(w)))) : new Set<string>()
  return words.map((ws) => {
    const own = ws.filter((w) => !inAll.has(w))
    return own.length > 0 ? own : ws
  })
}

/**
 * The term a list item is about, when it opens with one and says what it is after a colon or a
 * dash ("- `working`: The request…", "- **Roots** — …", "- resources/list - List resources"); null otherwise.
 */
function itemTerm(item: string): string | null {
  const m = /^\s*(?:[-*+]|\d{1,3}[.)])\s+(.{1,60}?)\s*(?::|\s[-–—]\s)/.exec(item)
  // Code and emphasis marks are not part of the term; an underscore inside it is ("input_required").
  const term = m?.[1]
    ?.replace(/[`*]/g, '')
    .replace(/^_+|_+$/g, '')
    .trim()
  return term && term.split(/\s+/).length <= 4 ? term : null
}

/**
 * The rows the question names (module comment): for each passage the answer's own sentences cite,
 * the body rows of its tables whose first cell is a name or number the question holds ("What values
 * go in the Mcp-Method and Mcp-Name headers?" and the table of standard headers), when no sentence
 * of the answer gives the row (`givesRow`). They are copied after
 * the last sentence citing the passage; the app shows them under their table's header (readable.ts).
 */
export function completeAskedRows(
  kept: KeptSentence[],
  passages: PromptPassage[],
  fullText: (p: PromptPassage) => string,
  question: string,
  repairs: VerificationRepair[],
): KeptSentence[] {
  const asked = new Set(extractExactTerms(question))
  if (asked.size === 0) return kept
  const out: KeptSentence[] = [...kept]
  for (const p of passages) {
    const citing = ownCiting(out, p.n)
    if (citing.length === 0) continue
    const units = splitUnits(fullText(p))
    // The body rows of each of the passage's tables.
    const rows = units.flatMap((u, j) =>
      u.kind === 'table' && units[j - 1]?.kind !== 'table' ? (tableRows(units, j) ?? []) : [],
    )
    const named = rows.filter((r) => {
      const key = firstCell(r.text)?.toLowerCase()
      return key != null && asked.has(key)
    })
    const missing = named
      .filter((r) => !out.some((s) => givesRow(s.text, r.text)))
      .filter((r) => !out.some((s) => s.added && s.text === r.text))
      .slice(0, MAX_ADDED)
    if (missing.length === 0) continue
    const at = Math.max(...citing) + 1
    out.splice(at, 0, ...missing.map((r) => ({ text: r.text, cites: [p.n], added: 'list' as const })))
    const names = missing.map((r) => firstCell(r.text)!)
    repairs.push({
      code: 'list_completed',
      message: `The question names ${joinWords(names)}, ${missing.length === 1 ? 'a row' : 'rows'} of the table in passage [${p.n}] that the answer did not give; ${missing.length === 1 ? 'it was' : 'they were'} copied from it.`,
    })
  }
  return out
}

/** Each item's content words that no other item has; all of them when none is left. */
function unshared(items: string[]): string[][] {
  const words = items.map((t) => [...new Set(contentWords(t))])
  return words.map((ws, k) => {
    const own = ws.filter((w) => !words.some((other, m) => m !== k && other.includes(w)))
    return own.length > 0 ? own : ws
  })
}

/** The ordered lists of a text's units (at least two numbered items each), in order. */
function orderedLists(units: readonly TextUnit[]): TextUnit[][] {
  const lists = new Map<number, TextUnit[]>()
  for (const u of units) {
    if (u.list === null || u.ordinal === null) continue
    lists.set(u.list, [...(lists.get(u.list) ?? []), u])
  }
  return [...lists.values()].filter((l) => l.length >= 2)
}
