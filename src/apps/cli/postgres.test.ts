import { execFile, spawn } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { repoRoot, tempDir } from '../../test-support/paths'
import { freshDatabase, pgSkipReason, readOnlyRole } from '../../test-support/pg-test'
import { Engine } from '../../engine/engine'

/**
 * The CLI and `docent mcp` on a team library on a real PostgreSQL server: an importer with the
 * owner's URL, then an MCP server on a SELECT-only role (no --allow-writes), which must open,
 * list, search and answer without trying to migrate or write, and never print a password.
 */

const run = promisify(execFile)
const CLI = ['--import', 'tsx', path.join(repoRoot, 'src/apps/cli/main.ts')]
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c()
})

/** A temporary folder with one Markdown file, and an empty models folder beside it. */
async function birdsFolder(prefix: string): Promise<{ docs: string; models: string }> {
  const t = await tempDir(prefix)
  cleanups.push(t.cleanup)
  const docs = path.join(t.dir, 'docs')
  await mkdir(docs)
  await writeFile(path.join(docs, 'kestrel.md'), '# Kestrel\n\nThe kestrel hovers before it stoops.\n')
  return { docs, models: path.join(t.dir, 'none') }
}

describe.skipIf(pgSkipReason)('docent on a PostgreSQL server', () => {
  it('imports with --database, then serves MCP to a read-only role', async () => {
    const { docs, models } = await birdsFolder('docent-cli-pg-')
    const url = await freshDatabase()

    const ingest = await run(
      process.execPath,
      [...CLI, 'ingest', docs, '--collection', 'birds', '--database', url, '--models', models, '--json'],
      {
        cwd: repoRoot,
      },
    )
    expect(JSON.parse(ingest.stdout)).toMatchObject({ collection: 'birds', imported: 1 })
    // DOCENT_DATABASE_URL works as --database does.
    const search = await run(process.execPath, [...CLI, 'search', 'hovers', '--mode', 'keyword', '--json'], {
      cwd: repoRoot,
      env: { ...process.env, DOCENT_DATABASE_URL: url },
    })
    expect((JSON.parse(search.stdout) as { results: { path: string }[] }).results.map((r) => r.path)).toEqual(['kestrel.md'])

    const { password, url: reader, role } = await readOnlyRole(url, 'mcp')
    // A reader sees the collections it was granted (row-level security, ADR 0011).
    const granted = await run(process.execPath, [...CLI, 'access', 'grant', role, 'birds', '--database', url], { cwd: repoRoot })
    expect(granted.stdout).toMatch(new RegExp(`^${role} may now read "birds"`))

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...CLI, 'mcp', '--database', reader, '--models', models],
      cwd: repoRoot,
      stderr: 'pipe',
    })
    let stderr = ''
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    const client = new Client({ name: 'docent-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const list = await client.callTool({ name: 'list_collections', arguments: {} })
      expect(list.structuredContent).toMatchObject({ collections: [{ id: 'birds', documents: 1 }] })
      const hits = await client.callTool({ name: 'search_docs', arguments: { query: 'kestrel hovers', mode: 'keyword' } })
      expect(hits.isError).toBeFalsy()
      expect(JSON.stringify(hits.structuredContent)).toContain('kestrel.md')
      const answer = await client.callTool({ name: 'ask', arguments: { question: 'What does the kestrel do before it stoops?' } })
      expect(answer.isError).toBeFalsy()
      expect(JSON.stringify(answer.structuredContent)).toContain('kestrel.md')
    } finally {
      await client.close()
    }
    expect(stderr).toMatch(/read-only/)
    expect(stderr).toContain(':***@')
    expect(stderr).not.toContain(password)
  })

  it('docent watch --database keeps a collection on the server in step with its folder', async () => {
    const { docs, models } = await birdsFolder('docent-watch-pg-')
    const url = await freshDatabase()
    await run(process.execPath, [...CLI, 'ingest', docs, '--collection', 'birds', '--database', url, '--models', models], {
      cwd: repoRoot,
    })
    const child = spawn(process.execPath, [...CLI, 'watch', '--database', url, '--models', models], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    const seen = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => (re.test(out) ? resolve() : undefined)
        child.stdout.on('data', (d: Buffer) => ((out += d.toString()), check()))
        child.stderr.on('data', (d: Buffer) => ((out += d.toString()), check()))
        child.once('exit', (code) => reject(new Error(`docent watch exited (${code}): ${out}`)))
        check()
      })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      await seen(/Watching "birds"/)
      await writeFile(path.join(docs, 'falcon.md'), '# Falcon\n\nThe falcon stoops at great speed.\n')
      await seen(/1 added/)
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
    const engine = await Engine.open({ database: url, modelsDir: models })
    try {
      const hits = await engine.search('falcon stoops', { mode: 'keyword', k: 3 })
      expect(hits.results.map((h) => h.path)).toContain('falcon.md')
    } finally {
      await engine.close()
    }
  })
})
