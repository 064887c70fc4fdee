#!/usr/bin/env node
import { writeFile, mkdtemp, rm } from 'node:fs/promises'
import { existsSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { Command, CommanderError, Option } from 'commander'
import { Engine } from '../../engine/engine'
import { SearchMode } from '../../shared/search'
import type { ImportProgress } from '../../shared/api'
import { OUTSIDE_LINK_REASON } from '../../engine/ingest/walk'
import { loadQuestions } from '../../engine/eval/questions'
import { evalRetrieval } from '../../engine/eval/retrieval'
import { RRF_K } from '../../engine/retrieve/fuse'
import { formatTable } from './table'
import { cmdAsk, highlight, type AskFlags } from './ask'
import { excerpt, queryTerms } from '../../shared/excerpt'
import { sameTextLabel } from '../../shared/passage'
import { cmdEvalAnswers, cmdEvalCompare, type EvalAnswersFlags } from './eval-answers'
import { LibraryError, withLibrary } from '../library'
import { accessCommand } from './access'
import type { EvalGateFlags } from './eval-gate'
import type { McpFlags } from './mcp'
import type { WatchFlags } from './watch'

/**
 * `docent` command line. Contract (docs/contracts.md, "CLI"): with --json, stdout is exactly one
 * JSON document; a failed command exits non-zero with one line on stderr saying what went wrong
 * and what to do. ingest, search, ask and collections open the library (../library.ts): they
 * attach to the app, `docent watch` or `docent mcp` when one of them has the index open, else
 * they open it themselves. The evals open their own (usually throw-away) index directly.
 */

class UsageError extends Error {}

/** Said after the generated help of `docent help`. */
const HELP_AFTER = `
--database postgres://user@host/db (or DOCENT_DATABASE_URL) uses a team library on a PostgreSQL server
instead of a data folder; the password comes from the URL or PGPASSWORD, and ?sslmode=require turns on TLS.

Without --version (or with --version auto), a version the question names ("in the 2025-06-18 spec",
"the latest release") is searched, else every version; --version all searches every version regardless.`

/** --data, --database and --models, as each command that opens the library takes them. */
export interface LibraryFlags {
  data?: string
  database?: string
  models?: string
}
interface IngestFlags extends LibraryFlags {
  collection?: string
  json?: boolean
  allowEmpty?: boolean
}
interface SearchFlags extends LibraryFlags {
  collection?: string[]
  version?: string
  mode?: string
  rerank?: boolean
  k?: string
  json?: boolean
}
interface EvalRetrievalFlags extends LibraryFlags {
  corpus?: string
  questions?: string
  mode?: string
  rerank?: boolean
  json?: string
  collection?: string
  fusion?: string
}

function fail(message: string): never {
  throw new UsageError(message)
}

/** The one-line progress of `docent ingest` on a terminal, with the page inside a long file. */
export function progressBar(p: ImportProgress): string {
  const width = 24
  const frac = p.filesTotal ? p.filesDone / p.filesTotal : 0
  const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.')
  const eta = p.etaMs !== null && p.filesDone < p.filesTotal ? ` eta ${Math.ceil(p.etaMs / 1000)}s` : ''
  const file = p.currentFile ? ` ${p.currentFile.length > 40 ? '…' + p.currentFile.slice(-39) : p.currentFile}` : ''
  const fp = p.currentFile ? p.fileProgress : null
  const pages = fp && fp.stage === 'pages' ? ` (page ${fp.done}/${fp.total})` : ''
  return `\r[${bar}] ${p.filesDone}/${p.filesTotal} files, ${p.chunksWritten} chunks${eta}${file}${pages}`.padEnd(110)
}

async function withEngine<T>(
  values: { data?: string; database?: string; models?: string },
  fn: (e: Engine) => Promise<T>,
): Promise<T> {
  const engine = await Engine.open({
    ...(values.database ? { database: values.database } : values.data ? { dataDir: path.resolve(values.data) } : {}),
    ...(values.models ? { modelsDir: path.resolve(values.models) } : {}),
  })
  try {
    return await fn(engine)
  } finally {
    await engine.close()
  }
}

function out(json: unknown): void {
  process.stdout.write(JSON.stringify(json, null, 2) + '\n')
}

function parseMode(v: string | undefined, fallback: SearchMode): SearchMode {
  if (v === undefined) return fallback
  const m = SearchMode.safeParse(v)
  if (!m.success) fail(`--mode must be keyword, vector or hybrid (got "${v}")`)
  return m.data
}

async function cmdIngest(given: string | undefined, values: IngestFlags): Promise<void> {
  const folder = given ?? fail('ingest needs a folder: docent ingest <folder> --collection <name>')
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    fail(`"${folder}" is not a folder; give the path of a folder of documents`)
  const tty = process.stderr.isTTY && !values.json
  const controller = new AbortController()
  process.once('SIGINT', () => controller.abort())
  const report = await withLibrary(values, (lib) =>
    lib.importFolder(
      {
        folder: path.resolve(folder),
        ...(values.collection ? { collection: values.collection } : {}),
        ...(values.allowEmpty ? { allowEmpty: true } : {}),
      },
      {
        signal: controller.signal,
        ...(tty ? { onProgress: (p: ImportProgress) => process.stderr.write(progressBar(p)) } : {}),
        // Machine-readable progress for tools and the crash tests: one JSON object per line on stderr.
        ...(process.env['DOCENT_PROGRESS'] === 'jsonl'
          ? { onProgress: (p: ImportProgress) => process.stderr.write(JSON.stringify(p) + '\n') }
          : {}),
      },
    ),
  ).catch((err: unknown) => {
    // Say which flag goes on; the engine's message is shared with the app and MCP, which have none.
    if (err instanceof LibraryError && err.code === 'would_empty_collection')
      throw new LibraryError(`${err.message} To empty it, run again with --allow-empty.`, err.code)
    throw err
  })
  if (tty) process.stderr.write('\n')
  if (values.json) return out(report)
  const lines = [
    `Collection "${report.collection}" from ${report.root}`,
    `  files seen ${report.files_seen}: imported ${report.imported}, unchanged ${report.unchanged}, skipped ${report.skipped}, failed ${report.failed.length}` +
      (report.pruned ? `, removed ${report.pruned}` : ''),
    `  chunks written ${report.chunks_written} (collection now has ${report.chunks_total}), texts embedded ${report.texts_embedded}`,
    `  took ${(report.ms / 1000).toFixed(1)} s`,
  ]
  for (const f of report.failed) lines.push(`  failed: ${f.path}: ${f.reason}`)
  // Named one by one (other skips are only counted): a person should know a link was left out and why.
  for (const f of report.skipped_files) {
    if (f.reason === OUTSIDE_LINK_REASON) lines.push(`  skipped: ${f.path}: ${f.reason}`)
  }
  for (const n of report.notices) lines.push(`  note: ${n}`)
  process.stdout.write(lines.join('\n') + '\n')
}

async function cmdSearch(words: string[], values: SearchFlags): Promise<void> {
  const query = words.join(' ').trim() || fail('search needs a query: docent search "how do I ..."')
  const k = values.k === undefined ? 10 : Number(values.k)
  if (!Number.isInteger(k) || k < 1 || k > 100) fail(`-k must be a whole number from 1 to 100 (got "${values.k}")`)
  const mode = parseMode(values.mode, 'hybrid')
  const found = await withLibrary(
    values,
    (lib) =>
      lib.invoke('search', {
        query,
        // No --version: the version named in the query (if any), else every version; --version all is explicit.
        scope: { collections: values.collection ?? [], version: values.version ?? 'auto' },
        mode,
        rerank: !!values.rerank,
        k,
      }),
    { mustExist: true },
  )
  const res = { ...found, scope_label: found.scope.label }
  if (values.json) return out(res)
  for (const n of res.notices) process.stderr.write(`note: ${n}\n`)
  const tty = !!process.stdout.isTTY
  process.stdout.write(`Searching ${res.scope_label}\n`)
  if (res.results.length === 0) {
    process.stdout.write(`No passages found in ${res.scope_label}.\n`)
    return
  }
  const terms = queryTerms(query)
  res.results.forEach((h, i) => {
    const s = h.scores
    const scores = [
      s.reranker !== null ? `reranker ${s.reranker.toFixed(3)}` : null,
      s.rrf !== null ? `rrf ${s.rrf.toFixed(4)}` : null,
      s.bm25 !== null ? `bm25 ${s.bm25.toFixed(2)} (#${s.keyword_rank})` : null,
      s.cosine !== null ? `cosine ${s.cosine.toFixed(3)} (#${s.vector_rank})` : null,
    ].filter(Boolean)
    const where = [h.version, h.kind, h.page ? `p. ${h.page}` : null].filter(Boolean).join(', ')
    const snippet = highlight(excerpt(h.text, terms, 200), terms, tty)
    const same = sameTextLabel(h.same_in)
    process.stdout.write(
      `${i + 1}. ${h.path}${where ? ` [${where}]` : ''}\n   ${h.heading}\n${same ? `   (${same})\n` : ''}   ${scores.join('  ')}\n   ${snippet}\n`,
    )
  })
}

async function cmdCollections(values: LibraryFlags & { json?: boolean }): Promise<void> {
  const cols = await withLibrary(values, (lib) => lib.invoke('collections.list', {}), { mustExist: true })
  if (values.json) return out({ collections: cols })
  if (cols.length === 0)
    return void process.stdout.write('No collections yet. Import one: docent ingest <folder> --collection <name>\n')
  process.stdout.write(
    formatTable(
      ['collection', 'documents', 'failed', 'chunks', 'embedded', 'versions', 'last sync'],
      cols.map((c) => [
        c.id,
        c.documents,
        c.failed,
        c.chunks,
        c.embedded,
        c.versions.join(' ') || '-',
        c.last_sync_at ?? 'never',
      ]),
    ) + '\n',
  )
}

async function cmdEvalRetrieval(values: EvalRetrievalFlags): Promise<void> {
  const corpus = values.corpus ?? fail('eval retrieval needs --corpus <folder>')
  if (values.fusion !== undefined && values.fusion !== 'rrf')
    fail(`--fusion takes only "rrf" (equal-weight RRF); got "${values.fusion}"`)
  const qfile = values.questions ?? fail('eval retrieval needs --questions <file.jsonl>')
  if (!existsSync(corpus)) fail(`corpus folder "${corpus}" does not exist`)
  const questions = await loadQuestions(qfile)
  const mode = parseMode(values.mode, 'hybrid')
  // Without --data the corpus is imported into a throw-away database, leaving the person's index alone.
  const tmp = values.data || values.database ? null : await mkdtemp(path.join(os.tmpdir(), 'docent-eval-'))
  try {
    const report = await withEngine({ ...values, data: values.data ?? tmp ?? undefined }, async (e) => {
      const collection = values.collection ?? 'eval-' + path.basename(path.resolve(corpus))
      const ingest = await e.importFolder(corpus, { collection })
      const r = await evalRetrieval(e, questions, {
        collection: ingest.collection,
        mode,
        rerank: !!values.rerank,
        set: path.basename(path.dirname(path.resolve(qfile))),
        ...(values.fusion ? { fusion: { kind: 'rrf' as const, k: RRF_K } } : {}),
      })
      return r
    })
    if (values.json) await writeFile(values.json, JSON.stringify(report, null, 2) + '\n')
    process.stdout.write(
      formatTable(
        ['mode', 'rerank', 'questions', 'answerable', 'recall@5', 'recall@10', 'MRR', 'p50 ms', 'p95 ms'],
        [
          [
            report.mode,
            report.rerank ? 'yes' : 'no',
            report.questions,
            report.answerable,
            report.recall_at_5,
            report.recall_at_10,
            report.mrr,
            report.p50_ms,
            report.p95_ms,
          ],
        ],
      ) + '\n',
    )
    const h = report.halves
    process.stdout.write(
      `halves: fit n=${h.fit.n} recall@10 ${h.fit.recall_at_10} MRR ${h.fit.mrr}; held_out n=${h.held_out.n} recall@10 ${h.held_out.recall_at_10} MRR ${h.held_out.mrr}\n`,
    )
    for (const n of report.notices) process.stderr.write(`note: ${n}\n`)
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true })
  }
}

