import { isChangeLog } from '../retrieve/fuse'
import type { PromptPassage } from './prompt'
import type { ReleaseCheck } from './release'
import { contentWords, splitUnits, type TextUnit } from './sentences'

/**
 * A release's own words that what the question asks about is not part of it. The 2024-11-05
 * specification says "Authentication and authorization are not currently part of the core MCP
 * specification": for "How does authorization work in the 2024-11-05 spec?" that sentence is the
 * answer. A 1.5B model read it first and still replied that its passages do not say, or answered
 * from a tutorial on OAuth that the release's docs folder carries (and the release rules refused
 * it). So when a question scoped to a release would end without an answer, the passages the model
 * read are searched for such a sentence, in code.
 *
 * The sentence must come from a passage of the scoped release, of an authoritative kind when the
 * release has one (its specification, not a guide); name a term of the question that the release
 * rules say an answer must cite (a feature word specific to a few of the release's passages, not
 * "requests", which a sentence on another subject holds as well: "the previous pattern of
 * server-initiated requests is no longer supported" does not answer how requests work) before
 * the words that say it is absent; and say so outright: "is not part of", "are not supported",
 * "is no longer supported", "has been removed", "is deprecated". A condition ("if the server does
 * not support…") or a rule ("MUST NOT send…") is not such a sentence. The next sentence of the
 * passage that names the term comes with it ("Clients and servers MAY negotiate their own custom
 * authentication and authorization strategies").
 *
 * A release's own change log says it in its own way: an item that opens with "Remove" ("5. Remove
 * ping, logging/setLevel, and notifications/roots/list_changed.") names what the release took
 * out, after the verb. Such a line counts when its first sentence names a term the rules say an
 * answer must cite, and it does not remove a rule about the term ("Remove the requirement that…").
 * Seen: "How do I send a ping … in MCP 2026-07-28?" was refused "not in context" with that line
 * first among the passages (p15 of mcp-docs-people, fit half).
 */

/** Words that say outright that something is not in the release. */
const ABSENT = new RegExp(
  String.raw`\b(?:(?:is|are)\s+(?:currently\s+|intentionally\s+|explicitly\s+)?not\s+(?:currently\s+|yet\s+)?(?:part\s+of|supported|available|included|defined|specified|covered)|(?:is|are)\s+no\s+longer\s+(?:part\s+of|supported|available)|(?:has|have)\s+been\s+removed|(?:is|are)\s+(?:now\s+)?deprecated)\b`,
  'i',
)
/** A clause that makes the absence a condition or a case, not a statement about the release. */
const CONDITION = /\b(?:if|when|whether|unless|where|that|which)\b/i

/** A change-log item that takes something out: "Remove X", "- Removed support for X", "Drop X". */
const REMOVES = /^\s*(?:(?:[-*+]|\d{1,3}[.)])\s+)?(?:remove[sd]?|drop(?:ped|s)?)\s+/i
/** What a removal takes out when it is a rule about the term, not the term. */
const RULE_REMOVED =
  /^(?:the\s+|a\s+|an\s+)?(?:requirements?|restrictions?|limitations?|constraints?|need|mandate|recommendations?)\b/i

/** How many units after the absence sentence are looked at for one more sentence on the term. */
const FOLLOW_WINDOW = 3

export interface AbsencePick {
  passage: PromptPassage
  units: TextUnit[]
  term: string
}

export function absenceSentences(
  passages: readonly PromptPassage[],
  fullText: (p: PromptPassage) => string,
  release: ReleaseCheck,
): AbsencePick | null {
  const rule = release.trace
  if (!rule.releases || rule.releases.length === 0) return null
  const releases = rule.releases
  const kinds = new Set(rule.authoritative_kinds)
  const terms = [...new Set(release.mustCite)]
    .map((t) => ({ term: t, raw: t.toLowerCase(), stems: contentWords(t) }))
    .filter((t) => t.raw.length > 1)
  if (terms.length === 0) return null
  const own = (p: PromptPassage) =>
    !!p.version && releases.includes(p.version) && (!rule.has_authoritative || (!!p.kind && kinds.has(p.kind)))
  const named = (text: string) => {
    const lower = text.toLowerCase()
    const words = new Set(contentWords(text))
    return terms.find((t) => lower.includes(t.raw) || (t.stems.length > 0 && t.stems.every((w) => words.has(w)))) ?? null
  }
  // The term a change-log item removes, named in its first sentence after the verb; null for another item.
  const removedTerm = (text: string) => {
    const r = REMOVES.exec(text)
    if (!r) return null
    const rest = text.slice(r[0].length).split(/(?<=[.;])\s/)[0]!
    return RULE_REMOVED.test(rest) ? null : named(rest)
  }
  for (const p of [...passages].filter(own).sort((a, b) => a.n - b.n)) {
    const units = splitUnits(fullText(p))
    for (let i = 0; i < units.length; i++) {
      const unit = units[i]!
      if (unit.kind !== 'prose' && unit.kind !== 'list') continue
      const removal = isChangeLog(p) ? removedTerm(unit.text) : null
      if (removal) return { passage: p, units: [unit], term: removal.term }
      const m = ABSENT.exec(unit.text)
      if (!m) continue
      const before = unit.text.slice(0, m.index)
      const term = named(before)
      if (!term || CONDITION.test(before)) continue
      const next = units
        .slice(i + 1, i + 1 + FOLLOW_WINDOW)
        .find((u) => (u.kind === 'prose' || u.kind === 'list') && named(u.text))
      return { passage: p, units: next ? [unit, next] : [unit], term: term.term }
    }
  }
  return null
}
