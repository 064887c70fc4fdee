import type { ParsedDocument, ParserFn } from '../types'
import { DocBuilder } from './builder'
import { guarded } from './guard'
import { checkText } from './textcheck'

/**
 * Plain text: one intro section, paragraphs split on blank lines. Line breaks inside a paragraph
 * are kept (plain text often uses them on purpose); very long lines are left for the chunker.
 */
export function parseTextString(text: string): ParsedDocument {
  const b = new DocBuilder()
  const normalized = text.replace(/\r\n?/g, '\n')
  for (const para of normalized.split(/\n[^\S\n]*\n/)) {
    const t = para.replace(/[^\S\n]+$/gm, '').replace(/^\n+|\s+$/g, '')
    if (t.trim()) b.add('paragraph', t)
  }
  return { title: null, meta: {}, sections: b.finish() }
}

export const parseText: ParserFn = guarded('text file', (bytes) => parseTextString(checkText(bytes)))