/** Where `docent mcp` reads the protocol (the app's utility process has no stdin of its own: bin.ts). */
export interface CliIo {
  stdin?: Readable
  version?: string
}

export async function main(argv: string[], io: CliIo = {}): Promise<number> {
  const program = cliProgram(io)
  if (argv.length === 0) {
    process.stdout.write(program.helpInformation())
    return 1
  }
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (err) {
    // Help asked for (`docent help`, `--help`) was written to stdout.
    if (err instanceof CommanderError && err.exitCode === 0) return 0
    const msg = err instanceof Error ? err.message.replace(/^error: /, '') : String(err)
    const hint = err instanceof CommanderError ? ' (run "docent help")' : ''
    process.stderr.write(`docent: ${msg.split('\n')[0]}${hint}\n`)
    return 1
  }
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value]

/** --data and --database, which every command that opens a library takes, and --models where it loads models. */
function libraryOptions(command: Command, models = true): Command {
  command
    .option('--data <dir>', "the database folder (default: the app's data folder)")
    .option('--database <url>', 'a team library on a PostgreSQL server instead (or DOCENT_DATABASE_URL)')
  return models ? command.option('--models <dir>', "the models folder (default: the app's)") : command
}

function scopeOptions(command: Command): Command {
  return command
    .option('--collection <name>', 'only this collection (repeat for more)', collect)
    .option('--version <v>', 'a version, all, latest or auto (the version the text names, else all)')
}

