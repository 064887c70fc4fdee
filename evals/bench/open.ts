import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { formatTable } from '../../src/apps/cli/table'

/**
 * `npm run bench -- open [--runs N]`: where a library spends its first seconds (issue "The real path
 * at laptop speed", start-up). Each run is a fresh Node process (as a one-shot CLI command or the
 * engine host is), timing its phases from the process's own start: loading the engine's modules,
 * PGlite starting on the folder (a new folder runs initdb inside the WebAssembly build), the pgvector
 * extension, the migrations, and the first query. No model is loaded: models load on first use.
 * The baseline in the same run is a bare `node -e 0` (the process start no library can avoid).
 */

const HERE = path.dirname(fileURLToPath(import.meta.url))

interface Phases {
  modules_ms: number
  pglite_ms: number
  migrate_ms: number
  first_query_ms: number
  ready_ms: number
}

/** The child: one open, phases printed as JSON. */
async function child(dataDir: string, templateDir: string): Promise<void> {
  const t0 = performance.now()
  const { leaveTemplate, openPGlite } = await import('../../src/engine/store/db')
  const { migrate, SCHEMA_MARK } = await import('../../src/engine/store/migrations')
  await import('../../src/engine/engine')
  const t1 = performance.now()
  // As Engine.open does it: a new folder unpacks the template when there is one, and one that ran
  // initdb leaves the template behind after its migrations.
  const templates = templateDir === 'none' ? null : { dir: templateDir, schema: SCHEMA_MARK }
  const db = await openPGlite(dataDir, { templates })
  const t2 = performance.now()
  await migrate(db)
  await leaveTemplate(db, templates)
  const t3 = performance.now()
  await db.query('SELECT count(*) FROM collections')
  const t4 = performance.now()
  await db.close()
  const phases: Phases = {
    modules_ms: t1 - t0,
    pglite_ms: t2 - t1,
    migrate_ms: t3 - t2,
    first_query_ms: t4 - t3,
    // From the process's own start (performance.timeOrigin), so Node's and tsx's start are in it.
    ready_ms: t4,
  }
  process.stdout.write(JSON.stringify(phases) + '\n')
}

function runChild(dataDir: string, templateDir = 'none'): Phases {
  const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(HERE, 'open.ts'), '--child', dataDir, templateDir], {
    encoding: 'utf8',
    env: { ...process.env },
  })
  return JSON.parse(out.trim().split('\n').pop()!) as Phases
}

/** One `docent collections` of the built CLI on an existing library, from spawn to exit, in ms. */
function timeBuiltCommand(cli: string, dataDir: string, modelsDir: string): number {
  const t = performance.now()
  execFileSync(process.execPath, [cli, 'collections', '--data', dataDir, '--models', modelsDir, '--json'], {
    encoding: 'utf8',
    env: { ...process.env, DOCENT_TEMPLATE_DIR: 'off' },
  })
  return performance.now() - t
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

export async function benchOpen(opts: { runs: number }): Promise<Record<string, unknown>> {
  const bare: number[] = []
  for (let i = 0; i < opts.runs; i++) {
    const t = performance.now()
    execFileSync(process.execPath, ['-e', '0'])
    bare.push(performance.now() - t)
  }
  const fresh: Phases[] = []
  const first: Phases[] = []
  const templated: Phases[] = []
  const existing: Phases[] = []
  // The built CLI (what an installed app's `docent` runs: bundled JavaScript, no tsx), one command
  // on the existing library from spawn to exit; only when `npm run build` has made it.
  const builtCli = path.join(HERE, '../../out/main/docent-cli.js')
  const built: number[] = []
  for (let i = 0; i < opts.runs; i++) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docent-open-'))
    const templates = path.join(dir, 'templates')
    try {
      fresh.push(runChild(path.join(dir, 'lib')))
      existing.push(runChild(path.join(dir, 'lib')))
      first.push(runChild(path.join(dir, 'first'), templates))
      templated.push(runChild(path.join(dir, 'next'), templates))
      if (existsSync(builtCli)) built.push(timeBuiltCommand(builtCli, path.join(dir, 'lib'), path.join(dir, 'none')))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const row = (name: string, ps: Phases[]) => [
    name,
    ...(['modules_ms', 'pglite_ms', 'migrate_ms', 'first_query_ms', 'ready_ms'] as const).map((k) =>
      median(ps.map((p) => p[k])).toFixed(0),
    ),
  ]
  process.stdout.write(
    `Opening a library, no model loaded (median of ${opts.runs} fresh processes; ready = from the process's start)\n` +
      formatTable(
        ['library', 'modules ms', 'PGlite ms', 'migrations ms', 'first query ms', 'ready ms'],
        [
          row('new, initdb (templates off)', fresh),
          row('new, first on the machine (initdb, leaves the template)', first),
          row('new, from the template', templated),
          row('existing', existing),
        ],
      ) +
      `\nbaseline: a bare node process starts and exits in ${median(bare).toFixed(0)} ms (same run)\n` +
      (built.length
        ? `built CLI, existing library: \`docent collections\` from spawn to exit in ${median(built).toFixed(0)} ms (median; ${Math.min(...built).toFixed(0)}-${Math.max(...built).toFixed(0)})\n\n`
        : 'built CLI: not measured (out/main/docent-cli.js is missing: npm run build)\n\n'),
  )
  return {
    runs: opts.runs,
    bare_node_ms: bare,
    fresh,
    first_with_template: first,
    from_template: templated,
    existing,
    built_cli_existing_ms: built,
  }
}

if (process.argv[2] === '--child') void child(process.argv[3]!, process.argv[4] ?? 'none')
