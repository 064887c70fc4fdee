/**
 * The text of anything thrown, for people and logs. An Error without a message still says what it
 * was (its name) rather than nothing.
 */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name
  return String(err)
}
