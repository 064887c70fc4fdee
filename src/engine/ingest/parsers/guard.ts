import type { ParseContext, ParsedDocument, ParserFn } from '../types'
import { ParseError } from '../types'

/** Wrap a parser so that anything it throws reaches the caller as a ParseError with a readable reason. */
export function guarded(
  what: string,
  fn: (bytes: Uint8Array, relativePath: string, ctx: ParseContext) => Promise<ParsedDocument> | ParsedDocument,
): ParserFn {
  return async (bytes, relativePath, ctx = {}) => {
    try {
      return await fn(bytes, relativePath, ctx)
    } catch (e) {
      if (e instanceof ParseError) throw e
      throw new ParseError(`could not read the ${what}: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
}
