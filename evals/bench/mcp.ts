import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { cp, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { Engine } from '../../src/engine/engine'
import { mcpCorpus, repoRoot, tempDir } from '../../src/test-support/paths'
import { pct, printTable } from './machine'

/**
 * `npm run bench -- mcp [--runs N]`: how long `docent mcp` takes from start to its first answer (an
 * MCP client connects, initializes and calls list_collections), and how much memory it holds once
 * idle (resident set of its process tree, 3 s after that answer; Linux /proc). Three ways to start
 * it: the built JavaScript (out/main/docent-cli.js, what the installed app runs in its utility
 * process) owning the index, the same attaching to an owner that already has it open, and the
 * baseline from source (`npm run cli -- mcp`: npm, then tsx compiling TypeScript at every start).
 * The Electron binary is not installed here, so `Docent --mcp` itself (Electron's main process
 * plus this utility process) is not measured. Needs `npm run build` first.
 */

const BUILT = path.join(repoRoot, 'out/main/docent-cli.js')

/** Resident memory of a process and all its descendants, in MB. */
function treeRssMb(root: number): number {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {
      // Gone meanwhile.
    }
  }
  let kb = 0
  const stack = [root]
  while (stack.length) {
    const pid = stack.pop()!
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
      kb += m ? Number(m[1]) : 0
    } catch {
      // Gone meanwhile.
    }
    stack.push(...(children.get(pid) ?? []))
  }
  return Math.round(kb / 1024)
}

interface Sample {
  startMs: number
  rssMb: number
}

async function startAndAsk(command: string, args: string[]): Promise<{ sample: Sample; close: () => Promise<void> }> {
  const t0 = performance.now()
  const transport = new StdioClientTransport({ command, args, cwd: repoRoot, stderr: 'ignore' })
  const client = new Client({ name: 'docent-bench', version: '1.0.0' })
  await client.connect(transport)
  const r = await client.callTool({ name: 'list_collections', arguments: {} })
  if (r.isError) throw new Error(`list_collections failed: ${JSON.stringify(r.content)}`)
  const startMs = performance.now() - t0
  await new Promise((res) => setTimeout(res, 3_000))
  const rssMb = transport.pid === null ? 0 : treeRssMb(transport.pid)
  return { sample: { startMs, rssMb }, close: () => client.close() }
}

export async function benchMcp(opts: { runs: number }): Promise<Record<string, unknown>> {
  if (!existsSync(BUILT)) throw new Error(`${path.relative(repoRoot, BUILT)} is missing: run npm run build first`)
  if (process.platform !== 'linux') throw new Error('bench mcp reads memory from /proc: Linux only')
  const home = await tempDir('docent-bench-mcp-')
  const data = path.join(home.dir, 'index')
  const models = path.join(home.dir, 'no-models')
  await mkdir(models)
  // An index with something in it: one release of the MCP specification.
  const corpus = path.join(home.dir, 'corpus')
  await cp(path.join(mcpCorpus, 'specification/2025-06-18'), corpus, { recursive: true })
  const engine = await Engine.open({ dataDir: data, modelsDir: models })
  await engine.importFolder(corpus, { collection: 'mcp' })
  await engine.close()

  const node = process.execPath
  const ways: { name: string; command: string; args: string[]; owner?: boolean }[] = [
    { name: 'built JS, owns the index', command: node, args: [BUILT, 'mcp', '--data', data, '--models', models] },
    {
      name: 'built JS, attaches to an open index',
      command: node,
      args: [BUILT, 'mcp', '--data', data, '--models', models],
      owner: true,
    },
    {
      name: 'from source: npm run cli -- mcp (tsx)',
      command: 'npm',
      args: ['run', '--silent', 'cli', '--', 'mcp', '--data', data, '--models', models],
    },
  ]
  const results: Record<string, unknown>[] = []
  const rows: (string | number)[][] = []
  for (const way of ways) {
    // For the attach case, another server owns the index for the whole measurement.
    const owner = way.owner ? await startAndAsk(node, [BUILT, 'mcp', '--data', data, '--models', models]) : null
    const samples: Sample[] = []
    for (let i = 0; i < opts.runs; i++) {
      const run = await startAndAsk(way.command, way.args)
      samples.push(run.sample)
      await run.close()
      // Let the owner close and release the folder before the next start.
      await new Promise((res) => setTimeout(res, 1_000))
    }
    await owner?.close()
    await new Promise((res) => setTimeout(res, 1_000))
    const start = samples.map((s) => s.startMs)
    const rss = samples.map((s) => s.rssMb)
    results.push({ way: way.name, runs: opts.runs, start_ms: start.map(Math.round), idle_rss_mb: rss })
    rows.push([
      way.name,
      Math.round(pct(start, 50)),
      `${Math.round(Math.min(...start))}–${Math.round(Math.max(...start))}`,
      pct(rss, 50),
      `${Math.min(...rss)}–${Math.max(...rss)}`,
    ])
  }
  printTable(
    `docent mcp: start to first list_collections answer, and idle memory (${opts.runs} runs each)`,
    ['how it starts', 'start ms (median)', 'range', 'idle RSS MB (median)', 'range'],
    rows,
  )
  await home.cleanup()
  return { runs: opts.runs, results }
}
