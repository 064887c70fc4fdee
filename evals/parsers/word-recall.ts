/**
 * Recall by occurrence, the measure of the fidelity tests against reference extractors: every word
 * the reference reads must be among the words Docent stores as often as the reference has it.
 */
export function recall(stored: string[], reference: string[]): { recall: number; missing: string[] } {
  const have = new Map<string, number>()
  for (const w of stored) have.set(w, (have.get(w) ?? 0) + 1)
  const missing: string[] = []
  for (const w of reference) {
    const n = have.get(w) ?? 0
    if (n > 0) have.set(w, n - 1)
    else missing.push(w)
  }
  return { recall: reference.length ? (reference.length - missing.length) / reference.length : 1, missing }
}