const modeOption = (): Option => new Option('--mode <mode>', 'keyword, vector or hybrid (default)')

/**
 * The commands, their arguments and options: the parser and the generated help (`docent help
 * [command]`). Errors are thrown, never printed: main() writes the one line the contract promises.
 */
function cliProgram(io: CliIo): Command {
  const program = new Command('docent')
    .description('Answers questions about your own document folders, fully offline, with checked citations.')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: () => {}, outputError: () => {} })
    .addHelpText('after', HELP_AFTER)
  // Extra words were never an error: `docent ingest <folder> more` imports <folder>.
  const command = (name: string, description: string): Command =>
    program.command(name).description(description).allowExcessArguments()

  libraryOptions(command('ingest', 'import a folder into a collection (again: sync it)').argument('[folder]'))
    .option('--collection <name>', "the collection's name (default: the folder's)")
    .option('--json', 'one JSON document on stdout')
    .option('--allow-empty', 'go on with a sync that would remove every document of the collection')
    .action((folder: string | undefined, o: IngestFlags) => cmdIngest(folder, o))
  libraryOptions(scopeOptions(command('search', 'the passages that match a query').argument('[query...]')))
    .addOption(modeOption())
    .option('--rerank', 'reorder with the cross-encoder')
    .option('-k, --k <n>', 'how many passages (1-100, default 10)')
    .option('--json', 'one JSON document on stdout')
    .action((query: string[], o: SearchFlags) => cmdSearch(query, o))
  libraryOptions(scopeOptions(command('ask', 'an answer with checked citations').argument('[question...]')))
    .option('--json', 'one JSON document on stdout')
    .option('--search-only', 'the sources without an answer')
    .option('--thread <id>', 'a follow-up in this thread')
    .action((question: string[], o: AskFlags) => cmdAsk(question, o))
  libraryOptions(command('collections', 'the collections and their state'))
    .option('--json', 'one JSON document on stdout')
    .action((o: LibraryFlags & { json?: boolean }) => cmdCollections(o))
  libraryOptions(command('watch', 'keep collections in step with their folders until Ctrl-C'))
    .option('--collection <name>', 'only this collection (repeat for more)', collect)
    .action(async (o: WatchFlags) => (await import('./watch')).cmdWatch(o))
  libraryOptions(command('mcp', 'a Model Context Protocol server on stdio'))
    .option('--allow-writes', 'let the client import and remove collections')
    .action(async (o: McpFlags) => (await import('./mcp')).cmdMcp(o, io))
  program.addCommand(accessCommand().copyInheritedSettings(program))
  evalCommands(command('eval', 'evaluations: retrieval, answers, compare, gate'))
  return program
}

