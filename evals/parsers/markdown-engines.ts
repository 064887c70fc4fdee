#!/usr/bin/env tsx
/**
 * Issue 24, "one Markdown engine on both sides": what replacing each of Docent's two other engines
 * with the mdast family would do, on real documents (ADR 0016).
 *
 *   npx tsx evals/parsers/markdown-engines.ts <hostile corpus> <mcp-docs>
 *   (the hostile corpus: npx tsx evals/hostile/fetch.ts DIR, then DIR/corpus)
 *
 * 1. The renderer (`marked` in src/renderer/src/lib/sanitize.ts) against mdast-util-from-markdown +
 *    GFM + mdast-util-to-hast + hast-util-to-html: the minified, gzipped bundle each adds; how many
 *    of the CommonMark spec's examples each renders exactly as the spec does; how many MCP pages
 *    each renders to the same visible text as the other.
 * 2. The HTML importer (html-walker.ts over htmlparser2) against hast-util-from-html +
 *    hast-util-to-mdast, whose mdast goes through the Markdown importer as Markdown: on each
 *    CommonMark example given as the spec's HTML, the words and headings the Markdown importer
 *    reads from the same example's Markdown (recall by occurrence, headings equal), and on the HTML
 *    documents of the corpus (Beautiful Soup's docs and fuzz cases, and the parser fixture page) how
 *    many words each reads that the other does not, and whether it reads the file at all.
 */
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { fromHtml } from 'hast-util-from-html'
import { toHtml } from 'hast-util-to-html'
import { toMdast } from 'hast-util-to-mdast'
import { Marked } from 'marked'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown, gfmToMarkdown } from 'mdast-util-gfm'
import { toHast } from 'mdast-util-to-hast'
import { toMarkdown } from 'mdast-util-to-markdown'
import { gfm } from 'micromark-extension-gfm'
import { checkText, parseFile } from '../../src/engine/ingest/parsers'
import type { ParsedDocument } from '../../src/engine/ingest/types'
import { recall } from './word-recall'

const [hostileArg, mcpDocsArg] = process.argv.slice(2)
if (!hostileArg || !mcpDocsArg) {
  console.error('usage: npx tsx evals/parsers/markdown-engines.ts <hostile corpus> <mcp-docs>')
  process.exit(2)
}
const hostile: string = hostileArg
const mcpDocs: string = mcpDocsArg

const marked = new Marked({ gfm: true, breaks: false, async: false })
const viaMarked = (md: string): string => marked.parse(md) as string
const viaMdast = (md: string): string =>
  toHtml(toHast(fromMarkdown(md, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }), { allowDangerousHtml: true }), {
    allowDangerousHtml: true,
  })

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
const docWords = (d: ParsedDocument): string[] =>
  d.sections.flatMap((s) => [...s.headings.slice(-1), ...s.blocks.map((b) => b.text)]).flatMap(words)
