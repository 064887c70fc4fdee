/** A problem to show the person (what is wrong, in words). */
export class ModelManagerError extends Error {
  override readonly name = 'ModelManagerError'
}

/** The hub now publishes something other than what was first seen for the same commit (trust-on-first-use breach). */
export class PinMismatchError extends Error {
  override readonly name = 'PinMismatchError'
}
