import type { SmalltalkKind } from '../../shared/trace'

/**
 * The cheap, deterministic part of routing: greetings, thanks and other small talk get a short
 * reply before any retrieval. Nothing here judges whether a question is "about the docs": seed
 * 000's model router declined real questions ("How does ping work?") as off topic, so topic
 * decisions are left to the relevance gate, after retrieval has looked at the collection.
 *
 * A message is small talk only when nothing is left after removing small-talk phrases and filler
 * words, so "hi, what does -32602 mean?" is a question (with the greeting stripped).
 */

export interface SmalltalkMatch {
  kind: SmalltalkKind
  reply: string
}

const PHRASES: { kind: SmalltalkKind; re: RegExp }[] = [
  {
    kind: 'thanks',
    re: /\b(thank(s| you)?( (so|very) much)?( a lot)?|thx|ty|cheers|much appreciated|appreciate (it|that|the help))\b/g,
  },
  { kind: 'greeting', re: /\b(hi|hello|hey|hiya|howdy|yo|greetings|good (morning|afternoon|evening|day))( there)?\b/g },
  {
    kind: 'farewell',
    re: /\b(bye|goodbye|good night|see (you|ya)( later)?|later|take care|that'?s (all|it)( for (now|today))?|that is (all|it)|all for (now|today))\b/g,
  },
  { kind: 'wellbeing', re: /\b(how are (you|things)|how'?s it going|how do you do|what'?s up|sup)( today| doing)?\b/g },
  // "you still there?", "anyone home?": a person checking the app is alive, not asking about the docs.
  {
    kind: 'presence',
    re: /\b((are )?(you|u) (still )?(there|here|around|awake|alive|listening)|(is )?any ?(one|body) (there|home|around)|still (there|here|alive|working))\b/g,
  },
  { kind: 'identity', re: /\b(who are you|what are you|what can you do|what do you do)\b/g },
  {
    kind: 'acknowledgement',
    re: /\b((that|this|it) (helped|helps|was helpful|works|worked|is great|was great)|(very )?(helpful|great|awesome|perfect|nice|cool|ok|okay|got it|understood|sounds good|all good|no worries))\b/g,
  },
]

/** Words that carry no question by themselves once the small-talk phrases are gone. */
const FILLER = new Set([
  'oh',
  'well',
  'so',
  'and',
  'again',
  'really',
  'very',
  'much',
  'a',
  'lot',
  'you',
  'too',
  'all',
  'today',
  'there',
  'guys',
  'folks',
  'docent',
  'bot',
  'friend',
  'mate',
  'just',
  'wanted',
  'to',
  'say',
  'for',
  'the',
  'help',
  'your',
  'that',
  'this',
  'it',
  'was',
  'is',
  'i',
  'am',
  'im',
  'doing',
  'fine',
  'good',
  'please',
])

const REPLIES: Record<SmalltalkKind, string> = {
  greeting: 'Hello! Ask me a question about your documents and I will answer from them, with sources.',
  thanks: "You're welcome! Ask another question whenever you like.",
  farewell: 'Goodbye! Your documents will be here when you come back.',
  wellbeing: "I'm doing well, thanks. What would you like to know about your documents?",
  presence: "I'm here. Ask me a question about your documents whenever you like.",
  identity:
    'I answer questions from the document collections you imported, offline, and cite the passages I used. If the documents do not cover something, I say so.',
  acknowledgement: 'Glad it helped. Anything else you would like to know?',
}

function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/[^a-z0-9'\s]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
}

/** Small talk gets a canned reply; anything with a question left in it returns null. */
export function classifySmalltalk(message: string): SmalltalkMatch | null {
  let rest = normalise(message)
  if (!rest) return null
  const kinds: SmalltalkKind[] = []
  for (const { kind, re } of PHRASES) {
    const next = rest.replace(re, ' ')
    if (next !== rest) kinds.push(kind)
    rest = next
  }
  if (kinds.length === 0) return null
  const leftover = rest.split(' ').filter((w) => w && !FILLER.has(w))
  if (leftover.length > 0) return null
  // "good morning, how are you?" is a greeting first; "thanks, that helped" is thanks.
  const kind = (['thanks', 'farewell', 'greeting', 'wellbeing', 'presence', 'identity', 'acknowledgement'] as const).find((k) =>
    kinds.includes(k),
  )!
  return { kind, reply: REPLIES[kind] }
}

/** Drops a leading greeting ("hi, how does ping work?" -> "how does ping work?"); the question keeps its words otherwise. */
export function stripGreeting(question: string): string {
  const stripped = question.replace(/^\s*(hi|hello|hey|hiya|good (morning|afternoon|evening))( there)?\s*[,!.:-]*\s+/i, '')
  return stripped.trim() ? stripped : question
}