const headingsOf = (d: ParsedDocument): string => d.sections.map((s) => s.headings.join(' > ')).join(' | ')
const visibleText = (html: string): string =>
  html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&[a-z#0-9]+;/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim()
const squash = (html: string): string => html.replace(/\s+/g, ' ').replace(/> </g, '><').trim()

async function bundleBytes(code: string): Promise<{ min: number; gzip: number }> {
  const out = await build({
    stdin: { contents: code, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
  })
  const bytes = out.outputFiles[0]!.contents
  return { min: bytes.length, gzip: gzipSync(bytes).length }
}

async function filesUnder(dir: string, test: (f: string) => boolean): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile() && test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort()
}

/**
 * The HTML importer as it would be on hast-util-to-mdast: the same text check as today's, then
 * HTML -> hast -> mdast -> Markdown -> the Markdown importer.
 */
async function viaHastToMdast(bytes: Uint8Array): Promise<ParsedDocument> {
  const md = toMarkdown(toMdast(fromHtml(checkText(bytes))), { extensions: [gfmToMarkdown()] })
  return parseFile(Buffer.from(md), 'page.md')
}

async function renderer(): Promise<void> {
  const markedSize = await bundleBytes(
    `import { Marked } from 'marked'; export const render = (s: string) => new Marked({ gfm: true }).parse(s)`,
  )
  const mdastSize = await bundleBytes(`
    import { fromMarkdown } from 'mdast-util-from-markdown'; import { gfmFromMarkdown } from 'mdast-util-gfm'
    import { gfm } from 'micromark-extension-gfm'; import { toHast } from 'mdast-util-to-hast'; import { toHtml } from 'hast-util-to-html'
    export const render = (s: string) => toHtml(toHast(fromMarkdown(s, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }), { allowDangerousHtml: true }), { allowDangerousHtml: true })`)
  console.log(
    `renderer bundle, minified (gzip): marked ${markedSize.min} B (${markedSize.gzip} B), mdast ${mdastSize.min} B (${mdastSize.gzip} B)`,
  )

  const examples = await filesUnder(path.join(hostile, 'commonmark-spec', 'examples'), (f) => f.endsWith('.md'))
  let markedSame = 0
  let mdastSame = 0
  for (const f of examples) {
    const md = await readFile(f, 'utf8')
    const want = squash(await readFile(f.replace(/\.md$/, '.html'), 'utf8'))
    if (squash(viaMarked(md)) === want) markedSame++
    if (squash(viaMdast(md)) === want) mdastSame++
  }
  console.log(
    `CommonMark examples rendered as the spec does: marked ${markedSame}/${examples.length}, mdast ${mdastSame}/${examples.length}`,
  )

  const pages = await filesUnder(mcpDocs, (f) => /\.mdx?$/.test(f))
  let sameText = 0
  let markedMs = 0
  let mdastMs = 0
  for (const f of pages) {
    const md = await readFile(f, 'utf8')
    let t = performance.now()
    const a = viaMarked(md)
    markedMs += performance.now() - t
    t = performance.now()
    const b = viaMdast(md)
    mdastMs += performance.now() - t
    if (visibleText(a) === visibleText(b)) sameText++
  }
  console.log(
    `MCP pages (${pages.length}) with the same visible text from both: ${sameText}; render time marked ${Math.round(markedMs)} ms, mdast ${Math.round(mdastMs)} ms`,
  )
}

async function htmlImporter(): Promise<void> {
  const examples = await filesUnder(path.join(hostile, 'commonmark-spec', 'examples'), (f) => f.endsWith('.md'))
  const score = { walker: { hit: 0, all: 0, headings: 0 }, hast: { hit: 0, all: 0, headings: 0 } }
  for (const f of examples) {
    const reference = await parseFile(await readFile(f), 'example.md')
    const html = await readFile(f.replace(/\.md$/, '.html'))
    const ref = docWords(reference)
    const sides = { walker: await parseFile(html, 'example.html'), hast: await viaHastToMdast(html) }
    for (const [name, doc] of Object.entries(sides) as [keyof typeof score, ParsedDocument][]) {
      const r = recall(docWords(doc), ref)
      score[name].hit += ref.length - r.missing.length
      score[name].all += ref.length
      if (headingsOf(doc) === headingsOf(reference)) score[name].headings++
    }
  }
  for (const [name, s] of Object.entries(score))
    console.log(
      `CommonMark examples as HTML, ${name}: word recall ${(s.hit / s.all).toFixed(4)}, headings as the Markdown's ${s.headings}/${examples.length}`,
    )

  const docs = [
    ...(await filesUnder(path.join(hostile, 'beautifulsoup4'), (f) => f.endsWith('.html'))),
    path.join('evals', 'parsers', 'test-fixtures', 'page.html'),
  ]
  for (const f of docs) {
    const bytes = await readFile(f)
    const walker = await parseFile(bytes, 'page.html').catch((e: Error) => e)
    const hast = await viaHastToMdast(bytes).catch((e: Error) => e)
    const show = (d: ParsedDocument | Error) =>
      d instanceof Error ? `refused (${d.message.slice(0, 60)})` : `${docWords(d).length} words, ${d.sections.length} sections`
    const extra =
      walker instanceof Error || hast instanceof Error
        ? ''
        : `; words only the walker reads ${recall(docWords(hast), docWords(walker)).missing.length}, only hast ${recall(docWords(walker), docWords(hast)).missing.length}`
    console.log(`${path.relative(process.cwd(), f)}: walker ${show(walker)}; hast ${show(hast)}${extra}`)
  }
}

await renderer()
await htmlImporter()
