import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * Opening a library must not load the parsers' libraries: they are most of the engine's module
 * load (about 270 ms of a one-shot `docent collections`, measured with `npm run bench -- open`),
 * and an open needs none of them. They load in the parse worker, or on first use (host/source.ts).
 * This walks the static imports (not `import type`, not `import()`) from each entry point that
 * opens a library and lists the packages it reaches.
 */

const ROOT = path.resolve(__dirname, '../..')
const ENTRIES = ['src/engine/engine.ts', 'src/engine/host/owner.ts', 'src/engine/host/serve.ts', 'src/apps/cli/main.ts']
const PARSER_LIBRARIES = [
  'mammoth',
  'mdast-util-from-markdown',
  'mdast-util-gfm',
  'micromark-extension-gfm',
  'htmlparser2',
  'pdfjs-dist',
  'tesseract.js',
  'yauzl',
  'csv-parse',
  '@napi-rs/canvas',
  '@asciidoctor/core',
]

function resolveLocal(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec)
  for (const file of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')])
    if (existsSync(file) && file.match(/\.tsx?$/)) return file
  return null
}

/** The packages an entry reaches through static value imports, with one path to each. */
function staticPackages(entry: string): Map<string, string[]> {
  const packages = new Map<string, string[]>()
  const seen = new Set<string>()
  const walk = (file: string, trail: string[]): void => {
    if (seen.has(file)) return
    seen.add(file)
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
    for (const st of source.statements) {
      const spec =
        (ts.isImportDeclaration(st) && !st.importClause?.isTypeOnly) || (ts.isExportDeclaration(st) && !st.isTypeOnly)
          ? (st.moduleSpecifier as ts.StringLiteral | undefined)?.text
          : undefined
      if (!spec) continue
      const here = [...trail, path.relative(ROOT, file)]
      if (spec.startsWith('.')) {
        const next = resolveLocal(file, spec)
        if (next) walk(next, here)
      } else if (!spec.startsWith('node:')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!
        if (!packages.has(name)) packages.set(name, here)
      }
    }
  }
  walk(path.join(ROOT, entry), [])
  return packages
}

describe('opening a library', () => {
  it.each(ENTRIES)('%s reaches no parser library through static imports', (entry) => {
    const packages = staticPackages(entry)
    // The walk works: the database is reached from every entry.
    expect(packages.has('@electric-sql/pglite')).toBe(true)
    const parsers = PARSER_LIBRARIES.filter((p) => packages.has(p)).map((p) => `${p} via ${packages.get(p)!.join(' > ')}`)
    expect(parsers).toEqual([])
  })
})
