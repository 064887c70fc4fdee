import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'

/**
 * Texts that a word-by-word count could get wrong if a tokenizer did not split at whitespace
 * first: accents, CJK (spaced by the normaliser), control characters, no-break and other Unicode
 * spaces inside a "word", punctuation runs, emoji, a word over WordPiece's 100-character limit.
 */
export const TRICKY_TEXTS = [
  'Café naïve résumé — ÉLAN',
  '日本語のテキストと English mixed 中文',
  'tab\there, new\nline, cr\rreturn,  double  spaces ',
  'no\u00a0break\u2003em\u2009thin\u200bzero-width',
  'control\u0000char\u0007bell\u001fus',
  '"quoted", (paren) [bracket] {brace} a/b/c x.y.z -32602 tools/call',
  'emoji 🚀🔥 and ZWJ 👩‍💻 sequences',
  'x'.repeat(99) + ' ' + 'y'.repeat(100) + ' ' + 'z'.repeat(101) + ' ' + 'pneumonoultramicroscopicsilicovolcanoconiosis',
  '',
  '   ',
]

/** Every paragraph of the Markdown and MDX files under `dir` (at most `limit` files). */
export async function paragraphsOf(dir: string, limit = 400): Promise<string[]> {
  const out: string[] = []
  let files = 0
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (files >= limit) return
      const p = path.join(d, e.name)
      if (e.isDirectory()) await walk(p)
      else if (/\.(md|mdx)$/.test(e.name)) {
        files++
        out.push(...(await readFile(p, 'utf8')).split(/\n\s*\n/))
      }
    }
  }
  await walk(dir)
  return out
}