function evalCommands(evaluation: Command): void {
  evaluation
    .argument('[eval]')
    .action((sub: string | undefined) =>
      fail(`unknown eval "${sub ?? ''}"; try: docent eval retrieval --corpus <folder> --questions <file.jsonl>`),
    )
  const corpusOptions = (c: Command): Command =>
    c.option('--corpus <folder>', 'the documents').option('--questions <file>', 'the golden questions (.jsonl)')
  libraryOptions(corpusOptions(evaluation.command('retrieval').description('recall and MRR of the retrieval')))
    .addOption(modeOption())
    .option('--rerank', 'reorder with the cross-encoder')
    .option('--json <out.json>', 'also write the report there')
    .option('--collection <name>', 'the collection (default: eval-<corpus folder>)')
    // `rrf`: hybrid by equal-weight RRF (ADR 0001) instead of the engine's fusion (ADR 0017), for comparison.
    .option('--fusion <rrf>', "hybrid by equal-weight RRF instead of the engine's fusion")
    .action((o: EvalRetrievalFlags) => cmdEvalRetrieval(o))
  const answerOptions = (c: Command): Command =>
    corpusOptions(c)
      .option('--data <dir>', 'the database folder (default: a throw-away one)')
      .option('--models <dir>', "the models folder (default: the app's)")
      .option('--json <out.json>', 'also write the report there')
      .option('--collection <name>', 'the collection (default: eval-<corpus folder>)')
      .option('--judge', 'have the model judge the answers too')
      .option('--gate-threshold <x>', "the relevance gate's threshold")
      .option('--only <ids>', 'only these question ids (comma-separated)')
      .option('--half <half>', 'fit or held-out')
  answerOptions(evaluation.command('answers').description('the whole pipeline on every golden question')).action(
    (o: EvalAnswersFlags) => cmdEvalAnswers(o),
  )
  answerOptions(evaluation.command('compare').description('one table over retrieval and pipeline configurations')).action(
    (o: EvalAnswersFlags) => cmdEvalCompare(o),
  )
  evaluation
    .command('gate')
    .description('calibrate the relevance gate without a reranker (one --questions per --corpus)')
    .option('--corpus <folder>', 'the documents (repeat for more)', collect)
    .option('--questions <file>', 'their golden questions (repeat, in the same order)', collect)
    .option('--data <dir>', 'the database folder (default: a throw-away one)')
    .option('--models <dir>', "the models folder (default: the app's)")
    .option('--json <out.json>', 'also write the report there')
    .action(async (o: EvalGateFlags) => (await import('./eval-gate')).cmdEvalGate(o))
}

// Run directly from source (tsx src/apps/cli/main.ts); the built CLI's entry is bin.ts, bundled with this file.
const isMain =
  process.argv[1] &&
  import.meta.url.endsWith('/main.ts') &&
  import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href
if (isMain) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code
  })
}
