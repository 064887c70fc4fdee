import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

/**
 * "Every figure in docs/ has a command that prints it, next to it": the check behind
 * figures.test.ts. Markdown is cut into sections at every heading; a section that states a
 * measured figure must also hold a command, and every command must name something that exists.
 *
 * A figure: a percentage, a decimal with three or more digits (0.762), "9 of 10", "55/55", or a
 * number with a unit of time, size or rate (25 ms, 13.8 s, 89.5 MB, 230,941 tokens/s), outside
 * code. Design constants (k1 = 1.2, 256 tokens, m = 16) are not figures. A command: a line of a
 * fenced block, or an inline code span (headings included), that starts with npm run, npx, tsx,
 * bash, python, docent, git, wc, du or jq, or `bench -- <suite>` (short for `npm run bench -- <suite>`).
 * A section whose numbers are not measurements (targets, limits, design constants, a publisher's
 * sizes) says why in a comment, `<!-- not measured: ... -->`, and is not checked.
 */

export interface Section {
  file: string
  heading: string
  line: number
  /** Section text with fenced blocks and inline code removed: where figures are looked for. */
  prose: string[]
  commands: string[]
  notMeasured: boolean
}

export interface Finding {
  file: string
  heading: string
  line: number
  text: string
}

const FIGURE = new RegExp(
  [
    String.raw`\d+(?:\.\d+)?\s?%`,
    String.raw`\b\d+\.\d{3,}\b`,
    String.raw`\b\d[\d,]*\s+of\s+\d[\d,]*\b`,
    String.raw`\b\d+/\d+\b`,
    String.raw`\b\d[\d,]*(?:\.\d+)?\s?(?:ms|s|MB|GB|KB|tokens/s|files/s|chunks/s|MB/s)\b`,
  ].join('|'),
)

const COMMAND = /^(?:npm run|npx |tsx |bash |python3? |\/tmp\/\S+\/python |docent |git |wc |du |jq |bench -- \w)/

/** A section whose numbers are targets, limits or someone else's published figures says so. */
const NOT_MEASURED = /<!--\s*not measured:\s*\S[^>]*-->/

export function parseSections(file: string, markdown: string): Section[] {
  const sections: Section[] = []
  let current: Section = { file, heading: '(top)', line: 1, prose: [], commands: [], notMeasured: false }
  let fence: string | null = null
  markdown.split('\n').forEach((raw, i) => {
    const fenceMark = /^\s*(```+|~~~+)/.exec(raw)?.[1]
    if (fence) {
      if (fenceMark && fenceMark[0] === fence[0] && fenceMark.length >= fence.length) fence = null
      else {
        // A command continued over several lines ends in a backslash; only its first line is matched.
        const line = raw.trim().replace(/^\$\s+/, '')
        if (COMMAND.test(line)) current.commands.push(line)
      }
      return
    }
    if (fenceMark) {
      fence = fenceMark
      return
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(raw)
    if (heading) {
      sections.push(current)
      current = { file, heading: heading[2]!.trim(), line: i + 1, prose: [], commands: [], notMeasured: false }
    }
    if (NOT_MEASURED.test(raw)) current.notMeasured = true
    const spans = [...raw.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim())
    for (const s of spans) if (COMMAND.test(s)) current.commands.push(s)
    if (!heading) current.prose[i] = raw.replace(/`[^`]*`/g, '``')
  })
  sections.push(current)
  return sections
}

/** Figures in sections that hold no command. */
export function figuresWithoutCommand(sections: Section[]): Finding[] {
  const out: Finding[] = []
  for (const s of sections) {
    if (s.commands.length > 0 || s.notMeasured) continue
    s.prose.forEach((text, i) => {
      // Dates (2026-11-29) are not figures.
      if (text === undefined || !FIGURE.test(text.replace(/\b\d{4}-\d{2}-\d{2}\b/g, ''))) return
      out.push({ file: s.file, heading: s.heading, line: i + 1, text: text.trim() })
    })
  }
  return out
}

/**
 * What a command names that does not exist: `npm run <script>` missing from package.json, a
 * `docent`/`cli --` subcommand the CLI does not have, a repository file (evals/…, scripts/…,
 * src/…, test-fixtures/…) that is not there.
 */
export function missingReferences(command: string, repo: RepoFacts): string[] {
  const out: string[] = []
  const npm = /^npm run (?:--silent )?([\w:.-]+)/.exec(command)
  if (npm && !repo.scripts.has(npm[1]!)) out.push(`npm script "${npm[1]}"`)
  const bench = /^(?:npm run (?:--silent )?)?bench -- (\w+)/.exec(command)
  if (bench && !repo.benchSuites.has(bench[1]!)) out.push(`bench suite "${bench[1]}"`)
  const cli = /(?:^docent |\bcli -- )([a-z]+)/.exec(command)
  if (cli && !repo.cliCommands.has(cli[1]!)) out.push(`CLI command "${cli[1]}"`)
  for (const m of command.matchAll(
    /(?:^|\s)((?:evals|scripts|src|test-fixtures)\/[\w./-]+\.(?:ts|mts|mjs|py|sh|txt|jsonl))\b/g,
  )) {
    if (!existsSync(path.join(repo.root, m[1]!))) out.push(`file ${m[1]}`)
  }
  return out
}

/** README.md and every Markdown file under docs/. */
export function docFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : [],
    )
  return ['README.md', ...walk('docs').sort()]
}

export interface RepoFacts {
  root: string
  scripts: Set<string>
  /** The CLI's commands, as src/apps/cli/main.ts declares them to its parser (`access` in access.ts). */
  cliCommands: Set<string>
  /** From the benchmark runner's switch (evals/bench/main.ts). */
  benchSuites: Set<string>
}

export function repoFacts(root: string): RepoFacts {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const cli = ['main.ts', 'access.ts'].map((f) => readFileSync(path.join(root, 'src/apps/cli', f), 'utf8')).join('\n')
  const bench = readFileSync(path.join(root, 'evals/bench/main.ts'), 'utf8')
  return {
    root,
    scripts: new Set(Object.keys(pkg.scripts)),
    // command('ingest', …) and new Command('access'); not a subcommand's `.command('retrieval')`.
    cliCommands: new Set(
      [...cli.matchAll(/(?:[^.\w]command|new Command)\('([a-z]+)'/g)].map((m) => m[1]!).filter((c) => c !== 'docent'),
    ),
    benchSuites: new Set([...bench.matchAll(/^\s+case '([a-z-]+)':/gm)].map((m) => m[1]!)),
  }
}
