import { createHash } from 'node:crypto'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { approximateTokenCounter } from '../../src/engine/core/model-ports'
import { chunkDocument } from '../../src/engine/ingest/chunker'
import { makeDocx, makePdf } from '../../src/engine/ingest/parsers/__fixtures__/generate'
import { parseFile, parserFor } from '../../src/engine/ingest/parsers/index'
import { isIgnoredPath } from '../../src/engine/ingest/walk'

/**
 * Parser figures for a corpus, so that a parser change can be measured: per document the parsed
 * sections (breadcrumb and text) or the error, and totals (documents, chunks, distinct headings).
 *
 *   tsx evals/parsers/compare.ts dump [folder|--fixtures] out.json    (also prints the parse time)
 *   tsx evals/parsers/compare.ts diff before.json after.json [--verbose]
 *
 * The default folder is the MCP docs corpus; --fixtures reads evals/parsers/test-fixtures/ plus a DOCX
 * and a PDF built by the test generators.
 */

const DEFAULT_CORPUS = '/work/shared/corpora/mcp-docs'
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'test-fixtures')

interface DocStats {
  ok: boolean
  error?: string
  title?: string | null
  sections?: { headings: string[]; level: number; text: string }[]
  chunks?: number
  headings?: number
}

interface Dump {
  source: string
  totals: { files: number; documents: number; failed: number; sections: number; chunks: number; distinctHeadings: number }
  /** Bytes read and wall time spent in parseFile alone (chunking excluded), for the parser's cost. */
  parse?: { bytes: number; ms: number }
  docs: Record<string, DocStats>
}

async function listFiles(root: string, rel = ''): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name
    if (isIgnoredPath(r)) continue
    if (e.isDirectory()) out.push(...(await listFiles(root, r)))
    else if (e.isFile() && parserFor(r)) out.push(r)
  }
  return out.sort()
}

async function inputs(source: string): Promise<[string, Uint8Array][]> {
  const root = source === '--fixtures' ? FIXTURES : source
  const files: [string, Uint8Array][] = []
  for (const r of await listFiles(root)) files.push([r, new Uint8Array(await readFile(path.join(root, r)))])
  if (source === '--fixtures') {
    files.push([
      'generated/guide.docx',
      makeDocx(
        [
          { text: 'Before any heading.' },
          { style: 'Heading1', text: 'Installation' },
          { text: 'Install it & run.' },
          { style: 'Heading2', text: 'Requirements' },
          {
            table: [
              ['Component', 'Version'],
              ['Node', '20'],
              ['OS', 'Linux | macOS'],
            ],
          },
        ],
        { title: 'Docent Guide & Co' },
      ),
    ])
    files.push([
      'generated/two-pages.pdf',
      makePdf(
        [
          [
            { size: 24, y: 700, text: 'Manual' },
            { size: 11, y: 650, text: 'First page text.' },
          ],
          [{ size: 11, y: 700, text: 'Second page text.' }],
        ],
        { title: 'Manual' },
      ),
    ])
  }
  return files
}

async function dump(source: string): Promise<Dump> {
  const docs: Record<string, DocStats> = {}
  const allHeadings = new Set<string>()
  const totals = { files: 0, documents: 0, failed: 0, sections: 0, chunks: 0, distinctHeadings: 0 }
  const parse = { bytes: 0, ms: 0 }
  for (const [rel, bytes] of await inputs(source)) {
    totals.files++
    parse.bytes += bytes.length
    const t0 = performance.now()
    try {
      const doc = await parseFile(bytes, rel).finally(() => (parse.ms += performance.now() - t0))
      const chunks = chunkDocument(doc, approximateTokenCounter)
      const headings = new Set<string>()
      for (const s of doc.sections) for (const h of s.headings) headings.add(h)
      for (const h of headings) allHeadings.add(`${rel}\u0000${h}`)
      docs[rel] = {
        ok: true,
        title: doc.title,
        sections: doc.sections.map((s) => ({
          headings: s.headings,
          level: s.level,
          text: s.blocks.map((b) => `[${b.kind}] ${b.text}`).join('\n'),
        })),
        chunks: chunks.length,
        headings: headings.size,
      }
      totals.documents++
      totals.sections += doc.sections.length
      totals.chunks += chunks.length
    } catch (e) {
      totals.failed++
      docs[rel] = { ok: false, error: e instanceof Error ? e.message : String(e) }
    }
  }
  // Distinct per document: the same heading text in two files is two headings a reader can land on.
  totals.distinctHeadings = allHeadings.size
  return { source, totals, parse: { bytes: parse.bytes, ms: Math.round(parse.ms) }, docs }
}

