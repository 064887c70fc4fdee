import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { repoRoot, tempDir } from '../../test-support/paths'

/**
 * Issue 26: `search --data <a folder that does not exist>` made an empty 39 MB library there and
 * answered "0 results". A command that reads now refuses a data folder that holds no library, in
 * one line on stderr that names it, with a non-zero exit, and creates nothing; `ingest` still
 * creates the folder. The real CLI from source, in its own process.
 */

const run = promisify(execFile)
const CLI = path.join(repoRoot, 'src/apps/cli/main.ts')

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      // Before the fix `watch` and `mcp` ran on, watching and serving an empty library.
      timeout: 90_000,
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('a read command on a data folder that holds no library', () => {
  let root: string
  let models: string
  let docs: string
  const cleanups: (() => Promise<void>)[] = []

  beforeAll(async () => {
    const t = await tempDir('docent-missing-data-')
    cleanups.push(t.cleanup)
    root = t.dir
    models = path.join(root, 'no-models')
    docs = path.join(root, 'docs')
    await mkdir(models)
    await mkdir(docs)
    await writeFile(path.join(docs, 'kestrel.md'), '# Kestrel\n\nThe kestrel hovers before it stoops.\n')
  })
  afterAll(async () => {
    for (const c of cleanups) await c()
  })

  /** The failure a person sees: exit 1, nothing on stdout, one line on stderr naming the folder and what to do. */
  const expectRefused = (r: { code: number; stdout: string; stderr: string }, folder: string, state: RegExp) => {
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines, r.stderr).toHaveLength(1)
    expect(lines[0]).toContain(folder)
    expect(lines[0]).toMatch(state)
    expect(lines[0]).toMatch(/docent ingest <folder> --collection <name>/)
  }

  it('search, collections, ask, watch and a read-only mcp refuse a folder that does not exist, and create nothing', async () => {
    const missing = path.join(root, 'typo-index')
    for (const args of [
      ['search', 'kestrel', '--mode', 'keyword'],
      ['collections', '--json'],
      ['ask', 'what does the kestrel do?', '--search-only'],
      ['watch'],
      ['mcp'],
    ]) {
      const r = await cli([...args, '--data', missing, '--models', models])
      expectRefused(r, missing, /does not exist/)
      expect(existsSync(missing), `${args[0]} created ${missing}`).toBe(false)
    }
  })

  it('an existing folder without a library is refused too, and left as it was', async () => {
    const empty = path.join(root, 'empty')
    await mkdir(empty)
    expectRefused(await cli(['search', 'kestrel', '--data', empty, '--models', models]), empty, /holds no Docent library/)
    expect(await readdir(empty)).toEqual([])
  })

  it('without --data, the app folder must hold a library too; the message says where it looked', async () => {
    const home = path.join(root, 'home')
    const r = await cli(['collections'], { DOCENT_HOME: home })
    expectRefused(r, path.join(home, 'index'), /does not exist/)
    expect(r.stderr).toMatch(/DOCENT_HOME/)
    expect(existsSync(home)).toBe(false)
  })

  it('a read-only mcp server on the app folder still starts before anything was imported (an MCP client starts it first)', async () => {
    const home = path.join(root, 'mcp-home')
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', CLI, 'mcp', '--models', models],
      cwd: repoRoot,
      env: { ...process.env, DOCENT_HOME: home } as Record<string, string>,
      stderr: 'pipe',
    })
    const client = new Client({ name: 'docent-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const r = await client.callTool({ name: 'list_collections', arguments: {} })
      expect(r.structuredContent).toEqual({ collections: [] })
    } finally {
      await client.close()
    }
  })

  it('ingest creates the folder, and then the read commands work on it', async () => {
    const fresh = path.join(root, 'new-index')
    const ingest = await cli(['ingest', docs, '--collection', 'birds', '--data', fresh, '--models', models, '--json'])
    expect(ingest.code, ingest.stderr).toBe(0)
    expect(JSON.parse(ingest.stdout)).toMatchObject({ collection: 'birds', imported: 1 })
    const search = await cli(['search', 'hovers', '--mode', 'keyword', '--data', fresh, '--models', models, '--json'])
    expect(search.code, search.stderr).toBe(0)
    expect((JSON.parse(search.stdout) as { results: { path: string }[] }).results.map((r) => r.path)).toEqual(['kestrel.md'])
  })
})
