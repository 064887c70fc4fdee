import { expect } from 'vitest'
import { ParseError } from '../../types'

/** The ParseError a parse ends with (failing the test when it ends otherwise). */
export async function parseError(p: Promise<unknown>): Promise<ParseError> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError)
    return e as ParseError
  }
  throw new Error('expected a ParseError')
}
