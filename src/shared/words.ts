/**
 * A list of words as a sentence says it: "a", "a and b", "a, b and c" (or with "or"). Notices,
 * refusals and repairs name several things this way, in the engine and in the app.
 */
export function joinWords(words: readonly string[], last: 'and' | 'or' = 'and'): string {
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}` : (words[0] ?? '')
}