const hash = (s: string) => createHash('sha1').update(s).digest('hex').slice(0, 10)

function diff(before: Dump, after: Dump, verbose: boolean): void {
  console.log('| | before | after |\n| --- | ---: | ---: |')
  for (const k of Object.keys(before.totals) as (keyof Dump['totals'])[]) {
    console.log(`| ${k} | ${before.totals[k]} | ${after.totals[k]} |`)
  }
  const names = [...new Set([...Object.keys(before.docs), ...Object.keys(after.docs)])].sort()
  let same = 0
  for (const n of names) {
    const a = before.docs[n]
    const b = after.docs[n]
    if (JSON.stringify(a) === JSON.stringify(b)) {
      same++
      continue
    }
    if (!a || !b || a.ok !== b.ok || !a.ok) {
      console.log(`\n${n}: ${a?.ok ? 'ok' : (a?.error ?? 'absent')} -> ${b?.ok ? 'ok' : (b?.error ?? 'absent')}`)
      continue
    }
    console.log(
      `\n${n}: sections ${a.sections!.length}->${b.sections!.length}, chunks ${a.chunks}->${b.chunks}, headings ${a.headings}->${b.headings}` +
        (a.title !== b.title ? `, title ${JSON.stringify(a.title)}->${JSON.stringify(b.title)}` : ''),
    )
    // A breadcrumb can recur (text before and after a group of tabs): number the repeats.
    const keyed = (list: NonNullable<DocStats['sections']>) => {
      const seen = new Map<string, number>()
      return list.map((s) => {
        const base = s.headings.join(' > ')
        const k = seen.get(base) ?? 0
        seen.set(base, k + 1)
        const entry: [string, (typeof list)[number]] = [k ? `${base} #${k + 1}` : base, s]
        return entry
      })
    }
    const ak = keyed(a.sections!)
    const bs = new Map(keyed(b.sections!))
    const as = new Map(ak)
    for (const [k] of ak) if (!bs.has(k)) console.log(`  - section [${k}]`)
    for (const k of bs.keys()) if (!as.has(k)) console.log(`  + section [${k}]`)
    for (const [k, s] of ak) {
      const t = bs.get(k)
      if (!t || t.text === s.text) continue
      console.log(`  ~ text of [${k}] ${hash(s.text)}->${hash(t.text)}`)
      if (verbose) lineDiff(s.text, t.text)
    }
  }
  console.log(`\n${same} of ${names.length} documents unchanged`)
}

function lineDiff(a: string, b: string): void {
  const al = a.split('\n')
  const bl = b.split('\n')
  const bset = new Set(bl)
  const aset = new Set(al)
  for (const l of al) if (!bset.has(l)) console.log(`      - ${l.slice(0, 300)}`)
  for (const l of bl) if (!aset.has(l)) console.log(`      + ${l.slice(0, 300)}`)
}

async function main(): Promise<void> {
  const [cmd, ...rest] = process.argv.slice(2)
  if (cmd === 'dump') {
    const out = rest.length > 1 ? rest[1]! : rest[0]
    const source = rest.length > 1 ? rest[0]! : DEFAULT_CORPUS
    if (!out) throw new Error('usage: compare.ts dump [folder|--fixtures] out.json')
    const d = await dump(source)
    await writeFile(out, JSON.stringify(d, null, 1))
    console.log(JSON.stringify(d.totals))
    console.log(`parsed ${(d.parse!.bytes / 1e6).toFixed(1)} MB in ${(d.parse!.ms / 1000).toFixed(1)} s (parseFile only)`)
    return
  }
  if (cmd === 'diff' && rest.length >= 2) {
    const read = async (p: string) => JSON.parse(await readFile(p, 'utf8')) as Dump
    diff(await read(rest[0]!), await read(rest[1]!), rest.includes('--verbose'))
    return
  }
  throw new Error('usage: compare.ts dump [folder|--fixtures] out.json | diff before.json after.json [--verbose]')
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e)
  process.exitCode = 1
})
